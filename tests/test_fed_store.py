"""tests/support/fed_store.py: stores fed from one list's records, placed once, are the
stores the events would make one by one, and feeding them leaves the records as they were
(so they can be shared)."""

from __future__ import annotations

import fed_store
import msgspec
import synthetic_session as syn

from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.timeline import Timeline


def one_by_one(events, *extra, drop=frozenset()) -> SessionStore:
    store, line = SessionStore(), Timeline()
    for ev in [*events, *extra]:
        if not (ev["type"] == "build" and ev.get("level") in drop):
            store.handle(line.place(of(ev)))
    return store


def picture(store: SessionStore) -> dict:
    """What a store holds that the views read: results, builds, messages and times."""
    return {"results": msgspec.to_builtins(store.results),
            "builds": {str(k): msgspec.to_builtins(v) for k, v in store.builds.items()},
            "messages": [str(m) for m in store.messages], "last_t": store.last_t_s,
            "restarts": store.restarts, "events": store.event_count}


def build(t: float, level: str) -> dict:
    return {"type": "build", "t": t, "id": f"{level}-build", "level": level,
            "variant": "plain", "code_key": f"{level[:4]:<16}"}


def restarted_events() -> list[dict]:
    """A session with two builds whose runner restarted: the second header's events are
    moved on from the latest before it, one of the builds."""
    first = syn.with_pairs()
    last = max(e["t"] for e in first)
    return [*first, build(last + 1.0, "naive"), build(last + 2.0, "coalesced"),
            *syn.with_pairs()]


def test_a_store_fed_shared_records_is_the_store_fed_one_by_one():
    events = restarted_events()
    extra = [dict(e, t=e["t"] + 0.5) for e in syn.with_pairs()[1:6]]
    assert picture(fed_store.fed(events, *extra)) == picture(one_by_one(events, *extra))
    assert picture(fed_store.fed(events)) == picture(one_by_one(events))
    dropped = fed_store.fed(events, drop_builds=frozenset({"coalesced"}))
    assert picture(dropped) == picture(one_by_one(events, drop=frozenset({"coalesced"})))
    assert [k[0] for k in dropped.builds] == ["naive"]
    # the dropped build was the latest event before the restart: the times after it differ
    assert dropped.last_t_s == fed_store.fed(events).last_t_s - 1.0


def test_feeding_stores_leaves_the_shared_records_and_timeline_as_they_were():
    events = restarted_events()
    records, line = fed_store.placed(events)
    before = [msgspec.json.encode(r) for r in records]
    state = (line.offset_s, line.last_s, line.restarts)
    fed_store.fed(events, *syn.with_pairs()[1:4])
    fed_store.fed(events)
    again, line_again = fed_store.placed(events)
    assert again is records and line_again is line
    assert [msgspec.json.encode(r) for r in records] == before
    assert (line.offset_s, line.last_s, line.restarts) == state
    assert line.restarts == 1  # the second header was a restart


def test_another_list_with_the_same_events_is_placed_on_its_own():
    events = syn.with_pairs()
    records, _ = fed_store.placed(events)
    copy = list(events)
    other, _ = fed_store.placed(copy)
    assert other is not records and len(other) == len(records)

"""A SessionStore fed a recording's events as the app places them, each long list of
events converted and placed once.

The view tests feed the bundled recording (about 265,000 events) into a fresh store dozens
of times; converting each event to its record and placing it on the time axis took about
2.5 of every call's 4 s. The placed records are kept here, keyed by the list they came
from (which is kept too, so its id is not reused), and given to every store fed from that
list: a store only reads its records (tests/test_fed_store.py checks that feeding leaves
them as they were). Events added after the list are placed on a copy of the list's
timeline, as if they had followed it in the file.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.protocol.decoding import EventRecord, of
from gemmscope.kernels.protocol.timeline import Timeline

KEPT = 2  # lists whose records are kept (a test module has one or two)
_placed: OrderedDict[tuple[int, frozenset[str]],
                     tuple[list[dict[str, Any]], list[EventRecord], Timeline]] = OrderedDict()


def placed(events: list[dict[str, Any]], drop_builds: frozenset[str] = frozenset()
           ) -> tuple[list[EventRecord], Timeline]:
    """The records of ``events`` placed on one timeline (without the builds of the levels in
    ``drop_builds``, left out before placing, as if the file had not held them), and the
    timeline after them. The same list gives the same records: do not change either."""
    key = (id(events), drop_builds)
    hit = _placed.get(key)
    if hit is None or hit[0] is not events:
        line = Timeline()
        records = [line.place(of(ev)) for ev in events
                   if not (ev["type"] == "build" and ev.get("level") in drop_builds)]
        hit = _placed[key] = (events, records, line)
        while len(_placed) > KEPT:
            _placed.popitem(last=False)
    _placed.move_to_end(key)
    return hit[1], hit[2]


def fed(events: list[dict[str, Any]], *extra: dict[str, Any],
        drop_builds: frozenset[str] = frozenset()) -> SessionStore:
    """A new store fed ``events`` (see ``placed``), then ``extra`` after them."""
    records, line = placed(events, frozenset(drop_builds))
    store = SessionStore()
    for record in records:
        store.handle(record)
    if extra:
        line = copy.copy(line)
        for ev in extra:
            store.handle(line.place(of(ev)))
    return store

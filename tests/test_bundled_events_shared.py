"""The bundled recording's events read once per test process (tests/support/
synthetic_session.py, ``file_events``): equal to a fresh reading, shared frozen so that no
test can change what another reads, the list the caller's own; other files read anew."""

from __future__ import annotations

import json

import places
import pytest
import synthetic_session as syn

BUNDLED = places.SESSIONS / "h200x2-ladder.jsonl.gz"  # the smaller bundled recording


def test_a_bundled_recording_is_read_once_and_equals_a_fresh_reading():
    first, again = syn.file_events(BUNDLED), syn.file_events(BUNDLED)
    assert first is not again and all(a is b for a, b in zip(first, again, strict=True))
    assert first == syn._read_events(BUNDLED)
    assert json.loads(json.dumps(first[0])) == first[0]


def test_no_test_can_change_a_shared_event():
    events = syn.file_events(BUNDLED)
    event = next(e for e in events if isinstance(e.get("catalog"), list))
    for change in (lambda: event.__setitem__("type", "x"), lambda: event.pop("type"),
                   lambda: event.update(t=0), lambda: event["catalog"].append({}),
                   lambda: event["catalog"].sort()):
        with pytest.raises(TypeError, match="copy it"):
            change()
    copy = {**event, "type": "changed"}
    events.append(copy)  # the list is the caller's own
    assert syn.file_events(BUNDLED)[-1] is not copy and event["type"] != "changed"


def test_a_file_outside_the_bundled_folder_is_read_anew(synthetic_file):
    first = syn.file_events(synthetic_file)
    first[0]["type"] = "changed"
    assert syn.file_events(synthetic_file)[0]["type"] != "changed"

"""A recording whose every text from outside carries markup, terminal escapes and bidi
overrides, and the oracles that tell whether a sink showed it as text.

``poisoned_events`` takes the synthetic session and appends ``TAIL`` to every level id
(consistently: catalog, levels, results, references), device name, power kind, clock
reason, message, title, kernel name, host and worker. A sink shows it as text when what
a reader sees still holds the markup literally (``MARKUP``), never the word alone."""

from __future__ import annotations

import copy
from typing import Any

import synthetic_session

MARKUP = '<b style="font-size:40pt;color:red">INJECTED</b><img src="x.png">'
WORD = "INJECTED"
TERMINAL = "\x1b]0;owned\x07\x1b[2J\r\u202e"  # title, clear screen, CR, bidi override
MD = "](http://evil.example) ![x](http://evil.example/p.png) | # "
TAIL = MARKUP

ID_KEYS = ("level", "reference", "id")
TEXT_KEYS = ("name", "power_kind", "message", "title", "adds", "kernel", "host", "worker",
             "note", "reason", "no_gpu_reason", "tool")
LIST_KEYS = ("reasons", "throttled")


def _ids(header: dict[str, Any]) -> set[str]:
    ids = set(header.get("levels") or {})
    ids |= {e["id"] for e in header.get("catalog") or [] if isinstance(e, dict)}
    return ids


def poison(events: list[dict[str, Any]], tail: str = TAIL) -> list[dict[str, Any]]:
    """``events`` with ``tail`` appended to every outside text (see the module doc)."""
    events = copy.deepcopy(events)
    ids = _ids(events[0])

    def fix(value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {(k + tail if key == "levels" and k in ids else k): fix(v, k)
                    for k, v in value.items()}
        if isinstance(value, list):
            if key in LIST_KEYS:
                return [v + tail if isinstance(v, str) else v for v in value]
            return [fix(v, key) for v in value]
        if isinstance(value, str):
            if key in ID_KEYS and value in ids:
                return value + tail
            if key in TEXT_KEYS:
                return value + tail
        return value

    out = [fix(ev) for ev in events]
    for ev in out:  # the run ids too: they name runs in messages
        if ev.get("type") in ("run_start", "repeat", "result", "done", "error", "phase"):
            ev["id"] = str(ev.get("id", "")) + tail
    return out


def poisoned_events(tail: str = TAIL) -> list[dict[str, Any]]:
    evs = synthetic_session.with_counters()
    evs += [{"type": "info", "t": evs[-1]["t"] + 1, "message": "a note"}]
    return poison(evs, tail)

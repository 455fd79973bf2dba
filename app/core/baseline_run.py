"""A baseline recording beside the session shown (File ▸ Open baseline…, ``replay A
--baseline B``): its results in a store of their own, what it says of its run, and the
warning naming what differs from the session's run (kernels/results/baseline.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...kernels.results import baseline as bl
from .store import SessionStore

# what the baseline's store takes of a recording: no telemetry (its power limit and clocks
# are in the facts), so a long recording costs the GUI thread little
KEPT = frozenset({"session", "result", "counters", "ceilings", "build", "device"})


@dataclass(frozen=True, slots=True)
class BaselineRun:
    path: str
    store: SessionStore
    facts: bl.RunFacts


def baseline_of(path: str, header: dict[str, Any], events: Iterable[dict[str, Any]]
                ) -> BaselineRun:
    events = list(events)
    store = SessionStore()
    for ev in events:
        if ev["type"] in KEPT:
            store.handle(ev)
    return BaselineRun(path, store, bl.run_facts(header, events))


def store_facts(store: SessionStore) -> bl.RunFacts:
    """The facts of the session a store holds (results, builds and the latest power limit
    stand for the events it does not keep)."""
    evs: list[dict[str, Any]] = [{"type": "result", "sm_clock_mhz_avg": r.sm_clock_mhz_avg}
                                 for r in store.results]
    limit = store.power_limit_w()
    if limit is not None:
        evs.append({"type": "telemetry", "power_limit_w": limit})
    evs += list(store.builds.values())
    return bl.run_facts(store.header or {}, evs)


def baseline_warning(store: SessionStore, base: BaselineRun) -> str | None:
    return bl.warning(store_facts(store), base.facts)

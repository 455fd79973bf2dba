"""A baseline recording beside the session shown (File ▸ Open baseline…, ``replay A
--baseline B``): its results in a store of their own, what it says of its run, and the
warning naming what differs from the session's run (kernels/results/baseline.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...kernels.protocol import records as rec
from ...kernels.results import baseline as bl
from .store import Item, SessionStore

# what the baseline's store takes of a recording: no telemetry (its power limit and clocks
# are in the facts), so a long recording costs the GUI thread little
KEPT = (rec.Session, rec.Result, rec.Counters, rec.Ceilings, rec.Build, rec.Joined)


@dataclass(frozen=True, slots=True)
class BaselineRun:
    path: str
    store: SessionStore
    facts: bl.RunFacts


def baseline_of(path: str, header: rec.Session, events: Sequence[Item]) -> BaselineRun:
    """A recording read whole (kernels/protocol/recording.py) as a baseline."""
    store = SessionStore()
    for ev in events:
        if isinstance(ev, KEPT):
            store.handle(ev)
    return BaselineRun(path, store, bl.run_facts(header, events))


def store_facts(store: SessionStore) -> bl.RunFacts:
    """The facts of the session a store holds (results, builds and the latest power limit
    stand for the events it does not keep)."""
    return bl.facts_of(store.header,
                       [r.sm_clock_mhz_avg for r in store.results
                        if r.sm_clock_mhz_avg is not None],
                       store.power_limit_w(),
                       [b.compiler for b in store.builds.values() if b.compiler is not None])


def baseline_warning(store: SessionStore, base: BaselineRun) -> str | None:
    return bl.warning(store_facts(store), base.facts)


def baseline_device(base: SessionStore, gpu: str | None) -> int:
    """The baseline's GPU of the same name as the session's, else its first."""
    for d in base.devices:
        if d.name == gpu:
            return d.id
    return 0


def baseline_result(store: SessionStore, level_id: str) -> Any:
    """The baseline's result (a Result) of the level at the shape, mode and GPU shown,
    or None."""
    base = store.baseline
    if base is None:
        return None
    return base.store.result_at(level_id, store.ladder_shape(), store.mode,
                                baseline_device(base.store, store.device_name()))


def baseline_text(store: SessionStore, level_id: str) -> str | None:
    """The baseline's result of the level at the shape, mode and GPU shown, and this
    session's change against it ("baseline b.jsonl: 46.7 TFLOPS; this session +3.2%"),
    or None without a baseline; says so where the baseline has no such result."""
    base = store.baseline
    if base is None:
        return None
    name = Path(base.path).name
    r = baseline_result(store, level_id)
    if r is None:
        return f"baseline {name}: no result at this shape and mode"
    text = f"baseline {name}: {r.tflops:.4g} TFLOPS"
    now = store.ladder_result(level_id)
    if now is not None and r.tflops > 0:
        text += f"; this session {100 * (now.tflops / r.tflops - 1):+.1f}%"
    for label, a, b in (("SM clock", now.sm_clock_mhz_avg if now else None,
                         r.sm_clock_mhz_avg),
                        ("power", now.avg_power_w if now else None, r.avg_power_w),
                        ("registers", now.regs if now else None, r.regs)):
        if a is not None and b is not None and a != b:
            text += f"; {label} {a:.4g} vs {b:.4g}"
    return text

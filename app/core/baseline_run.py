"""A baseline recording beside the session shown (File ▸ Open baseline…, ``replay A
--baseline B``): its results in a store of their own, what it says of its run, and the
warning naming what differs from the session's run (kernels/results/baseline.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...kernels import protocol as rec
from ...kernels import results as bl
from ...kernels.results import newest
from .store import Item, SessionStore

# what the baseline's store takes of a recording: no telemetry (its power limit and clocks
# are in the facts), so a long recording costs the GUI thread little; a later header
# (read as a Restart: what `record --update` appends) describes its changed levels anew
KEPT = (rec.Session, rec.Restart, rec.Result, rec.Counters, rec.Ceilings, rec.Build,
        rec.Joined)


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


PREVIOUS = "previous results"  # the name of the baseline that :func:`previous_of` makes


def previous_of(store: SessionStore) -> BaselineRun | None:
    """The session's own older results as its baseline (File ▸ Previous results as
    baseline): of each run measured again in the recording (``record --update``,
    ``--append``), the result before its newest, so the baseline view shows "before /
    after" within one file; None where no run was measured again. The store keeps one
    build per level, variant and parameters (the newest), so the older code's instruction
    mix is not compared."""
    if store.header is None:
        return None
    shown = {id(r) for r in newest(store.results)}
    older = [r for r in store.results if id(r) not in shown]
    if not older:
        return None
    base = SessionStore()
    base.handle(store.header)
    for r in older:
        base.handle(r)
    facts = bl.facts_of(store.header,
                        [r.sm_clock_mhz_avg for r in older if r.sm_clock_mhz_avg is not None],
                        store.power_limit_w(), [r.compiler for r in older if r.compiler])
    return BaselineRun(PREVIOUS, base, facts)


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


def baseline_device(base: SessionStore, gpu: str | None, index: int | None = None) -> int:
    """The baseline's GPU of the same name and index as the session's GPU shown, else
    its first of that name, else its first (two H200s: GPU 1 against GPU 1, not GPU 0)."""
    same = [d.id for d in base.devices if d.name == gpu]
    if index in same:
        return int(index)
    return same[0] if same else 0


def baseline_result(store: SessionStore, level_id: str) -> Any:
    """The baseline's result (a Result) of the level at the shape, mode and GPU shown,
    or None."""
    base = store.baseline
    if base is None:
        return None
    return base.store.result_at(level_id, store.ladder_shape(), store.mode,
                                baseline_device(base.store, store.device_name(),
                                                store.device))


def baseline_pair(store: SessionStore, level_id: str) -> bl.Pair | None:
    """The level's result at the shape, mode and GPU shown beside the baseline's, with
    both builds' instruction mix; None without a baseline."""
    base = store.baseline
    if base is None:
        return None
    run, other = store.ladder_result(level_id), baseline_result(store, level_id)
    shape = store.ladder_shape()
    M, N, K = (shape.M, shape.N, shape.K) if shape is not None else (0, 0, 0)
    return bl.Pair((level_id, M, N, K, store.mode, store.device_name() or "no GPU"),
                   run, other,
                   bl.mix_of(store.build_for(level_id)) if run is not None else None,
                   bl.mix_of(base.store.build_for(level_id)) if other is not None else None)


def baseline_cell(store: SessionStore, level_id: str) -> str:
    """The ladder table's baseline cell: the baseline's TFLOPS and this run's change
    ("45.2 (+3.3%)"), a dash where the baseline has no result at this shape and mode."""
    pair = baseline_pair(store, level_id)
    if pair is None or pair.base is None:
        return "–"
    text = f"{pair.base.tflops:.4g}"
    change = pair.change("tflops")
    if change is None:
        return text
    pct = round(100 * change, 1) + 0.0  # a change that rounds to nothing is +0.0%, not -0.0%
    return text + f" ({pct:+.1f}%)"


def baseline_details(store: SessionStore, level_id: str) -> list[str]:
    """Every compared value of the level, this run / the baseline, one line each, and what
    differs between the two runs (for a tooltip); empty without a baseline."""
    from ...kernels.results import BASELINE_COLUMNS as COLUMNS
    from ...kernels.results import MIX_TITLE
    from ...kernels.results import baseline_cell as cell

    pair = baseline_pair(store, level_id)
    base = store.baseline
    if pair is None or base is None:
        return []
    lines = [f"this session / baseline {Path(base.path).name}:"]
    lines += [f"{title}: {cell(pair, f, fmt, rel)}" for title, f, fmt, rel in COLUMNS]
    lines.append(f"{MIX_TITLE.replace(' run / base', '')}: "
                 f"{bl.mix_text(pair.run_mix, pair.base_mix)}")
    said = baseline_warning(store, base)
    lines.append(f"warning: {said}" if said else "the two runs match in GPU, driver, CUDA, "
                 "clocks, power limit, compiler and code")
    return lines


def baseline_text(store: SessionStore, level_id: str) -> str | None:
    """The baseline's result of the level at the shape, mode and GPU shown, and this
    session's change against it ("baseline b.jsonl: 46.7 TFLOPS; this session +3.2%"),
    or None without a baseline; says so where the baseline has no such result."""
    base = store.baseline
    if base is None:
        return None
    name = Path(base.path).name
    if len(base.store.device_ids()) > 1:  # which of its GPUs this compares against
        device = baseline_device(base.store, store.device_name(), store.device)
        name += f" (its GPU {device} of {len(base.store.device_ids())})"
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

"""A measured trace held against its level's model (issue 46 item 5): a persistent level's
blocks each run on an SM of their own and compute the tiles the schedule gives them, in
its order; a stream-K level's cut tiles are handed on and finished by the blocks the
schedule names. Each check returns what disagrees, in words (empty: the trace agrees)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from ..protocol.trace_kinds import TraceKind
from .trace_schedule import TraceSchedule

if TYPE_CHECKING:  # the record's type only: the runner imports every model, never msgspec
    from ..protocol.trace_records import Trace

MAX_PROBLEMS = 12  # said in full; the rest counted


def tiles_by_block(trace: Trace, lane: int) -> dict[int, list[tuple[int, int]]]:
    """block -> (tile, first K step) of each piece its ``lane`` began, in time order."""
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    ev = trace.events
    for i in range(len(ev)):
        if ev.lane[i] == lane and trace.kind_of(ev.kind[i]) is TraceKind.TILE_BEGIN:
            out[ev.block[i]].append((ev.tile[i], ev.k[i]))
    return dict(out)


def blocks_per_sm(trace: Trace) -> Counter[int]:
    """How many blocks each SM ran (SMs that ran none are absent)."""
    return Counter(sm for sm in trace.block_sm if sm >= 0)


def check_persistent(trace: Trace, model: TraceSchedule) -> list[str]:
    """One block per SM, as many blocks as the model launches, and each block's pieces
    (tile and first K step, in order, for every consumer lane) the model's."""
    problems: list[str] = []
    if not model.persistent:
        return [f"{model.level} is not persistent: its blocks per SM are the hardware's"]
    seen = [b for b, sm in enumerate(trace.block_sm) if sm >= 0]
    if len(seen) != model.grid:
        problems.append(f"{len(seen)} blocks recorded, the model launches {model.grid}")
    crowded = {sm: n for sm, n in blocks_per_sm(trace).items() if n > 1}
    if crowded:
        problems.append(f"SMs running more than one block: {dict(sorted(crowded.items()))}")
    for lane in model.consumer_lanes:
        ran = tiles_by_block(trace, lane)
        for b in range(model.grid):
            want, got = model.tiles_of(b), ran.get(b, [])
            if got != want:
                problems.append(f"block {b} lane {lane}: ran {_short(got)}, "
                                f"the model says {_short(want)}")
    return _bounded(problems)


def check_stream_k(trace: Trace, model: TraceSchedule) -> list[str]:
    """Every cut piece is handed on or gathered by the block the model gives it, and each
    cut tile is finished by the block holding its K step 0 (every consumer lane)."""
    if not model.stream_k:
        return [f"{model.level} has no stream-K pieces"]
    problems: list[str] = []
    want_cut, want_fin = model.cut_pieces(), model.finishers()
    ev = trace.events
    for lane in model.consumer_lanes:
        cut: set[tuple[int, int, int]] = set()
        fin: dict[int, int] = {}
        for i in range(len(ev)):
            if ev.lane[i] != lane:
                continue
            kind = trace.kind_of(ev.kind[i])
            if kind is TraceKind.FIXUP_BEGIN:
                cut.add((ev.block[i], ev.tile[i], ev.k[i]))
            elif kind is TraceKind.FIXUP_DONE:
                fin[ev.tile[i]] = ev.block[i]
        for b, t, k0 in sorted(cut - want_cut):
            problems.append(f"lane {lane}: block {b} cut tile {t} at K step {k0}, "
                            "which the model does not")
        for b, t, k0 in sorted(want_cut - cut):
            problems.append(f"lane {lane}: the model cuts tile {t} at K step {k0} on block "
                            f"{b}, the trace does not")
        for t in sorted(set(fin) | set(want_fin)):
            if fin.get(t) != want_fin.get(t):
                problems.append(f"lane {lane}: tile {t} finished by block {fin.get(t)}, "
                                f"the model says {want_fin.get(t)}")
    return _bounded(problems)


def _short(pieces: list[tuple[int, int]]) -> str:
    text = ", ".join(f"{t}" if k0 == 0 else f"{t}@{k0}" for t, k0 in pieces[:8])
    return f"[{text}{', ...' if len(pieces) > 8 else ''}]"


def _bounded(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return [*problems[:MAX_PROBLEMS], f"and {len(problems) - MAX_PROBLEMS} more"]

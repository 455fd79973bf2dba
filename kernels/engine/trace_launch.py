"""A level's measured timeline (issue 46): its trace build launched once into a buffer
sized before the launch, read back and decoded into a ``trace`` event, with its cost
against the plain build measured in alternating pairs.

    python -m gemmscope.kernels.engine.trace_launch LEVEL M N K [--pairs 20] [--every N]
        [--param NAME=V ...] [--out F]

prints the event's summary (and writes the event as one JSON line to F); ``--param``
traces a form of the level other than the registry's (fp8_deep with CL=2: its 2-CTA
clusters), its parameters checked as the level checks them. The runner's
``trace`` command calls :func:`trace_event`.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..device.gpu import NoGPU, require_cupy
from ..ladder import registry
from ..ladder.level import Level
from ..models.trace_schedule import TraceSchedule, schedule
from ..protocol import events, trace_buffer
from ..protocol.commands import MAX_DIM, TRACE_PAIRS
from ..protocol.option_bounds import OneLineParser, bounded, param_assignment
from ..protocol.trace_kinds import (
    MAX_TRACE_EVENTS,
    SAMPLE_WINDOW,
    STAGE_EVERY,
    leaves_steps_out,
    sampled_steps,
)
from ..toolchain import nvrtc
from .measure import level_launcher
from .operands import check, random_inputs

# the most device memory a trace buffer takes; a bigger want is cut per lane, and the
# lanes that run out of slots are said (``full_lanes``)
MAX_BUFFER_BYTES = 1 << 30
GLOBAL_BYTES = 40  # trace.cuh's GsTrace: 3 pointers, 4 unsigned


class NotTraceable(ValueError):
    """The level has no trace build (its source marks no GS_TRACE_LANE)."""


def lane_capacity(s: TraceSchedule, every: int = 1) -> int:
    """Records one lane may need: its start and end, and per piece of its busiest block
    the tile's begin and end, three per K step it records (a SIMT lane's load, ready and
    done; mma_tma's wait begun, ready and done; ``every``: the sampling,
    trace_kinds.STAGE_EVERY), a fix-up's two."""
    per_step = 3 if s.staged else 0  # naive, coalesced: no K-stage events
    per_block = (sum(4 + per_step * sampled_steps(k0, k1, every) for _, k0, k1 in pieces)
                 for pieces in s.pieces)
    return 2 + max(per_block, default=0)


def stage_events(s: TraceSchedule, every: int) -> int:
    """At most how many K-stage events a launch records when sampling ``every``: per K
    step a SIMT lane writes three, a consumer two or three (mma_tma's wait begun), a
    K-stage observer two for the block and the producer one; a level that stages no K
    tiles none."""
    if not s.staged:
        return 0
    steps = sum(sampled_steps(k0, k1, every) for pieces in s.pieces for _, k0, k1 in pieces)
    if not s.producer:
        return 3 * steps
    return ((2 if s.observer else 3 * len(s.consumer_lanes)) + 1) * steps


# Where its tiles have as many K steps, the least sampling for a level whose K steps are so
# short that a denser one costs clearly more (until stretch 22, only where a shape had to
# sample anyway; fp8_deep's observer then fitted every step of 4096³ in one event):
# fp8_deep's (128-deep FP8) are the shortest of the ladder. Measured on the H200 at 4096³
# (docs/perf-notes.md, "fp8_deep's trace: the parts of its cost"): 3 of every 16
# +6.1..+6.4%, of every 32 +5.4%, of every 64 +4.8..+5.1%; every 64 keeps only each tile's
# first K step at that shape, every 16 a window in its middle and one at its end too, which
# the Timeline's phases need. With its K-stage observer (stretch 22, 40 pairs): every 16
# +2.6 / +2.8%, every 4 +5.6%, every step +6.8%, so 16 stays its least. The others at 32
# (stretch 15, 4096³, 30 pairs): fp8_block_scaled +7.2 / +5.4 / +4.6% at every 8 / 16 / 32,
# fp8_stream_k +7.3 / +5.2 / +4.8%, mma_sync +10.6 / +9.3 / +8.6%, wmma +8.5 / +7.1% at 16
# / 32, and mma_persistent (its body split, nvrtc.split_regions, so that only the steps
# next to a sampled one run the records' copy) +9.6 / +6.7 / +5.0%: at that shape each tile
# still has a window at its end and its first step. smem_tiled at 128 (stretch 17, its
# steps run as a loop of their own between kept ones): +5.2% at 64, +4.4% at 128 (4096^3,
# 40 pairs, two rounds each); 3 of 64 steps cost it more than the unsampled ones, and it
# has 128 steps a block at that shape, so each block keeps its first step and a window at
# its end. mma_persistent at 64 (stretch 23, an H100, 4096³, 40 pairs, two rounds): +4.85 /
# +4.96% at 32, +4.15 / +4.04% at 64; with its 64 K steps a tile at that shape, 64 keeps
# k = 62, 63, 0 (each tile's last window and its first step), 32 the middle window too.
LEAST_SAMPLING = {"fp8_deep": 16, "fp8_block_scaled": 32, "fp8_stream_k": 32, "mma_sync": 32,
                  "wmma": 32, "mma_persistent": 64, "smem_tiled": 128}


def auto_every(s: TraceSchedule, budget: int = MAX_TRACE_EVENTS) -> int:
    """The least sampling whose events fit one trace event's bound: a shape small enough
    keeps every K step; a big one records fewer, which its event could not have held
    anyway (the decoder would leave whole SMs' stage events out) and which costs the
    launch less time (issue 46 item 2), and at least the level's LEAST_SAMPLING where
    its tiles have as many K steps (fewer, and that sampling would keep only each tile's
    first step: such a shape keeps every step if its events fit)."""
    if not s.staged:  # no K-stage events to sample
        return 1
    other = sum(len(p) * 4 + 2 for p in s.pieces) * s.lanes_per_block
    every = next((e for e in STAGE_EVERY if other + stage_events(s, e) <= budget),
                 STAGE_EVERY[-1])
    least = LEAST_SAMPLING.get(s.level, 1)
    return every if every == 1 and s.ksteps < least else max(every, least)


def trace_event(level: Level, M: int, N: int, K: int, pairs: int = TRACE_PAIRS[0],
                every: int | None = None) -> dict[str, Any]:
    """The ``trace`` event of one launch of ``level``'s trace build at M x N x K (no ``t``:
    the runner stamps it), its K-stage events sampled ``every`` K steps (None: the least
    sampling the event's bound holds, :func:`auto_every`). Raises NotTraceable for a
    level without a trace build."""
    if every is not None and every not in STAGE_EVERY:
        raise ValueError(f"every must be one of {', '.join(map(str, STAGE_EVERY))}, "
                         f"not {every!r}")
    if not nvrtc.traceable(level):
        raise NotTraceable(f"{level.id} has no trace build (its source marks no lanes; "
                           "kernels/cuda/trace.cuh says how to add one)")
    cp = require_cupy()
    sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
    model = schedule(level, M, N, K, sms)
    every = auto_every(model) if every is None else every
    lanes = model.grid * model.lanes_per_block
    cap = max(1, min(lane_capacity(model, every),
                     MAX_BUFFER_BYTES // max(1, lanes * trace_buffer.RECORD_BYTES)))
    counts = cp.zeros(lanes, cp.uint32)
    recs = cp.zeros(lanes * cap * trace_buffer.RECORD_WORDS, cp.uint32)
    lost = cp.zeros(1, cp.uint32)

    def point(built: nvrtc.Compiled) -> None:
        ptr = built.module.get_global("gs_trace")
        words = np.zeros(GLOBAL_BYTES // 8, np.uint64)
        words[:3] = (counts.data.ptr, recs.data.ptr, lost.data.ptr)
        words[3:5] = np.array([lanes, cap, model.lanes_per_block, every - 1],
                              np.uint32).view(np.uint64)
        cp.ndarray((GLOBAL_BYTES // 8,), cp.uint64, ptr).set(words)

    ops = random_inputs(level, M, N, K)
    plain, plain_info = level_launcher(level, ops)
    traced, info = level_launcher(level, ops, trace=point)
    plain_ms, trace_ms, ratios = _paired(cp, plain, traced, pairs, l2_flusher(cp))
    ops.poison()
    counts.fill(0)
    lost.fill(0)
    traced()
    cp.cuda.runtime.deviceSynchronize()
    acc = check(ops)
    fields = trace_buffer.decode(cp.asnumpy(counts),
                                 cp.asnumpy(recs).reshape(lanes, cap, trace_buffer.RECORD_WORDS),
                                 int(cp.asnumpy(lost)[0]),
                                 lanes_per_block=model.lanes_per_block)
    return {"type": "trace", "level": level.id, "M": M, "N": N, "K": K,
            "params": info.get("params", dict(model.params)), "code_key": info["code_key"],
            "plain_code_key": plain_info["code_key"], "grid": model.grid,
            "lanes_per_block": model.lanes_per_block, "sm_count": sms, "tiles": model.tiles,
            "ksteps": model.ksteps, "stage_every": every, **fields,
            "verified": acc.verified(level.precision),
            "rel_err": acc.rel_err, "plain_ms": plain_ms, "trace_ms": trace_ms,
            "overhead_pct": (100 * (statistics.median(ratios) - 1)) if ratios else None,
            "pairs": len(ratios)}


def _paired(cp: Any, plain: Callable[[], None], traced: Callable[[], None], pairs: int,
            flush: Callable[[], None]) -> tuple[float | None, float | None, list[float]]:
    """Median ms of each build and the per-pair ratios trace / plain, after a warm-up of
    each: the two launched alternately (the power limiter meets both alike), plain first
    in even pairs and traced first in odd ones (an order effect cancels), each launch in
    its own event pair with L2 flushed before it, as the paired ratio's loop does
    (kernels/engine/paired.py). Without the flush the second launch of a pair read the
    operands the first had left in L2, and the trace builds of the BF16 levels read 5-8%
    faster than their plain builds (docs/perf-notes.md)."""
    if pairs == 0:
        return None, None, []
    for launch in (plain, traced, plain, traced):
        launch()
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def timed(launch: Callable[[], None]) -> float:
        flush()
        start.record()
        launch()
        end.record()
        end.synchronize()
        return float(cp.cuda.get_elapsed_time(start, end))

    a_ms, b_ms = [], []
    for i in range(pairs):
        if i % 2 == 0:
            a_ms.append(timed(plain))
            b_ms.append(timed(traced))
        else:
            b_ms.append(timed(traced))
            a_ms.append(timed(plain))
    ratios = [b / a for a, b in zip(a_ms, b_ms, strict=True) if a > 0]
    return statistics.median(a_ms), statistics.median(b_ms), ratios


def l2_flusher(cp: Any) -> Callable[[], None]:
    """Evicts L2: writes a buffer twice its size (measure.Bench.flush's rule)."""
    l2 = int(cp.cuda.Device().attributes.get("L2CacheSize", 0))
    buf = cp.empty(max(2 * l2, 1 << 20) // 4, cp.float32)
    return lambda: buf.fill(1.0)


class TraceStep:
    """The profiling step of ``record --trace`` (kernels/cli/main.py ProfileStep): each
    level's trace build launched once at one shape, its ``trace`` event recorded."""

    def __init__(self, level_ids: list[str], shape: tuple[int, int, int],
                 pairs: int = TRACE_PAIRS[0], every: int | None = None) -> None:
        self.level_ids, self.shape, self.pairs, self.every = level_ids, shape, pairs, every
        self.failed: list[str] = []
        self.lines: list[str] = []

    def check(self) -> None:
        for lid in self.level_ids:
            if lid not in registry.BY_ID:
                raise ValueError(f"--trace: unknown level {lid!r}")
            if not nvrtc.traceable(registry.BY_ID[lid]):
                raise ValueError(f"--trace: {lid} has no trace build; those with one: "
                                 f"{', '.join(traceable_ids())}")

    def __call__(self, now: Callable[[], float], emit: Callable[[dict[str, Any]], None]
                 ) -> None:
        M, N, K = self.shape
        for lid in self.level_ids:
            try:
                event = trace_event(registry.get(lid), M, N, K, self.pairs, self.every)
            except Exception as exc:  # one level's failure is said, the others still run
                self.failed.append(lid)
                emit({"type": "info", "t": now(), "message": f"trace {lid}: {exc}"[:500]})
                continue
            self.lines.append(summary(event))
            emit({**event, "t": now()})

    def summary(self) -> str:
        failed = f"; failed: {', '.join(self.failed)}" if self.failed else ""
        return "traces: " + ("; ".join(self.lines) or "none") + failed


def traceable_ids() -> list[str]:
    return [lv.id for lv in registry.ladder() if nvrtc.traceable(lv)]


def summary(event: dict[str, Any]) -> str:
    """One line of what a trace event holds."""
    over = event.get("overhead_pct")
    cost = f"{over:+.1f}% over plain" if over is not None else "cost not measured"
    full = f", {event['full_lanes']} lanes full" if event.get("full_lanes") else ""
    every = event.get("stage_every", 1)
    sampled = f", K steps sampled {SAMPLE_WINDOW} in {every}" if leaves_steps_out(every) else ""
    return (f"{event['level']} {event['M']}x{event['N']}x{event['K']}: "
            f"{len(event['events']['t_ns'])} events kept of {event['recorded']} "
            f"({event['wanted']} wanted{full}{sampled}), {event['grid']} blocks, "
            f"verified {event['verified']}, {cost}")


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m gemmscope.kernels.engine.trace_launch")
    ap.add_argument("level")
    for dim in ("M", "N", "K"):
        ap.add_argument(dim, type=bounded(int, 1, MAX_DIM))
    ap.add_argument("--pairs", type=bounded(int, 0, TRACE_PAIRS[1]), default=TRACE_PAIRS[0])
    ap.add_argument("--every", type=bounded(int, 1, STAGE_EVERY[-1]), choices=STAGE_EVERY,
                    default=None,
                    help="record the K-stage events of 3 in every N K steps (default: the "
                         "least sampling one event holds)")
    ap.add_argument("--param", action="append", default=[], type=param_assignment,
                    metavar="NAME=V", help="a template parameter other than the registry's")
    ap.add_argument("--out", default=None, help="write the event, one JSON line, here")
    args = ap.parse_args(argv)
    try:  # a level, a parameter or a GPU that is not there: one line, exit 2
        level = registry.get(args.level)
        if args.param:
            level = level.with_params(dict(args.param))
        event = trace_event(level, args.M, args.N, args.K, args.pairs, args.every)
    except (KeyError, ValueError, NoGPU) as exc:
        sys.stderr.write(f"{ap.prog}: {exc.args[0] if exc.args else exc}\n")
        return 2
    print(summary(event))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(events.dumps({"t": 0.0, **event}) + "\n")
    return 0 if event["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""What a level's model says a trace should show (issue 46): which pieces of which output
tiles each block computes, in order, and so which blocks cut a stream-K tile and which one
finishes it. The checks of a measured trace (:mod:`.trace_check`) hold it against this, and
:func:`synthetic_trace` makes a trace of it (timings invented, the schedule the model's)
for tests and for the app without a GPU. Pure numpy, no Qt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ladder.level import Level
from ..protocol import trace_buffer
from ..protocol.trace_kinds import TraceKind, stage_sampled
from .persistent import stream_k_pieces

Piece = tuple[int, int, int]  # (tile walk index, first K step, end K step)


@dataclass(frozen=True, slots=True)
class TraceSchedule:
    """The model's schedule of one launch: per block, its pieces in the order it runs them."""

    level: str
    M: int
    N: int
    K: int
    params: dict[str, int]
    grid: int  # blocks launched
    tiles: int
    ksteps: int
    lanes_per_block: int
    persistent: bool
    producer: bool  # a producer warpgroup (lane 0) feeds consumer lanes 1, 2, ...
    stream_k: int  # 0: whole tiles; 1, 2: hopper_schedule.cuh's SK
    stages: int
    pieces: tuple[tuple[Piece, ...], ...]
    # whether the level stages K tiles, so that its trace records K-stage events (a load
    # issued, data ready, products done); naive and coalesced walk K one element at a
    # time and record their blocks' begin and end only
    staged: bool = True
    # a K-stage observer (Level.trace_observer): the last lane records the block's K-stage
    # events (data ready, products done), the consumer lanes their tiles only
    observer: bool = False

    def cut_pieces(self) -> set[tuple[int, int, int]]:
        """(block, tile, k0) of every piece that is part of a tile cut between blocks."""
        return {(b, t, k0) for b, ps in enumerate(self.pieces) for t, k0, k1 in ps
                if k0 != 0 or k1 != self.ksteps}

    def finishers(self) -> dict[int, int]:
        """tile -> the block that finishes it (holds its K step 0), for each cut tile."""
        return {t: b for b, t, k0 in self.cut_pieces() if k0 == 0}

    def tiles_of(self, block: int) -> list[tuple[int, int]]:
        return [(t, k0) for t, k0, _ in self.pieces[block]]

    @property
    def consumer_lanes(self) -> range:
        """The lanes that compute (and record tiles): all but the producer's and an
        observer's."""
        if not self.producer:
            return range(0, 1)
        return range(1, self.lanes_per_block - self.observer)

    @property
    def stage_lanes(self) -> range:
        """The lanes that record K steps' data ready and products done: the observer's,
        else the consumers'."""
        if self.observer:
            return range(self.lanes_per_block - 1, self.lanes_per_block)
        return self.consumer_lanes


def schedule(level: Level, M: int, N: int, K: int, sm_count: int,
             params: dict[str, int] | None = None) -> TraceSchedule:
    """The schedule of ``level`` at M x N x K on a GPU of ``sm_count`` SMs: with the
    parameters a run had (``params``: a trace's own, which a recording keeps after the
    level has changed), else with those the level picks for the shape."""
    fitted = level.with_params(params) if params else level.for_shape(M, N, K, sm_count)
    p = dict(fitted.params)
    geometry = fitted.launch_geometry(p)
    rows, cols = geometry.tile
    tiles = -(-M // rows) * -(-N // cols)
    ksteps = -(-K // geometry.k_tile)
    gx, gy, gz = fitted.grid(M, N, sm_count)
    grid = gx * gy * gz
    threads = geometry.block[0] * geometry.block[1]
    sk = p.get(fitted.stream_k_param, 0) if fitted.stream_k_param else 0
    # a persistent level, or one launched with a block per SM that walks its tiles
    # (mma_persistent: tiles b, b + grid, ...)
    walks = fitted.persistent or fitted.sm_grid
    if walks:
        pieces = tuple(tuple(stream_k_pieces(b, grid, tiles, ksteps, sk)) for b in range(grid))
    else:  # one tile per block, its walk index the linear block index
        pieces = tuple(((b, 0, ksteps),) for b in range(grid))
    # the warp-specialized levels: every persistent sm_90a level (TMA fed by a producer)
    producer = fitted.persistent and fitted.arch == "sm_90a"
    observer = producer and fitted.trace_observer
    return TraceSchedule(fitted.id, M, N, K, p, grid, tiles, ksteps,
                         -(-threads // 128) + observer, walks, producer, sk,
                         p.get("STAGES", 1), pieces, geometry.k_tile > 1, observer)


@dataclass(frozen=True, slots=True)
class Pace:
    """The invented timings of a synthetic trace (ns)."""

    step_ns: float = 900.0  # one K step's products
    load_ns: float = 600.0  # a stage's copy, issue to data
    epilogue_ns: float = 1500.0
    fixup_ns: float = 1200.0
    jitter: float = 0.05
    blocks_per_sm: int = 1  # a non-persistent level's blocks resident per SM
    timer_step_ns: int = 32  # globaltimer's step
    ghz: float = 1.98  # clock64 per ns


def synthetic_trace(s: TraceSchedule, sm_count: int, pace: Pace = Pace(), seed: int = 0,
                    t: float = 0.0, detail_sms: int | None = None, stage_every: int = 1
                    ) -> dict[str, Any]:
    """A ``trace`` event of the schedule ``s``: each block's pieces in the model's order with
    invented timings, its SM picked as the hardware might (persistent: one block per SM in
    a shuffled order; otherwise the next free slot), written into a raw buffer as the trace
    build writes it and decoded by the runner's decoder. ``detail_sms``: K-stage events for
    the blocks of that many SMs only (said in ``stage_sms``), the others' time passing all
    the same (a big shape made quickly). ``stage_every``: the K-stage events of the sampled
    K steps only, as a trace build that samples them writes them (trace_kinds)."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list[int]] = {n: [] for n in ("block", "lane", "kind", "tile", "k", "sm")}
    times: list[float] = []

    def put(b: int, lane: int, kind: TraceKind, tile: int, k: int, sm: int, at: float) -> None:
        for name, v in zip(("block", "lane", "kind", "tile", "k", "sm"),
                           (b, lane, trace_buffer.kind_index(kind), tile, k, sm), strict=True):
            cols[name].append(v)
        times.append(at)

    def jit(x: float) -> float:
        return x * (1 + pace.jitter * float(rng.uniform(-1, 1)))

    consumers = s.consumer_lanes
    observer = s.stage_lanes[0]  # an observer's lane, where s.observer
    published: dict[int, float] = {}
    finish_at: dict[tuple[int, int], float] = {}
    sms = rng.permutation(sm_count)
    detailed = set(range(sm_count) if detail_sms is None else
                   (int(x) for x in sms[:detail_sms]))
    slots = [(0.0, int(sms[i % sm_count])) for i in range(sm_count * pace.blocks_per_sm)]
    for b, pieces in enumerate(s.pieces):
        if s.persistent:
            start, sm = float(rng.uniform(0, 800)), int(sms[b % sm_count])
        else:
            i = min(range(len(slots)), key=lambda j: slots[j][0])
            start, sm = slots[i][0] + float(rng.uniform(100, 300)), slots[i][1]
        end = start
        if s.producer:  # the producer: a K step's copy once its stage is free
            put(b, 0, TraceKind.LANE_START, -1, 0, sm, start)
        for lane in consumers:
            at = start + float(rng.uniform(0, 50))
            issued: list[float] = []
            done: list[float] = []
            if s.producer:
                put(b, lane, TraceKind.LANE_START, -1, 0, sm, at)
            steps_here = s.staged and sm in detailed  # this SM's K-stage events made
            for tile, k0, k1 in pieces:
                put(b, lane, TraceKind.TILE_BEGIN, tile, k0, sm, at)
                if not steps_here:  # time passes, no stage events
                    at += (k1 - k0) * jit(pace.step_ns) + pace.load_ns
                    done = [at] * s.stages
                    issued = [at]
                for ks in range(k0, k1) if steps_here else ():
                    kept = stage_sampled(ks, stage_every)
                    n = len(done)
                    free = done[n - s.stages] if n >= s.stages else start
                    issue = max(free, issued[-1] + 50 if issued else start) + 20
                    if lane == consumers[0]:
                        issued.append(issue)
                        if kept:
                            put(b, 0 if s.producer else lane, TraceKind.LOAD_ISSUED, tile, ks,
                                sm, issue)
                    else:
                        issued.append(issue)
                    ready = max(at, issue + jit(pace.load_ns))
                    # the stage's events: an observer's once a block (the first
                    # consumer's times), else each consumer's own
                    stage_lane = observer if s.observer else lane
                    stages_here = kept and (not s.observer or lane == consumers[0])
                    if stages_here:
                        put(b, stage_lane, TraceKind.DATA_READY, tile, ks, sm, ready)
                    at = ready + jit(pace.step_ns)
                    if stages_here:
                        put(b, stage_lane, TraceKind.MMA_DONE, tile, ks, sm, at)
                    done.append(at)
                if k0 != 0 or k1 != s.ksteps:  # a cut tile
                    put(b, lane, TraceKind.FIXUP_BEGIN, tile, k0, sm, at)
                    if k0 != 0:  # a contributor: publishes and goes on (no tile_end)
                        at += jit(pace.fixup_ns)
                        published[tile] = max(published.get(tile, 0.0), at)
                        continue
                    else:
                        finish_at[(b, lane)] = at
                        at = at + jit(pace.fixup_ns)
                        put(b, lane, TraceKind.FIXUP_DONE, tile, k0, sm, at)
                        at += jit(pace.epilogue_ns)
                else:
                    at += jit(pace.epilogue_ns)
                put(b, lane, TraceKind.TILE_END, tile, k1, sm, at)
            if s.producer:
                put(b, lane, TraceKind.LANE_END, -1, 0, sm, at + 10)
            end = max(end, at + 10)
        if s.producer:
            put(b, 0, TraceKind.LANE_END, -1, 0, sm, end - 5)
        if s.observer:
            put(b, observer, TraceKind.LANE_START, -1, 0, sm, start + 5)
            put(b, observer, TraceKind.LANE_END, -1, 0, sm, end - 2)
        if not s.persistent:
            slots[i] = (end, sm)
    _wait_for_contributors(cols, times, published)
    event = _event(s, sm_count, cols, np.array(times), pace, t)
    event["stage_every"] = stage_every
    if detail_sms is not None and event["stage_sms"] is None:
        event["stage_sms"] = sorted(detailed)
    return event


def _wait_for_contributors(cols: dict[str, list[int]], times: list[float],
                           published: dict[int, float]) -> None:
    """A finisher's fix-up ends no sooner than its tile's contributors published."""
    done = trace_buffer.kind_index(TraceKind.FIXUP_DONE)
    for i, kind in enumerate(cols["kind"]):
        if kind == done:
            late = published.get(cols["tile"][i], 0.0) - times[i]
            if late > 0:  # shift the rest of this lane
                b, lane = cols["block"][i], cols["lane"][i]
                for j in range(i, len(times)):
                    if cols["block"][j] == b and cols["lane"][j] == lane:
                        times[j] += late


def _event(s: TraceSchedule, sm_count: int, cols: dict[str, list[int]], times: np.ndarray,
           pace: Pace, t: float) -> dict[str, Any]:
    # each lane's events in time order, as the GPU writes them
    order = np.lexsort((times, np.asarray(cols["lane"]), np.asarray(cols["block"])))
    a = {n: np.asarray(v, np.int64)[order] for n, v in cols.items()}
    ns = times[order] + 1_000_000.0
    globaltimer = (ns // pace.timer_step_ns * pace.timer_step_ns).astype(np.int64)
    clock = (ns * pace.ghz).astype(np.int64) + a["sm"] * 977_000
    cap = int(np.bincount(a["block"] * s.lanes_per_block + a["lane"]).max())
    # K-stage events without their timer, as the GPU writes them, where the launch is long
    # enough for the decoder's clock fit; shorter ones keep exact times (a model)
    long_enough = len(times) > 0 and float(np.ptp(times)) >= trace_buffer.MIN_SLOPE_SPAN_NS
    counts, recs = trace_buffer.encode(a["block"], a["lane"], a["kind"], a["tile"], a["k"],
                                       a["sm"], globaltimer, clock, s.lanes_per_block, s.grid,
                                       cap, device_like=long_enough)
    fields = trace_buffer.decode(counts, recs, lanes_per_block=s.lanes_per_block)
    return {"type": "trace", "t": t, "level": s.level, "M": s.M, "N": s.N, "K": s.K,
            "params": s.params, "grid": s.grid, "lanes_per_block": s.lanes_per_block,
            "sm_count": sm_count, "tiles": s.tiles, "ksteps": s.ksteps, "synthetic": True,
            **fields}

"""A trace event as the timeline view draws it (issue 46), free of Qt: each block's span on
its SM, the pieces of output tiles inside it (coloured by tile, numbered by wave), the
phases of each warpgroup lane of an SM (waiting for data, math, epilogue, fix-up, the
producer's waits for a free stage), the idle SMs, the tail, and the Chrome trace JSON
(Perfetto opens it). The view only draws what this module says, so tests read it here."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ...kernels import ladder
from ...kernels.ladder import Shape
from ...kernels.models import schedule, synthetic_trace
from ...kernels.protocol import (
    STAGE_KINDS,
    Trace,
    TraceKind,
    leaves_steps_out,
    of,
    sample_window,
)

# a synthetic trace (no measured one): K-stage events for this many SMs only, so that
# making one at 4096^3 stays well under a frame's worth of seconds
SYNTHETIC_DETAIL_SMS = 6


# the SM clocks a launch's slope is believed to say: what a GPU's clock can be (the range
# the decoder clamps a slope to where the launch is too short to fit one, trace_buffer)
LAUNCH_CLOCK_MHZ = (500.0, 5000.0)


def launch_clock_mhz(ns_per_cycle: float | None) -> float | None:
    """The SM clock a traced launch ran at, in MHz: the decoder's slope of %globaltimer over
    clock64 across the launch (trace_buffer), read in the kernel's own time frame, so a
    clock held down while the launch ran is seen where NVML, sampled around it, may not
    see it. None where no slope was fitted or it is not a clock a GPU runs at."""
    if ns_per_cycle is None or not ns_per_cycle > 0:  # None, 0, negative or NaN
        return None
    mhz = 1000.0 / ns_per_cycle
    lo, hi = LAUNCH_CLOCK_MHZ
    return mhz if lo <= mhz <= hi else None


class Phase(StrEnum):
    """What a lane was doing over a span (the zoom's colours)."""

    # a consumer lane, from its previous event until a stage is full: the wait on the
    # stage's barrier (and any work issued meanwhile, unless the level marks where its
    # wait begins: mma_tma multiplies a step's first fragments before it waits)
    WAIT = "until its stage is full"
    LOAD = "loading its K tile"  # a SIMT block: its K tile's loads until the barrier
    MATH = "until its products are done"  # a K step's products, its stage then freed
    EPILOGUE = "epilogue"  # a tile's results stored
    FIXUP = "stream-K fix-up"  # partial sums handed on or gathered
    # a tile from its begin to its end with no K-stage event between: a level that stages
    # no K tiles (naive, coalesced), or a lane whose steps the sampling left out
    RUN = "the whole tile (no K steps recorded)"
    STAGE_WAIT = "producer waits for a free stage"  # between two K steps' copies


@dataclass(frozen=True, slots=True)
class Piece:
    """A block's piece of an output tile: on the SM lane, coloured by tile."""

    sm: int
    block: int
    tile: int
    k0: int
    start_ns: int
    end_ns: int
    wave: int  # the block's n-th piece (persistent), or the block's n-th on its SM


@dataclass(frozen=True, slots=True)
class Span:
    """A lane's phase over [start_ns, end_ns) (the zoom of one SM)."""

    block: int
    lane: int
    phase: Phase
    start_ns: int
    end_ns: int
    tile: int
    k: int


@dataclass(slots=True)
class TraceTimeline:
    trace: Trace
    sm_count: int
    makespan_ns: int
    pieces: list[Piece]
    block_spans: dict[int, tuple[int, int, int]]  # block -> (sm, start, end)
    idle_sms: list[int]
    tail_start_ns: int  # the first SM out of work for good: the tail runs from here
    phases: dict[int, list[Span]] = field(default_factory=dict)  # sm -> its lanes' spans
    lane_names: dict[int, str] = field(default_factory=dict)

    @property
    def level(self) -> str:
        return self.trace.level

    @property
    def shape(self) -> Shape:
        return self.trace.shape

    def sms_with_phases(self) -> list[int]:
        return sorted(self.phases)

    def lanes_of(self, sm: int) -> list[tuple[int, int]]:
        """(block, lane) rows of the zoom of ``sm``, blocks in start order."""
        rows = {(s.block, s.lane) for s in self.phases.get(sm, [])}
        start = {b: self.block_spans[b][1] for b, _ in rows}
        return sorted(rows, key=lambda r: (start[r[0]], r[0], r[1]))

    def waves(self) -> int:
        return 1 + max((p.wave for p in self.pieces), default=-1)

    def piece_at(self, sm: int, t_ns: float) -> Piece | None:
        return next((p for p in self.pieces if p.sm == sm and p.start_ns <= t_ns < p.end_ns),
                    None)

    def span_at(self, sm: int, block: int, lane: int, t_ns: float) -> Span | None:
        return next((s for s in self.phases.get(sm, []) if s.block == block
                     and s.lane == lane and s.start_ns <= t_ns < s.end_ns), None)

    def records_k_steps(self) -> bool:
        """Whether the trace holds K-stage events (naive and coalesced stage no K tiles:
        their blocks' begin and end only)."""
        t = self.trace
        return any(t.kind_of(k) in STAGE_KINDS for k in set(t.events.kind))

    def phase_share(self) -> dict[Phase, float]:
        """Each phase's share of the lane time the zoomable SMs spent in phases."""
        total: dict[Phase, float] = defaultdict(float)
        for spans in self.phases.values():
            for s in spans:
                total[s.phase] += s.end_ns - s.start_ns
        whole = sum(total.values()) or 1.0
        return {p: total[p] / whole for p in Phase if p in total}

    def describe_piece(self, p: Piece) -> str:
        """What hovering a piece says: block, tile, SM, times."""
        k = f" from K step {p.k0}" if p.k0 else ""
        return (f"block {p.block} · tile {p.tile}{k} · SM {p.sm} · "
                f"{p.start_ns / 1000:.2f}–{p.end_ns / 1000:.2f} µs "
                f"({(p.end_ns - p.start_ns) / 1000:.2f} µs) · wave {p.wave + 1}")

    def describe_span(self, sm: int, s: Span) -> str:
        return (f"SM {sm} · block {s.block} · {self.lane_names.get(s.lane, f'lane {s.lane}')}"
                f" · {s.phase.value} · tile {s.tile}, K step {s.k} · "
                f"{s.start_ns / 1000:.2f}–{s.end_ns / 1000:.2f} µs")

    # ---------------------------------------------------------------- Chrome trace JSON
    def chrome_trace(self) -> dict[str, Any]:
        """The Trace Event Format's JSON object (Perfetto and chrome://tracing open it): a
        process per SM, a thread per block lane, a complete event (ph X, µs) per tile
        piece and per phase; metadata names them."""
        ev: list[dict[str, Any]] = []
        named: set[tuple[int, int]] = set()
        for sm in sorted({p.sm for p in self.pieces}):
            ev.append({"name": "process_name", "ph": "M", "pid": sm,
                       "args": {"name": f"SM {sm}"}})
            ev.append({"name": "process_sort_index", "ph": "M", "pid": sm,
                       "args": {"sort_index": sm}})

        def thread(sm: int, block: int, lane: int, what: str) -> int:
            tid = block * 16 + lane
            if (sm, tid) not in named:
                named.add((sm, tid))
                ev.append({"name": "thread_name", "ph": "M", "pid": sm, "tid": tid,
                           "args": {"name": f"block {block} · {what}"}})
            return tid

        for p in self.pieces:
            tid = thread(p.sm, p.block, 15, "tiles")
            ev.append({"name": f"tile {p.tile}", "cat": "tile", "ph": "X", "pid": p.sm,
                       "tid": tid, "ts": p.start_ns / 1000, "dur": (p.end_ns - p.start_ns) / 1000,
                       "args": {"block": p.block, "tile": p.tile, "k0": p.k0,
                                "wave": p.wave + 1}})
        for sm, spans in self.phases.items():
            for s in spans:
                tid = thread(sm, s.block, s.lane, self.lane_names.get(s.lane, f"lane {s.lane}"))
                ev.append({"name": s.phase.value, "cat": "phase", "ph": "X", "pid": sm,
                           "tid": tid, "ts": s.start_ns / 1000,
                           "dur": (s.end_ns - s.start_ns) / 1000,
                           "args": {"tile": s.tile, "k": s.k}})
        t = self.trace
        return {"traceEvents": ev, "displayTimeUnit": "ns",
                "otherData": {"level": t.level, "shape": str(t.shape),
                              "measured": not t.synthetic, "grid": t.grid,
                              "overhead_pct": t.overhead_pct, "code_key": t.code_key}}


def lane_names(trace: Trace, producer: bool, observers: frozenset[int] = frozenset()
               ) -> dict[int, str]:
    """Each lane's name; ``observers``: the lanes of a K-stage observer (stage events and no
    tiles: kernels/cuda/trace.cuh, GsTraceStages)."""
    if not producer:
        return {0: "block (thread 0)"}
    return {0: "producer", **{i: "stages (observer)" if i in observers else f"consumer {i}"
                              for i in range(1, trace.lanes_per_block)}}


def observer_lanes(trace: Trace, kind: list[TraceKind | None]) -> frozenset[int]:
    """The lanes past the producer's with K-stage events and no tile of their own: a K-stage
    observer's, which records the block's stages while its consumers record their tiles."""
    ev = trace.events
    staged = {ev.lane[i] for i, k in enumerate(kind) if k is TraceKind.DATA_READY}
    tiled = {ev.lane[i] for i, k in enumerate(kind) if k is TraceKind.TILE_BEGIN}
    return frozenset(lane for lane in staged - tiled if lane > 0)


def build(trace: Trace) -> TraceTimeline:
    """The timeline of one trace."""
    ev = trace.events
    kind = [trace.kind_of(k) for k in ev.kind]
    sm_count = trace.sm_count or (max(trace.block_sm, default=-1) + 1)
    spans: dict[int, list[int]] = {}
    for i, b in enumerate(ev.block):
        t = ev.t_ns[i]
        if b in spans:
            spans[b][0] = min(spans[b][0], t)
            spans[b][1] = max(spans[b][1], t)
        else:
            spans[b] = [t, t]
    sm_of = {b: trace.block_sm[b] if 0 <= b < len(trace.block_sm) else -1 for b in spans}
    block_spans = {b: (sm_of[b], s[0], s[1]) for b, s in spans.items() if sm_of[b] >= 0}
    producer = _has_producer(trace, kind)
    tile_lane = 1 if producer else 0
    pieces = _pieces(trace, kind, block_spans, tile_lane)
    busy = {sm for sm, _, _ in block_spans.values()}
    last_end: dict[int, int] = defaultdict(int)
    for sm, _, end in block_spans.values():
        last_end[sm] = max(last_end[sm], end)
    makespan = max(last_end.values(), default=0)
    timeline = TraceTimeline(trace, sm_count, makespan, pieces, block_spans,
                             [s for s in range(sm_count) if s not in busy],
                             min(last_end.values(), default=0))
    timeline.phases = _phases(trace, kind, block_spans, producer)
    timeline.lane_names = lane_names(trace, producer, observer_lanes(trace, kind))
    return timeline


def _has_producer(trace: Trace, kind: list[TraceKind | None]) -> bool:
    """A warp-specialized level: lane 0 issues the loads and another lane computes."""
    ev = trace.events
    return any(k is TraceKind.LOAD_ISSUED and ev.lane[i] == 0 for i, k in enumerate(kind)) \
        and any(k is TraceKind.DATA_READY and ev.lane[i] > 0 for i, k in enumerate(kind))


def _pieces(trace: Trace, kind: list[TraceKind | None],
            block_spans: dict[int, tuple[int, int, int]], lane: int) -> list[Piece]:
    ev = trace.events
    open_: dict[int, tuple[int, int, int]] = {}  # block -> (tile, k0, start)
    count: dict[int, int] = defaultdict(int)
    out: list[Piece] = []
    for i, k in enumerate(kind):
        b = ev.block[i]
        if ev.lane[i] != lane or b not in block_spans:
            continue
        if k in (TraceKind.TILE_BEGIN, TraceKind.LANE_END) and b in open_:
            # a stream-K contributor hands its sums on and goes on: no tile_end
            tile, k0, start = open_.pop(b)
            out.append(Piece(block_spans[b][0], b, tile, k0, start, ev.t_ns[i], count[b]))
            count[b] += 1
        if k is TraceKind.TILE_BEGIN:
            open_[b] = (ev.tile[i], ev.k[i], ev.t_ns[i])
        elif k is TraceKind.TILE_END and b in open_:
            tile, k0, start = open_.pop(b)
            out.append(Piece(block_spans[b][0], b, tile, k0, start, ev.t_ns[i], count[b]))
            count[b] += 1
    if not trace.tiles or len(block_spans) > len({s for s, _, _ in block_spans.values()}):
        # several blocks on an SM (not persistent): a piece's wave is its block's rank
        order: dict[int, list[int]] = defaultdict(list)
        for b, (sm, _start, _) in sorted(block_spans.items(), key=lambda x: x[1][1]):
            order[sm].append(b)
        rank = {b: i for blocks in order.values() for i, b in enumerate(blocks)}
        out = [Piece(p.sm, p.block, p.tile, p.k0, p.start_ns, p.end_ns, rank[p.block])
               for p in out]
    return out


# the kinds a K-stage event's phase starts from (a full trace's neighbours): with sampled
# steps a phase is drawn only from one of these
_STARTS = {TraceKind.DATA_READY: {TraceKind.MMA_DONE, TraceKind.WAIT_BEGIN,
                                  TraceKind.LOAD_ISSUED},
           TraceKind.MMA_DONE: {TraceKind.DATA_READY},
           TraceKind.WAIT_BEGIN: {TraceKind.MMA_DONE},
           TraceKind.LOAD_ISSUED: {TraceKind.LOAD_ISSUED}}


def _neighbours(prev_kind: TraceKind, prev_k: int, kind: TraceKind, k: int, phase: Phase,
                every: int) -> bool:
    """Whether two events of a lane whose K-stage events were sampled ``every`` K steps
    (trace_kinds) were neighbours in the full trace, so that the phase between them is
    measured and not a span over steps the build did not record: two K-stage events of one
    window, the second's phase starting from the first's kind; a K-stage event right after
    its piece's start (its first step, or the next: a pipelined level waits for step 1
    before step 0's products are done); an event after the piece's last step."""
    stage_prev, stage_now = prev_kind in STAGE_KINDS, kind in STAGE_KINDS
    if stage_prev and stage_now:
        return (sample_window(prev_k, every) == sample_window(k, every)
                and prev_kind in _STARTS.get(kind, ()))
    if stage_now:  # after a lane, tile or fix-up event: a wait, never a step's math
        return phase is not Phase.MATH and 0 <= k - prev_k <= 1
    if stage_prev:  # an epilogue or fix-up after the piece's last step (k: its end)
        return k - prev_k == 1 and prev_kind is TraceKind.MMA_DONE
    return True


def _phases(trace: Trace, kind: list[TraceKind | None],
            block_spans: dict[int, tuple[int, int, int]], producer: bool
            ) -> dict[int, list[Span]]:
    """Each lane's phases, on the SMs whose K-stage events the trace kept; where the build
    sampled K steps (``stage_every``), the phases between events that were neighbours."""
    ev = trace.events
    keep = None if trace.stage_sms is None else set(trace.stage_sms)
    every = trace.stage_every if leaves_steps_out(trace.stage_every) else 0
    # (block, lane) -> (t, tile, k, kind) of the lane's last event
    last: dict[tuple[int, int], tuple[int, int, int, TraceKind]] = {}
    in_fixup: dict[tuple[int, int], bool] = {}
    out: dict[int, list[Span]] = defaultdict(list)
    for i, k in enumerate(kind):
        b, lane, t = ev.block[i], ev.lane[i], ev.t_ns[i]
        if b not in block_spans or k is None:
            continue
        sm = block_spans[b][0]
        if keep is not None and sm not in keep:
            continue
        key = (b, lane)
        prev = last.get(key)
        phase: Phase | None = None
        if producer and lane == 0:
            phase = Phase.STAGE_WAIT if k is TraceKind.LOAD_ISSUED else None
        elif k is TraceKind.DATA_READY:
            phase = Phase.WAIT if producer else Phase.LOAD
        elif k in (TraceKind.MMA_DONE, TraceKind.WAIT_BEGIN):
            phase = Phase.MATH  # (before a wait begun: the step's first products)
        elif k is TraceKind.FIXUP_BEGIN:
            in_fixup[key] = True
        elif k in (TraceKind.FIXUP_DONE, TraceKind.TILE_END):
            phase = Phase.FIXUP if in_fixup.pop(key, False) else (
                Phase.RUN if prev is not None and prev[3] is TraceKind.TILE_BEGIN
                else Phase.EPILOGUE)
        elif k in (TraceKind.TILE_BEGIN, TraceKind.LANE_END) and in_fixup.pop(key, False):
            phase = Phase.FIXUP  # a contributor's partial sums, handed on
        if phase is not None and prev is not None and t > prev[0] and (
                not every or _neighbours(prev[3], prev[2], k, ev.k[i], phase, every)):
            out[sm].append(Span(b, lane, phase, prev[0], t, ev.tile[i], ev.k[i]))
        last[key] = (t, ev.tile[i], ev.k[i], k)
    return dict(out)


def synthetic(level_id: str, shape: Shape, sm_count: int = 132) -> Trace:
    """A trace of the level's model at ``shape`` with invented timings (said as such):
    what the view shows for a traced level the recording holds no measured trace of."""
    model = schedule(ladder.get(level_id), shape.M, shape.N, shape.K, sm_count)
    event = synthetic_trace(model, sm_count, detail_sms=SYNTHETIC_DETAIL_SMS)
    trace = of(event)
    assert isinstance(trace, Trace)
    return trace

"""A measured timeline of one launch (issue 46): the ``trace`` event, its kinds and its
bounds (docs/protocol.md, ``trace``).

A level's trace build (kernels/cuda/trace.cuh) records, per warpgroup lane of each block,
its events with the SM, the output tile, the K step and the time. The runner decodes the
buffer once (``trace_buffer``) into columns, one entry per event, and writes them as one
event; the reader decodes it into :class:`Trace` here, bounded, and trusts it after.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from .record_base import Number, Record
from .run_records import Run, bounded_params
from .trace_kinds import (
    KIND_NAMES,
    MAX_LANES_PER_BLOCK,
    MAX_TRACE_BLOCKS,
    MAX_TRACE_EVENTS,
    MAX_TRACE_NS,
    STAGE_EVERY,
    STAGE_KINDS,
    TraceKind,
)

__all__ = ["KIND_NAMES", "MAX_TRACE_BLOCKS", "MAX_TRACE_EVENTS", "STAGE_KINDS", "Trace",
           "TraceColumns", "TraceKind"]


Small = Annotated[int, msgspec.Meta(ge=-1, lt=1 << 31)]
Time = Annotated[int, msgspec.Meta(ge=0, le=MAX_TRACE_NS)]
SmallColumn = Annotated[list[Small], msgspec.Meta(max_length=MAX_TRACE_EVENTS)]
TimeColumn = Annotated[list[Time], msgspec.Meta(max_length=MAX_TRACE_EVENTS)]


class TraceColumns(Record, kw_only=True):
    """One entry per event, in time order within each lane: the block (linear index), its
    lane (warpgroup), the kind (an index into the event's ``kinds``), the output tile (its
    walk index; -1: none), the K step (or stage use) and the time in ns from the launch's
    first event."""

    block: SmallColumn = msgspec.field(default_factory=list)
    lane: SmallColumn = msgspec.field(default_factory=list)
    kind: SmallColumn = msgspec.field(default_factory=list)
    tile: SmallColumn = msgspec.field(default_factory=list)
    k: SmallColumn = msgspec.field(default_factory=list)
    t_ns: TimeColumn = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        # columns of unequal length (a damaged line): the events all of them describe
        n = min(len(self.block), len(self.lane), len(self.kind), len(self.tile), len(self.k),
                len(self.t_ns))
        for name in ("block", "lane", "kind", "tile", "k", "t_ns"):
            del getattr(self, name)[n:]

    def __len__(self) -> int:
        return len(self.t_ns)


class Trace(Run, tag="trace", kw_only=True):
    """A measured timeline of one launch of a level's trace build (docs/protocol.md)."""

    events: TraceColumns
    kinds: Annotated[list[Annotated[str, msgspec.Meta(max_length=40)]],
                     msgspec.Meta(max_length=64)] = msgspec.field(
        default_factory=lambda: list(KIND_NAMES))
    # the SM of each block (index: the linear block index; -1: no event said it)
    block_sm: Annotated[list[Small], msgspec.Meta(max_length=MAX_TRACE_BLOCKS)] = \
        msgspec.field(default_factory=list)
    params: dict[str, int] | None = None
    code_key: str | None = None  # the trace build's
    plain_code_key: str | None = None  # the plain build's, as its results name it
    grid: Annotated[int, msgspec.Meta(ge=0, lt=1 << 31)] | None = None  # blocks launched
    lanes_per_block: Annotated[int, msgspec.Meta(ge=1, le=MAX_LANES_PER_BLOCK)] = 1
    sm_count: Annotated[int, msgspec.Meta(ge=1, lt=1 << 16)] | None = None
    tiles: Annotated[int, msgspec.Meta(ge=0, lt=1 << 31)] | None = None
    ksteps: Annotated[int, msgspec.Meta(ge=0, lt=1 << 31)] | None = None
    # the K-stage events are those of the K steps k with k % stage_every in
    # {stage_every - 2, stage_every - 1, 0}: windows of three (trace_kinds); 1: every step
    stage_every: Annotated[int, msgspec.Meta(ge=1, le=STAGE_EVERY[-1])] = 1
    # the K-stage events are those of these SMs only (None: of every SM), the event's
    # bound having left the others out (every lane, tile and fix-up event is kept)
    stage_sms: Annotated[list[Small], msgspec.Meta(max_length=1024)] | None = None
    recorded: Annotated[int, msgspec.Meta(ge=0)] | None = None  # events the GPU wrote
    wanted: Annotated[int, msgspec.Meta(ge=0)] | None = None  # ... and wanted to (full)
    full_lanes: Annotated[int, msgspec.Meta(ge=0)] = 0  # lanes whose slots ran out
    lost_blocks: Annotated[int, msgspec.Meta(ge=0)] = 0  # blocks that found no slots
    timer: str | None = None  # how t_ns was made ("globaltimer+clock64", "globaltimer")
    ns_per_cycle: Number | None = None
    verified: bool | None = None  # the traced launch's C against the float64 product
    rel_err: Number | None = None
    # the cost of tracing: median ms of the plain and the trace build, launched in pairs
    plain_ms: Number | None = None
    trace_ms: Number | None = None
    overhead_pct: Number | None = None
    pairs: Annotated[int, msgspec.Meta(ge=0)] | None = None
    # made from the level's model with invented timings (kernels/models/trace_schedule.py),
    # not measured: shown as such
    synthetic: bool = False

    STRICT = frozenset({"events"})

    def __post_init__(self) -> None:
        if self.params is not None:
            self.params = bounded_params(self.params)

    @classmethod
    def repair(cls, obj: dict[str, Any]) -> None:
        """A list past its bound (a line within the length limit can hold one) is cut to
        it, as the runner would have cut it: the rest of the event still reads."""
        columns = obj.get("events")
        if isinstance(columns, dict):
            obj["events"] = {k: v[:MAX_TRACE_EVENTS] if isinstance(v, list) else v
                             for k, v in columns.items()}
        for name, bound in (("block_sm", MAX_TRACE_BLOCKS), ("stage_sms", 1024),
                            ("kinds", 64)):
            if isinstance(obj.get(name), list):
                obj[name] = obj[name][:bound]

    def kind_of(self, index: int) -> TraceKind | None:
        """The kind an event's ``kind`` index names (None: a kind this reader does not know)."""
        if 0 <= index < len(self.kinds):
            try:
                return TraceKind(self.kinds[index])
            except ValueError:
                return None
        return None

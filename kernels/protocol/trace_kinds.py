"""The trace event's kinds and bounds (issue 46), without msgspec: the runner's decoder
of the trace buffer (``trace_buffer``) and the models need them, and the runner never
imports msgspec (an import-linter contract); ``trace_records`` is the readers' record."""

from __future__ import annotations

from enum import StrEnum


class TraceKind(StrEnum):
    """What happened, in the order of trace.cuh's GsTraceKind (its index is the raw kind)."""

    LANE_START = "lane_start"  # the lane's thread began
    LANE_END = "lane_end"  # the lane's thread has nothing more to do
    TILE_BEGIN = "tile_begin"  # a piece of an output tile begins (k: its first K step)
    TILE_END = "tile_end"  # its results are stored (or handed on: stream-K)
    LOAD_ISSUED = "load_issued"  # a K step's copies were issued (the producer)
    DATA_READY = "data_ready"  # a K step's operands are in shared memory (a consumer)
    MMA_DONE = "mma_done"  # a K step's products are done and its stage freed
    FIXUP_BEGIN = "fixup_begin"  # stream-K: a cut tile's sums handed on or gathered
    FIXUP_DONE = "fixup_done"  # stream-K: the finisher has every contributor's sums


KIND_NAMES: tuple[str, ...] = tuple(k.value for k in TraceKind)
# the K-stage kinds: many per tile, so the ones an event may leave out (``stage_sms``)
STAGE_KINDS = frozenset({TraceKind.LOAD_ISSUED, TraceKind.DATA_READY, TraceKind.MMA_DONE})

# Bounds of one trace event, far below the 8 MiB line limit: an event column of 60,000
# integers of at most 12 digits is under 0.8 MB, six of them under 5 MB.
MAX_TRACE_EVENTS = 60_000
MAX_TRACE_BLOCKS = 65_536  # blocks of one launch whose SM is said
MAX_LANES_PER_BLOCK = 8  # warpgroups of a block (1024 threads)
MAX_TRACE_NS = 1 << 50  # a time in a launch: about 13 days


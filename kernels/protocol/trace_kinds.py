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
    # a consumer begins its wait for a K step's stage, where the level works between its
    # last event and the wait (mma_tma multiplies a step's first fragments first)
    WAIT_BEGIN = "wait_begin"


KIND_NAMES: tuple[str, ...] = tuple(k.value for k in TraceKind)
# the K-stage kinds: many per tile, so the ones an event may leave out (``stage_sms``)
STAGE_KINDS = frozenset({TraceKind.LOAD_ISSUED, TraceKind.DATA_READY, TraceKind.MMA_DONE,
                         TraceKind.WAIT_BEGIN})

# Bounds of one trace event, far below the 8 MiB line limit: an event column of 60,000
# integers of at most 12 digits is under 0.8 MB, six of them under 5 MB.
MAX_TRACE_EVENTS = 60_000
MAX_TRACE_BLOCKS = 65_536  # blocks of one launch whose SM is said
MAX_LANES_PER_BLOCK = 8  # warpgroups of a block (1024 threads)
MAX_TRACE_NS = 1 << 50  # a time in a launch: about 13 days


# K-stage sampling (issue 46 item 2): a trace build records the K-stage events of the K
# steps k with k % every in {every - 2, every - 1, 0}: windows of three steps, the first
# step of every piece and its last (where every divides its K steps) among them. Three,
# because a pipelined level's events interleave across steps (mma_tma waits for step k + 1
# before step k's products are done): within a window each phase's two ends are then both
# recorded for at least one step. 1 (and 2): every step. The lane, tile and fix-up events
# are always recorded.
STAGE_EVERY = (1, 4, 8, 16, 32, 64, 128)
SAMPLE_WINDOW = 3  # steps in a row that a sampling build records


def leaves_steps_out(every: int) -> bool:
    """Whether a build sampling ``every`` records fewer than every K step (a window of
    three steps holds all of 1 and 2)."""
    return every > SAMPLE_WINDOW


def stage_sampled(k: int, every: int) -> bool:
    """Whether a trace build that samples ``every`` records K step ``k``'s stage events
    (trace.cuh's rule: (k + 2) & (every - 1) is at most 2)."""
    return (k + SAMPLE_WINDOW - 1) & (every - 1) < SAMPLE_WINDOW


def sample_window(k: int, every: int) -> int:
    """The window a recorded step belongs to: steps of one window run back to back."""
    return (k + SAMPLE_WINDOW - 1) // every


def sampled_steps(k0: int, k1: int, every: int) -> int:
    """How many of the K steps k0 .. k1 - 1 (k0 >= 0) such a build records."""
    if not leaves_steps_out(every):
        return max(0, k1 - k0)

    def upto(end: int, rest: int) -> int:  # k in [0, end) with k % every == rest
        return max(0, (end - rest + every - 1) // every)

    return sum(upto(k1, r % every) - upto(k0, r % every) for r in range(1 - SAMPLE_WINDOW, 1))

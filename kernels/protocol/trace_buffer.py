"""The trace build's buffer (kernels/cuda/trace.cuh) into a ``trace`` event's fields: the
one decoder of the raw records, run once in the runner (numpy, no msgspec), and its
inverse, which the tests and the synthetic traces of the models use.

The buffer: ``counts`` (one per lane: events written or wanted, past ``cap`` when the
lane's slots ran out) and ``recs`` (lanes x cap records of RECORD_WORDS 32-bit words):
globaltimer (ns, low, high), clock64 (low, high), kind | lane << 8 | smid << 16, tile,
k, block. Times: %globaltimer steps coarsely on some GPUs, so where the clock allows it an
event is placed by its SM's clock64, scaled to ns by the slope of globaltimer over clock64
across the launch and anchored per block on globaltimer (which never runs ahead of the
true time, so the anchor is the largest offset seen).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .trace_kinds import (
    KIND_NAMES,
    MAX_TRACE_BLOCKS,
    MAX_TRACE_EVENTS,
    STAGE_KINDS,
    TraceKind,
)

RECORD_WORDS = 8
RECORD_BYTES = 4 * RECORD_WORDS
# a lane's events must span this long for its slope of ns per cycle to count
MIN_SLOPE_SPAN_NS = 20_000
NO_SM = 0xFFFF  # a K-stage event's SM field: not read on the device (trace.cuh)
NO_BLOCK = 0xFFFFFFFF  # and its block field: its slot in the buffer says its block
_STAGE_INDEX = np.array(sorted(KIND_NAMES.index(k.value) for k in STAGE_KINDS))


def encode(block: np.ndarray, lane: np.ndarray, kind: np.ndarray, tile: np.ndarray,
           k: np.ndarray, sm: np.ndarray, globaltimer: np.ndarray, clock: np.ndarray,
           lanes_per_block: int, blocks: int, cap: int, device_like: bool = True
           ) -> tuple[np.ndarray, np.ndarray]:
    """(counts, recs) as the GPU leaves them for these events (one entry each, in each
    lane's order): the inverse of :func:`decode`, for tests and synthetic traces.
    ``device_like``: K-stage events without their globaltimer and SM, as trace.cuh
    writes them (False: every field as given)."""
    lanes = blocks * lanes_per_block
    slot = block.astype(np.int64) * lanes_per_block + lane
    counts = np.bincount(slot, minlength=lanes).astype(np.uint32)
    order = np.argsort(slot, kind="stable")
    first = np.r_[0, np.cumsum(counts)[:-1]]
    nth = np.empty(len(slot), np.int64)
    nth[order] = np.arange(len(slot)) - first[slot[order]]  # the event's place in its lane
    fit = nth < cap
    g, c = globaltimer.astype(np.uint64), clock.astype(np.uint64)
    block_field = block
    if device_like:  # K-stage events as trace.cuh writes them: no timer, SM or block
        stage = np.isin(kind, _STAGE_INDEX)
        g = np.where(stage, np.uint64(0), g)
        sm = np.where(stage, NO_SM, sm)
        block_field = np.where(stage, NO_BLOCK, block)
    words = np.stack([g & 0xFFFFFFFF, g >> 32, c & 0xFFFFFFFF, c >> 32,
                      (kind | lane << 8 | sm << 16).astype(np.uint64),
                      tile.astype(np.int64).astype(np.uint64) & 0xFFFFFFFF,
                      k.astype(np.int64).astype(np.uint64) & 0xFFFFFFFF,
                      np.asarray(block_field).astype(np.uint64)], axis=1).astype(np.uint32)
    recs = np.zeros((lanes, cap, RECORD_WORDS), np.uint32)
    recs[slot[fit], nth[fit]] = words[fit]
    return counts, recs


def decode(counts: np.ndarray, recs: np.ndarray, lost_blocks: int = 0,
           budget: int = MAX_TRACE_EVENTS, *, lanes_per_block: int) -> dict[str, Any]:
    """The fields of a ``trace`` event (docs/protocol.md) from the buffer's counts and
    records: the events in time order, at most ``budget`` of them (the K-stage events of
    whole SMs left out first, said in ``stage_sms``), the SM of each block, and what the
    buffer said of itself (``recorded``, ``wanted``, ``full_lanes``, ``lost_blocks``)."""
    lanes, cap = recs.shape[0], recs.shape[1]
    counts = counts.astype(np.int64)[:lanes]
    kept = np.minimum(counts, cap)
    rows = recs.reshape(lanes * cap, RECORD_WORDS)[
        (np.arange(cap)[None, :] < kept[:, None]).reshape(-1)].astype(np.int64)
    slot = np.repeat(np.arange(lanes, dtype=np.int64), kept)  # each row's lane slot
    out: dict[str, Any] = {"kinds": list(KIND_NAMES), "recorded": int(kept.sum()),
                           "wanted": int(counts.sum()), "full_lanes": int((counts > cap).sum()),
                           "lost_blocks": int(lost_blocks)}
    gt = rows[:, 0] | rows[:, 1] << 32
    clk = (rows[:, 2] | rows[:, 3] << 32).astype(np.uint64)
    head = rows[:, 4]
    kind, lane, sm = head & 0xFF, head >> 8 & 0xFF, head >> 16
    tile = rows[:, 5].astype(np.uint32).view(np.int32).astype(np.int64)
    k = rows[:, 6].astype(np.uint32).view(np.int32).astype(np.int64)
    block = rows[:, 7]
    unsaid = block == NO_BLOCK  # a K-stage event: its slot says its block
    block = np.where(unsaid, slot // max(1, lanes_per_block), block)
    sm = _block_sms(block, sm)
    t, out["timer"], out["ns_per_cycle"] = _times(block, gt, clk)
    order = np.argsort(t, kind="stable")
    block, lane, kind, tile, k, sm, t = (a[order] for a in (block, lane, kind, tile, k, sm, t))
    keep, out["stage_sms"] = _within_budget(kind, sm, budget)
    t = t - (t.min() if len(t) else 0)
    out["events"] = {"block": block[keep].tolist(), "lane": lane[keep].tolist(),
                     "kind": kind[keep].tolist(), "tile": tile[keep].astype(int).tolist(),
                     "k": k[keep].astype(int).tolist(), "t_ns": t[keep].tolist()}
    blocks = int(block.max()) + 1 if len(block) else 0
    block_sm = np.full(min(blocks, MAX_TRACE_BLOCKS), -1, np.int64)
    inside = block < len(block_sm)
    block_sm[block[inside]] = sm[inside]
    out["block_sm"] = block_sm.tolist()
    return out


def _times(block: np.ndarray, gt: np.ndarray, clk: np.ndarray
           ) -> tuple[np.ndarray, str, float | None]:
    """Each event's time in ns (int64, on globaltimer's axis), how it was made, and the
    ns per cycle of clock64 (None where the events span too little to tell). An event
    whose globaltimer is 0 (a K-stage event: the device reads only clock64 for it) is
    placed by its clock among its block's timed events."""
    if len(gt) == 0:
        return gt.copy(), "globaltimer", None
    timed = gt != 0
    # %globaltimer counts ns since the Unix epoch on the H200 (about 1.8e18, past 2^60),
    # where a float64 holds only every 256th ns: the arithmetic below runs on the timer
    # less its least timed value, added back at the end in integers
    g = gt.astype(np.int64)  # the timer is below 2^63
    base = np.int64(g[timed].min()) if timed.any() else np.int64(0)
    t, how, slope = _times_from(block, np.where(timed, g - base, 0), clk, timed)
    return t + base, how, slope


def _times_from(block: np.ndarray, gt: np.ndarray, clk: np.ndarray, timed: np.ndarray
                ) -> tuple[np.ndarray, str, float | None]:
    """:func:`_times` on a timer made small (``gt``: its offsets, int64; ``timed``: the
    events that read it)."""
    order = np.lexsort((clk, block))  # by block, then by the block's clock
    new_block = np.r_[True, np.diff(block[order]) != 0]
    starts = np.flatnonzero(new_block)
    which = np.cumsum(new_block) - 1  # group of each sorted row
    g, c, tm = gt[order], clk[order], timed[order]
    c0 = np.minimum.reduceat(c, starts)
    cr = (c - c0[which]).astype(np.float64)  # cycles since the block's first event
    big = np.iinfo(np.int64).max
    g_first = np.minimum.reduceat(np.where(tm, g, big), starts)
    gr = np.where(tm, (g - g_first[which]).astype(np.float64), 0.0)
    n_timed = np.add.reduceat(tm.astype(np.int64), starts)
    ok = (n_timed > 0)[which] & tm  # the rows of the fit: timed, in a block with a timer
    size = np.maximum(n_timed, 1)
    # the slope of globaltimer over clock64, fitted over every block at once (an intercept
    # per block: their clocks do not start together), so the timer's steps average out
    cm = (np.add.reduceat(np.where(ok, cr, 0.0), starts) / size)[which]
    gm = (np.add.reduceat(gr, starts) / size)[which]
    var = float(np.sum(np.where(ok, (cr - cm) ** 2, 0.0)))
    span = float(gr[ok].max()) if ok.any() else 0.0
    slope = float(np.sum(np.where(ok, (cr - cm) * (gr - gm), 0.0)) / var) if var > 0 else 0.0
    t = np.empty(len(gt), np.int64)
    if slope > 0 and span < MIN_SLOPE_SPAN_NS:
        # too short a launch for the fit to be trusted: the timer's own times stand, and
        # the K-stage events are placed between them by the clock at a slope kept within
        # what a GPU's clock can be (0.5-5 GHz)
        slope = min(max(slope, 0.2), 2.0)
        rel = cr * slope
        anchor = np.maximum.reduceat(np.where(tm, g.astype(np.float64) - rel, -np.inf),
                                     starts)
        placed = np.rint(rel + np.where(np.isfinite(anchor), anchor, 0.0)[which])
        t[order] = np.where(tm, g, placed.astype(np.int64))
        return t, "globaltimer", None
    if not slope > 0:  # each untimed event takes its block's last timer before it
        last = np.maximum.accumulate(np.where(tm, np.arange(len(g)), -1))
        filled = np.where(last >= 0, g[np.maximum(last, 0)], 0)
        first_timed = np.where(g_first < big, g_first, 0)[which]
        same = (last >= 0) & (which[np.maximum(last, 0)] == which)
        t[order] = np.where(tm, g, np.where(same, filled, first_timed))
        return t, "globaltimer", None
    rel = cr * slope
    # globaltimer never runs ahead of the time: a block's anchor is its largest offset
    anchor = np.maximum.reduceat(np.where(tm, g.astype(np.float64) - rel, -np.inf), starts)
    anchor = np.where(np.isfinite(anchor), anchor, float(gt[timed].min()) if timed.any()
                      else 0.0)
    t[order] = np.rint(rel + anchor[which]).astype(np.int64)
    return t, "globaltimer+clock64", slope


def _block_sms(block: np.ndarray, sm: np.ndarray) -> np.ndarray:
    """``sm`` with each K-stage event's 0xFFFF (not read on the device) replaced by the SM
    its block's other events read (a block never moves)."""
    unread = sm == NO_SM
    if not unread.any():
        return sm
    known = ~unread
    table = np.full(int(block.max()) + 1, NO_SM, np.int64)
    table[block[known]] = sm[known]
    return np.where(unread, table[block], sm)


def _within_budget(kind: np.ndarray, sm: np.ndarray, budget: int
                   ) -> tuple[np.ndarray, list[int] | None]:
    """Which events an event of ``budget`` keeps: all, or every non-stage event and the
    stage events of whole SMs in SM order while they fit (their SMs said); where even the
    non-stage events do not fit, the first ``budget`` of them."""
    if len(kind) <= budget:
        return np.ones(len(kind), bool), None
    stage = np.isin(kind, _STAGE_INDEX)
    room = budget - int((~stage).sum())
    if room < 0:
        keep = ~stage
        keep[np.flatnonzero(keep)[budget:]] = False
        return keep, []
    per_sm = np.bincount(sm[stage], minlength=int(sm.max()) + 1)
    sms = [s for s in np.flatnonzero(per_sm)]
    chosen: list[int] = []
    for s in sms:
        if per_sm[s] > room:
            break
        chosen.append(int(s))
        room -= int(per_sm[s])
    return ~stage | np.isin(sm, chosen), chosen


def kind_index(kind: TraceKind) -> int:
    return KIND_NAMES.index(kind.value)

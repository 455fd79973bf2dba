"""wgmma_tma and fp8_block_scaled: Hopper's persistent, warp-specialized pipeline.

What the sources (``kernels/cuda/wgmma_tma.cu``, ``fp8_block_scaled.cu``, ``hopper.cuh``)
do, as modelled here:

- A persistent grid of min(tiles, SMs) blocks; block b computes the BM x BN tiles of C
  t = b, b + grid, b + 2 grid, ..., tile t at (row, col) by ``gs_group_coords``: GM tile
  rows at a time, walked column by column inside a group.
- CONSUMERS + 1 warpgroups of 128 threads. Warpgroup 0 is the producer (setmaxnreg.dec
  to 40 registers): its thread 0 waits on empty[s], then issues two TMA copies
  (cp.async.bulk.tensor) into stage s = it % STAGES of the ring, the A box BM x BK and the
  Bt box BN x BK (both K-major, BK elements = one 128-byte row), which complete on full[s].
  Warpgroup 1 + c is consumer c (setmaxnreg.inc to 232): rows 64c..64c+63 of the tile;
  per K step it waits on full[s], issues wgmma instructions that read A rows 64c.. and all
  BN rows of Bt from shared memory through descriptors, and arrives on empty[s].
- Shared tiles have 128-byte rows with 16-byte chunk j of row r at chunk j ^ (r % 8) (the
  TMA 128-byte swizzle, which the descriptors name).
- The main loop issues no load or store instruction on shared memory: TMA writes it and
  the tensor cores read it, neither through the LSU instructions that the bank counts here
  are about. ``main_loop_accesses`` is empty for every warp.
- Epilogue (EPI = 1 and N % 8 == 0, so C's rows are 16-byte multiples and TMA can store
  them): a consumer converts its accumulators to bf16 and writes them, 64 columns at a
  time, into one half of its 2 x 8 KB staging buffer in the same swizzle (one 4-byte store
  per lane: rows r and r + 8, chunk j ^ (r % 8), word lane % 4), and its thread 0
  TMA-stores each 64 x 64 box. They are written as st.shared (STS in the SASS; a plain
  C++ store through the aligned pointer, rebuilt from an integer, would be a generic
  ST). With N % 8 != 0 the consumers store C straight from registers instead.

``shared_accesses(warp, k_step)`` lists those epilogue stores (once per tile, after the
last K step, whatever ``k_step`` says) so the banks view can show the only shared-memory
instructions these levels have; totals count them once per tile.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..ladder import registry
from .banks import HARDWARE, WARP_SIZE, BankRules
from .level_model import (
    LANES,
    LevelModel,
    Op,
    SharedCounts,
    SharedTotals,
    SmemArray,
    Space,
    Tile,
    WarpAccess,
    global_access,
)
from .persistent import TmaBox, TmaStageLoads, WorkPiece, grouped_tile, stream_k_pieces
from .pipeline import PipelineSchedule

WARPGROUP = 128  # threads
WARPS_PER_GROUP = WARPGROUP // WARP_SIZE
CONSUMER_ROWS = 64  # the M of every wgmma: one consumer warpgroup's rows
SWIZZLE_ROW_BYTES = 128
STAGING_COLS = 64  # columns of C per staging chunk (one 64 x 64 TMA store box)
STAGING_HALF_BYTES = 8192
# the device the ladder is measured on (the bundled recording, resources/sessions/
# h200-ladder.jsonl.gz: "sm_count": 132); a persistent grid depends on it
H200_SMS = 132


class Role(StrEnum):
    PRODUCER = "producer"
    CONSUMER = "consumer"


@dataclass(frozen=True, slots=True)
class WgmmaOp:
    """One wgmma a consumer issues in a K step: D[c] (+)= A[a] * B[b]^T, read from stage
    ``stage`` through descriptors starting at shared bytes ``desc_a``, ``desc_b``."""

    consumer: int
    index: int  # issue order inside the K step
    shape: str  # "m64n256k16"
    a: Tile  # rows of the block tile, columns of the K step (elements)
    b: Tile  # rows of Bt (columns of C), columns of the K step
    c: Tile  # the accumulators it updates, in the block tile
    desc_a: int
    desc_b: int


@dataclass(frozen=True, slots=True)
class PromoteOp:
    """FP8 only: acc[c] += tmp * scale_a[row] * scale_b[block] (FP32 FMAs, no shared
    memory), after the wgmmas of one half of the tile."""

    consumer: int
    index: int
    c: Tile


class WarpSpecialized(TmaStageLoads, LevelModel):
    """What the sm_90a levels share; subclasses set the wgmma shape and how many 64-row
    sub-tiles one consumer owns (fp8_deep: two, one after the other)."""

    persistent = True
    wgmma_k_bytes = 32  # K of one wgmma: 16 bf16 or 32 e4m3
    half_cols = 0  # 0: one wgmma covers BN; else parts of this width, each promoted (FP8)
    sub_tiles = 1  # 64-row sub-tiles per consumer warpgroup
    instruction = ""

    sass_warp = WARPS_PER_GROUP  # the first consumer warp: warp 0 is the producer's
    # registers per thread after setmaxnreg (the source's dec and inc; the pipeline view
    # says them, tests/kernels/models/test_register_split.py reads them from the source)
    producer_regs = 40
    consumer_regs = 232

    def setup(self, p: dict[str, int]) -> None:
        self.bm, self.bn, self.bk = p["BM"], p["BN"], p["BK"]
        self.stages, self.consumers, self.group_rows = p["STAGES"], p["CONSUMERS"], p["GM"]
        self.kpipe, self.epi = p.get("KPIPE", 0), p.get("EPI", 1)
        self.stream_k = int(p.get("SK", 0))  # 0, 1 or 2 as hopper.cuh's gs_work
        if self.bk * self.elem_bytes != SWIZZLE_ROW_BYTES:
            raise ValueError(f"BK = {self.bk} is not one {SWIZZLE_ROW_BYTES}-byte row")
        if self.bm != CONSUMER_ROWS * self.consumers:
            raise ValueError(f"BM = {self.bm} is not {CONSUMER_ROWS} rows per consumer")
        self.set_sizes()

    def set_sizes(self) -> None:
        """The block's threads and one stage's bytes, from the tile and the consumers."""
        self.threads = (self.consumers + 1) * WARPGROUP
        self.a_bytes = self.bm * self.bk * self.elem_bytes
        self.b_bytes = self.bn * self.bk * self.elem_bytes
        self.stage_bytes = self.a_bytes + self.b_bytes

    @property
    def empty_count(self) -> int:
        """The arrivals a stage's "empty" barrier waits for before the producer refills it
        (the source's mbarrier count): one from each consumer warpgroup."""
        return self.consumers

    # -- warpgroups ------------------------------------------------------------------
    @property
    def wgmma_n(self) -> int:
        return self.half_cols or self.bn

    @property
    def issued_halves(self) -> int:
        """The column groups of wgmma_n a consumer issues per K step (the whole tile)."""
        return self.bn // self.wgmma_n

    @property
    def wgmma_k(self) -> int:
        return self.wgmma_k_bytes // self.elem_bytes

    def warpgroup(self, warp: int) -> int:
        return warp // WARPS_PER_GROUP

    def role(self, warp: int) -> Role:
        return Role.PRODUCER if self.warpgroup(warp) == 0 else Role.CONSUMER

    def consumer_of(self, warp: int) -> int | None:
        """The consumer index (0..CONSUMERS-1) of a warp, None for the producer's."""
        g = self.warpgroup(warp)
        return None if g == 0 else g - 1

    @property
    def rows_per_consumer(self) -> int:
        return self.sub_tiles * CONSUMER_ROWS

    def consumer_rows(self, consumer: int) -> Tile:
        return Tile(consumer * self.rows_per_consumer, 0, self.rows_per_consumer, self.bn)

    def sub_rows(self, consumer: int, sub: int) -> int:
        """The first row (in the block tile) of a consumer's sub-tile."""
        return consumer * self.rows_per_consumer + sub * CONSUMER_ROWS

    def accumulators_per_thread(self) -> int:
        return self.rows_per_consumer * self.bn // WARPGROUP

    def thread_outputs(self, tid: int) -> np.ndarray:
        """Row i is accumulator register i of the thread (the wgmma D fragment: warp w of
        the consumer holds rows 16w + lane/4 and + 8; register 4j + {0, 1} holds columns
        8j + 2 (lane % 4) + {0, 1} of the first row, 4j + {2, 3} those of the second).
        The FP8 level's two m64n128 halves line up the same way (acc[64 h + i]); with two
        sub-tiles, register s * BN / 2 + i is register i of sub-tile s's fragment. The
        producer's threads own nothing."""
        c = self.consumer_of(tid // WARP_SIZE)
        if c is None:
            return np.zeros((0, 2), np.int64)
        t = tid % WARPGROUP
        reg = np.arange(self.accumulators_per_thread())
        per_sub = CONSUMER_ROWS * self.bn // WARPGROUP
        sub, i = reg // per_sub, reg % per_sub
        j, h, q = i // 4, (i // 2) % 2, i % 2
        rows = self.sub_rows(c, 0) + sub * CONSUMER_ROWS + (t // WARP_SIZE) * 16 \
            + (t % WARP_SIZE) // 4 + 8 * h
        cols = 8 * j + 2 * (t % 4) + q
        return np.stack([rows, cols], axis=1).astype(np.int64)

    def warp_mask(self, warp: int) -> np.ndarray:
        mask = np.zeros((self.bm, self.bn), bool)
        c = self.consumer_of(warp)
        if c is not None:
            for sub in range(self.sub_tiles):
                r0 = self.sub_rows(c, sub) + (warp % WARPS_PER_GROUP) * 16
                mask[r0:r0 + 16, :] = True
        return mask

    def warp_tile(self, warp: int) -> Tile:
        """The warp's 16 rows of its consumer's (first sub-)tile; an empty tile for the
        producer."""
        c = self.consumer_of(warp)
        if c is None:
            return Tile(0, 0, 0, 0)
        return Tile(self.sub_rows(c, 0) + (warp % WARPS_PER_GROUP) * 16, 0, 16, self.bn)

    # -- persistent grid ----------------------------------------------------------------
    def tile_coords(self, t: int, gm: int, gn: int) -> tuple[int, int]:
        return grouped_tile(t, gm, gn, self.group_rows)

    def block_order(self, gm: int, gn: int) -> np.ndarray:
        """The walk index t of each tile (block t % grid computes it, as its
        (t // grid)-th tile)."""
        order = np.empty((gm, gn), np.int64)
        for t in range(gm * gn):
            order[self.tile_coords(t, gm, gn)] = t
        return order

    def persistent_grid(self, M: int, N: int, sms: int = H200_SMS) -> int:
        gm, gn = self.grid(M, N)
        return sms if self.stream_k else min(gm * gn, sms)

    def block_work(self, block: int, M: int, N: int, K: int, sms: int = H200_SMS
                   ) -> list[WorkPiece]:
        """The pieces of work block ``block`` (one per SM) does, in order: K steps
        [k0, k1) of a tile (hopper.cuh: gs_work and gs_for_each_unit)."""
        gm, gn = self.grid(M, N)
        grid = self.persistent_grid(M, N, sms)
        return [WorkPiece(t, self.tile_coords(t, gm, gn), k0, k1)
                for t, k0, k1 in stream_k_pieces(block, grid, gm * gn, self.k_steps(K),
                                                 self.stream_k)]

    def block_tiles(self, block: int, M: int, N: int, sms: int = H200_SMS,
                    K: int | None = None) -> list[tuple[int, int]]:
        """The tiles block ``block`` (one per SM) works on, in order (with stream-K,
        some of them only for part of K; K matters only then, one K step if not given)."""
        return [w.tile for w in self.block_work(block, M, N, K or self.bk, sms)]

    def tile_owners(self, M: int, N: int, K: int, sms: int = H200_SMS) -> np.ndarray:
        """The block that stores each tile: the one that computes it whole or, for a
        tile cut by stream-K, the one with its first K step (it adds the others' partial
        sums)."""
        gm, gn = self.grid(M, N)
        owner = np.full((gm, gn), -1, np.int64)
        for b in range(self.persistent_grid(M, N, sms)):
            for w in self.block_work(b, M, N, K, sms):
                if w.k0 == 0:
                    owner[w.tile] = b
        return owner

    def stage_of(self, iteration: int) -> int:
        """The ring stage of a block's iteration-th K step (counted across its tiles)."""
        return iteration % self.stages

    # -- shared memory -----------------------------------------------------------------
    def smem_arrays(self) -> list[SmemArray]:
        """A and Bt stages (interleaved: stage s holds A then B at s * stage_bytes), then
        the consumers' staging buffers for C (stage 2c + half)."""
        cols = self.bk
        a = SmemArray("As", self.bm, cols, cols, self.elem_bytes, self.stages, 0, "A", True,
                      self.stage_bytes)
        b = SmemArray("Bs", self.bn, cols, cols, self.elem_bytes, self.stages, self.a_bytes,
                      "Bt", True, self.stage_bytes)
        cs = SmemArray("Cs", CONSUMER_ROWS, STAGING_COLS, STAGING_COLS, 2,
                       2 * self.consumers, self.stages * self.stage_bytes, "C", True)
        return [a, b, cs]

    def main_loop_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """Shared-memory load/store instructions of a warp in a K step: none. The
        producer's thread 0 issues TMA copies (the copy engine writes the stage) and the
        consumers' wgmmas read the stage through descriptors."""
        return []

    def epilogue_accesses(self, warp: int) -> list[WarpAccess]:
        """The staging stores of a consumer warp, once per tile: for each 64-column chunk
        ch, 8 groups j of 8 columns, rows r and r + 8 (r = 16 w + lane / 4); lane writes a
        bf16 pair (4 bytes) at row rr, chunk j ^ (rr % 8), word lane % 4."""
        c = self.consumer_of(warp)
        if c is None or not self.epi:
            return []
        cs = self.smem_arrays()[2]
        r = (warp % WARPS_PER_GROUP) * 16 + LANES // 4
        col = 2 * (LANES % 4)
        out = []
        for ch in range(self.bn // STAGING_COLS):
            half = 2 * c + ch % 2
            for j in range(STAGING_COLS // 8):
                for h in range(2):
                    out.append(WarpAccess(
                        f"epilogue STS.32 C cols {ch * STAGING_COLS + 8 * j}"
                        f"+[0,8) rows r{'+8' if h else ''}, chunk {ch}", "Cs", Space.SHARED,
                        Op.STORE, 4, cs.address(half, r + 8 * h, 8 * j + col), stage=half))
        return out

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """The warp's only shared-memory instructions: the epilogue stores (once per
        tile, after the last K step; the main loop has none, see main_loop_accesses)."""
        return self.main_loop_accesses(warp, k_step) + self.epilogue_accesses(warp)

    def a_stage_base(self, stage: int) -> int:
        """Where stage ``stage``'s A tile starts in shared memory (A then Bt per stage)."""
        return stage * self.stage_bytes

    def b_stage_base(self, stage: int) -> int:
        return stage * self.stage_bytes + self.a_bytes

    def wgmma_ops(self, consumer: int, k_step: int) -> list[WgmmaOp | PromoteOp]:
        """What consumer ``consumer`` issues on K step ``k_step``, in order: per sub-tile,
        per column part, the wgmmas over the K step (then its promotion, FP8)."""
        s = self.stage(k_step)
        n, kw = self.wgmma_n, self.wgmma_k
        shape = f"m{CONSUMER_ROWS}n{n}k{kw}"
        out: list[WgmmaOp | PromoteOp] = []
        for sub in range(self.sub_tiles):
            r0 = self.sub_rows(consumer, sub)
            for half in range(self.issued_halves):
                for kk in range(self.bk // kw):
                    out.append(WgmmaOp(
                        consumer, len(out), shape, Tile(r0, kk * kw, CONSUMER_ROWS, kw),
                        Tile(half * n, kk * kw, n, kw), Tile(r0, half * n, CONSUMER_ROWS, n),
                        self.a_stage_base(s) + r0 * SWIZZLE_ROW_BYTES + kk * self.wgmma_k_bytes,
                        self.b_stage_base(s) + half * n * SWIZZLE_ROW_BYTES
                        + kk * self.wgmma_k_bytes))
                if self.half_cols:
                    out.append(PromoteOp(consumer, len(out),
                                         Tile(r0, half * n, CONSUMER_ROWS, n)))
        return out

    def schedule(self, k_steps: int, tiles: int) -> PipelineSchedule:
        """The idealized producer/consumer timeline of one block over ``tiles`` tiles of
        ``k_steps`` K steps (the animation's clock; see ``pipeline``)."""
        return PipelineSchedule(self.stages, k_steps, tiles, len(self.wgmma_ops(0, 0)),
                                self.bn // STAGING_COLS, self.consumers)

    # -- global memory: tma_loads and global_accesses from TmaStageLoads ----------------
    def tma_store(self, N: int) -> bool:
        """C leaves through staging and TMA stores (else straight from registers)."""
        return bool(self.epi) and N % 8 == 0

    def tma_stores(self, consumer: int, M: int, N: int,
                   block: tuple[int, int] = (0, 0)) -> list[TmaBox]:
        """Consumer ``consumer``'s 64 x 64 boxes of C (bf16), one per staging chunk."""
        if not self.tma_store(N):
            return []
        row = block[0] * self.bm + consumer * CONSUMER_ROWS
        base = self.stages * self.stage_bytes + consumer * 2 * STAGING_HALF_BYTES
        return [TmaBox("C", "C", Op.STORE, row, block[1] * self.bn + ch * STAGING_COLS,
                       CONSUMER_ROWS, STAGING_COLS, 2, M, N,
                       base + (ch % 2) * STAGING_HALF_BYTES, ch % 2)
                for ch in range(self.bn // STAGING_COLS)]

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """The first warp of each consumer (its thread 0 issues the TMA stores), or with
        N % 8 != 0 every consumer warp's direct stores of its sub-tiles
        (gs_store_acc_bf16): a bf16 pair (4 bytes) per lane, two single bf16 stores where
        N is odd."""
        c = self.consumer_of(warp)
        if c is None:
            return []
        if self.tma_store(N):
            if warp % WARPS_PER_GROUP:
                return []
            return [a for box in self.tma_stores(c, M, N, block) for a in box.warp_accesses()]
        out = []
        for sub in range(self.sub_tiles):
            r = (block[0] * self.bm + self.sub_rows(c, sub) + (warp % WARPS_PER_GROUP) * 16
                 + LANES // 4)
            tag = f" sub {sub}" if self.sub_tiles > 1 else ""
            for j in range(self.bn // 8):
                col = block[1] * self.bn + 8 * j + 2 * (LANES % 4)
                for h in range(2):
                    row = r + 8 * h
                    ok = row < M
                    if N % 2 == 0:
                        out.append(global_access(f"C bf16x2{tag} cols 8*{j}+, row+{8 * h}",
                                                 "C", row * N + col, 4, 2, ok & (col < N),
                                                 Op.STORE))
                        continue
                    for q in range(2):
                        out.append(global_access(f"C bf16{tag} cols 8*{j}+{q}, row+{8 * h}",
                                                 "C", row * N + col + q, 2, 2,
                                                 ok & (col + q < N), Op.STORE))
        return out

    # -- totals --------------------------------------------------------------------------
    def epilogue_counts(self, rules: BankRules = HARDWARE) -> SharedCounts:
        """Shared stores of one tile's epilogue (all consumer warps)."""
        total = SharedCounts()
        for w in range(WARPS_PER_GROUP, self.warps):
            for acc in self.epilogue_accesses(w):
                rep = acc.banks(rules)
                total = total + SharedCounts(1, rep.wavefronts, rep.conflicts)
        return total

    def shape_caveat(self, M: int, N: int, K: int) -> str:
        notes = []
        multiple = registry.get(self.level_id).k_multiple if self.level_id else 1
        if K % multiple:
            notes.append(f"the host refuses K % {multiple} != 0 (counted as if it ran)")
        if not self.tma_store(N):
            notes.append("N % 8 != 0: no TMA store, C goes out straight from registers "
                         "(no staging stores)")
        return "; ".join(notes)

    def totals(self, M: int, N: int, K: int, rules: BankRules = HARDWARE) -> SharedTotals:
        """No shared load, store or cp.async in the main loop; the epilogue's staging
        stores once per tile. ``blocks`` counts tiles (the launch has min(tiles, SMs)
        persistent blocks walking them)."""
        gm, gn = self.grid(M, N)
        tiles = gm * gn
        steps = self.k_steps(K)
        loop = {op: SharedCounts() for op in Op}
        for r in range(min(self.stages, steps)):
            n_r = len(range(r, steps, self.stages))
            for op, c in self.step_counts(r, rules).items():
                loop[op] = loop[op] + c.times(n_r * tiles)
        st = loop[Op.STORE]
        if self.tma_store(N):
            st = st + self.epilogue_counts(rules).times(tiles)
        return SharedTotals(self.level_id, M, N, K, tiles, steps, loop[Op.LOAD], st,
                            loop[Op.CP_ASYNC], True, self.shape_caveat(M, N, K))


class WgmmaTma(WarpSpecialized):
    level_id = "wgmma_tma"
    elem_bytes = 2
    instruction = "wgmma.mma_async.m64n256k16.f32.bf16.bf16"
    notes = ("Warp-specialized and persistent: warpgroup 0 (producer) fills a ring of "
             "stages by TMA, warpgroups 1 and 2 (consumers, 64 rows each) multiply with "
             "wgmma straight from shared memory. No shared load instruction in the main "
             "loop; the only LSU shared accesses are the epilogue's staging stores, "
             "conflict-free by the 128-byte swizzle (switch the XOR swizzle on with B = 0 "
             "to see them 8-way).")


class WgmmaStreamK(WgmmaTma):
    level_id = "wgmma_stream_k"
    notes = WgmmaTma.notes + (" The last wave of tiles is shared out by K steps "
                              "(stream-K): see the pipeline view's block walk.")

"""mma_sync: FP16 Tensor Cores through ldmatrix + mma.sync.m16n8k16, swizzled tiles.

Parameters BM, BN, BK, WM, WN, STAGES (and GM, the block order). (BM/WM) x (BN/WN) warps,
wm0 = (warp / (BN/WN))*WM, wn0 = (warp % (BN/WN))*WN; a warp holds (WM/16) x (WN/8)
m16n8 accumulators. Shared rows are stored swizzled, not padded: 16-byte chunk c of row r
at chunk c ^ (r % 8) (``gs_swz``), A as BM rows of BK halves, B as BK rows of BN halves
(k-major). Tiles arrive by 16-byte cp.async (chunk e = tid + p*THREADS at row
e / (cols/8), chunk e % (cols/8)) into a ring of STAGES stages.

Per 16-deep step kk a warp issues, with the lane addresses written out in the source:
A: ldmatrix.x4 at row wm0 + 16 i + lane % 16, chunk 2 kk + lane / 16 (i < WM/16);
B: ldmatrix.x4.trans at row 16 kk + 8 ((lane/8) % 2) + lane % 8, chunk
(wn0 + 16 j)/8 + lane / 16 (j < WN/16). Each 8-lane phase reads eight rows at one logical
chunk, which the swizzle spreads over eight different 16-byte bank groups. The fragments
of step kk + 1 (and of the next tile's first step) are loaded while kk multiplies; per K
step the count is the same.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .banks import HARDWARE, BankRules
from .level_model import (
    LANES,
    Op,
    SharedCounts,
    SharedTotals,
    SmemArray,
    Space,
    Tile,
    WarpAccess,
    global_access,
    lanes_of,
)
from .persistent import TmaBox, TmaStageLoads
from .wmma import TensorCoreTiles

CHUNK_HALVES = 8
# an element of C and a pair of them, by bytes: what the stores' labels call them
C_ELEMENT_NAMES = {4: ("float", "float2"), 2: ("half", "half2")}


class MmaSync(TensorCoreTiles):
    level_id = "mma_sync"
    notes = ("ldmatrix addresses are written out in the source, and the chunk ^ row % 8 "
             "swizzle makes every ldmatrix phase and every cp.async conflict-free; switch the "
             "XOR swizzle on with B = 0 to see the plain layout (8-way).")

    def thread_outputs(self, tid: int) -> np.ndarray:
        """m16n8 accumulator layout: c0, c1 at row lane/4, columns 2 (lane % 4) + {0, 1};
        c2, c3 eight rows down."""
        wm0, wn0 = self.warp_origin(tid // 32)
        lane = tid % 32
        out = [(wm0 + i * 16 + lane // 4 + h * 8, wn0 + j * 8 + (lane % 4) * 2 + q)
               for i in range(self.wm // 16) for j in range(self.wn // 8)
               for h in range(2) for q in range(2)]
        return np.array(out, np.int64)

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", self.bm, self.bk, self.bk, 2, self.stages, 0, "A", True)
        return [a, SmemArray("Bs", self.bk, self.bn, self.bn, 2, self.stages, a.size_bytes,
                             "B", True)]

    def _chunks(self, warp: int, rows: int, cols: int) -> list[tuple[np.ndarray, np.ndarray]]:
        tid = lanes_of(warp)
        per_row = cols // CHUNK_HALVES
        n = rows * cols // CHUNK_HALVES // self.threads
        return [((tid + p * self.threads) // per_row,
                 ((tid + p * self.threads) % per_row) * CHUNK_HALVES) for p in range(n)]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        s = self.stage(k_step)
        out = [WarpAccess(f"cp.async.16 As chunk {p}", "As", Space.SHARED, Op.CP_ASYNC, 16,
                          a_s.address(s, r, c), stage=s)
               for p, (r, c) in enumerate(self._chunks(warp, self.bm, self.bk))]
        out += [WarpAccess(f"cp.async.16 Bs chunk {p}", "Bs", Space.SHARED, Op.CP_ASYNC, 16,
                           b_s.address(s, r, c), stage=s)
                for p, (r, c) in enumerate(self._chunks(warp, self.bk, self.bn))]
        wm0, wn0 = self.warp_origin(warp)
        for kk in range(self.bk // 16):
            for i in range(self.wm // 16):
                row = wm0 + i * 16 + LANES % 16
                col = (kk * 2 + LANES // 16) * CHUNK_HALVES
                out.append(WarpAccess(f"ldmatrix.x4 A i={i}  kk={kk}", "As", Space.SHARED,
                                      Op.LOAD, 16, a_s.address(s, row, col), stage=s))
            for j in range(self.wn // 16):
                row = kk * 16 + ((LANES // 8) % 2) * 8 + LANES % 8
                col = ((wn0 + j * 16) // 8 + LANES // 16) * CHUNK_HALVES
                out.append(WarpAccess(f"ldmatrix.x4.trans B j={j}  kk={kk}", "Bs",
                                      Space.SHARED, Op.LOAD, 16, b_s.address(s, row, col),
                                      stage=s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        k0 = k_step * self.bk
        out = []
        for p, (r, c) in enumerate(self._chunks(warp, self.bm, self.bk)):
            row, col = block[0] * self.bm + r, k0 + c
            out.append(global_access(f"cp.async.16 A chunk {p}", "A", row * K + col, 16, 2,
                                     (row < M) & (col < K)))
        for p, (r, c) in enumerate(self._chunks(warp, self.bk, self.bn)):
            row, col = k0 + r, block[1] * self.bn + c
            out.append(global_access(f"cp.async.16 B chunk {p}", "B", row * N + col, 16, 2,
                                     (row < K) & (col < N)))
        return out

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        return self.c_stores(warp, M, N, block, pairs=True)

    def c_stores(self, warp: int, M: int, N: int, block: tuple[int, int],
                 pairs: bool, elem_bytes: int = 4) -> list[WarpAccess]:
        """Warp ``warp`` (of the warp tiles) storing its m16n8 accumulators as elements of
        ``elem_bytes`` (4: FP32, 2: FP16): per half h, a pair per lane (a float2, or two
        halves in one word) at row lane / 4 + 8 h, columns 2 (lane % 4) + {0, 1}; or, with
        ``pairs`` False, the two elements one at a time."""
        one, two = C_ELEMENT_NAMES[elem_bytes]
        wm0, wn0 = self.warp_origin(warp)
        out = []
        for i in range(self.wm // 16):
            for j in range(self.wn // 8):
                for h in range(2):
                    row = block[0] * self.bm + wm0 + i * 16 + LANES // 4 + h * 8
                    col = block[1] * self.bn + wn0 + j * 8 + (LANES % 4) * 2
                    if pairs:
                        out.append(global_access(f"{two} C i={i} j={j} h={h}", "C",
                                                 row * N + col, 2 * elem_bytes, elem_bytes,
                                                 (row < M) & (col < N), Op.STORE))
                        continue
                    for q in range(2):
                        out.append(global_access(f"{one} C i={i} j={j} h={h} +{q}", "C",
                                                 row * N + col + q, elem_bytes, elem_bytes,
                                                 (row < M) & (col + q < N), Op.STORE))
        return out


class MmaPersistent(MmaSync):
    """mma_persistent: mma_sync's copies and ldmatrix addresses (its offsets are set up
    once per thread, the same addresses); a block walks several output tiles, which the
    per-K-step counts do not see."""

    level_id = "mma_persistent"


PRODUCER_WARPS = 4  # warpgroup 0: its thread 0 issues the TMA copies
C_BOX_ROWS = 32  # rows of one TMA store of C (FP16: 32 x 64, kernels/engine/level_launch.py)


class MmaTma(TmaStageLoads, MmaPersistent):
    """mma_tma: mma_persistent's warps and fragments behind a producer warpgroup.

    Warps 0-3 are the producer (they own no outputs; warp 0's thread 0 copies, per K step,
    the A box BM x BK and the Bt box BN x BK by TMA into stage s, A then Bt, both in
    128-byte swizzled rows). Warp 4 + w is consumer warp w of mma_persistent's layout. Bt
    rows are columns n of C, so B's fragments come by the same non-transposed ldmatrix.x4
    as A's: lane l addresses row wn0 + 16 j + 8 (l / 16) + l % 8, chunk 2 kk + (l / 8) % 2.
    The math warps issue no copy; their only shared instructions in the K loop are the
    ldmatrix loads (``main_loop_accesses``).

    Epilogue (C is FP16; N % 8 == 0, so a C tensor map exists): math warp w writes its
    WM x WN tile, once per tile, into its own buffer Cs[w] of WM rows of 128 bytes (64
    halves) after the stages, in the 128-byte swizzle, by stmatrix.x4: one per 16 x 16
    block (rows 16 mb, columns 16 p); lane l gives the address of row 16 mb + 8 ((l / 8) %
    2) + l % 8, chunk 2 p + l / 16, a 16-byte row of matrix l / 8 (``epilogue_accesses``).
    Its lane 0 then TMA-stores the buffer as two boxes of 32 rows (``tma_stores``). With
    N % 8 != 0 each lane stores its FP16 pairs to C instead (``c_stores``, 2-byte
    elements).
    """

    level_id = "mma_tma"
    sass_warp = PRODUCER_WARPS
    notes = ("A producer warpgroup (warps 0-3) fills the stages by TMA; the copy engine's "
             "writes are not LSU instructions, so the K loop's only shared accesses are the "
             "consumers' ldmatrix loads, conflict-free by the TMA's 128-byte swizzle. Once "
             "a tile, each math warp stages its C as FP16 by 16 stmatrix.x4 (conflict-free "
             "in the same swizzle) for two TMA stores.")

    def setup(self, p: dict[str, int]) -> None:
        super().setup(p)
        self.threads += PRODUCER_WARPS * 32
        self.row_bytes = self.bk * self.elem_bytes
        self.a_bytes, self.b_bytes = self.bm * self.row_bytes, self.bn * self.row_bytes
        self.stage_bytes = self.a_bytes + self.b_bytes
        self.math_warps = (self.bm // self.wm) * (self.bn // self.wn)
        self.c_elem_bytes = 2  # FP16, as its reference writes C
        self.staging_bytes = self.wm * self.wn * self.c_elem_bytes  # a math warp's Cs

    def caveat(self) -> str:
        return ""  # one K loop for every shape: TMA zero-fills the edges

    def consumer_warp(self, warp: int) -> int | None:
        """The warp's index among the math warps (None for the producer's)."""
        return None if warp < PRODUCER_WARPS else warp - PRODUCER_WARPS

    def thread_outputs(self, tid: int) -> np.ndarray:
        if tid < PRODUCER_WARPS * 32:
            return np.zeros((0, 2), np.int64)
        return super().thread_outputs(tid - PRODUCER_WARPS * 32)

    def warp_mask(self, warp: int) -> np.ndarray:
        mask = np.zeros((self.bm, self.bn), bool)
        w = self.consumer_warp(warp)
        if w is not None:
            r0, c0 = self.warp_origin(w)
            mask[r0:r0 + self.wm, c0:c0 + self.wn] = True
        return mask

    def warp_tile(self, warp: int) -> Tile:
        w = self.consumer_warp(warp)
        if w is None:
            return Tile(0, 0, 0, 0)
        r0, c0 = self.warp_origin(w)
        return Tile(r0, c0, self.wm, self.wn)

    def smem_arrays(self) -> list[SmemArray]:
        """Stage s holds A (BM rows) then Bt (BN rows) at s * stage_bytes; after the
        stages, math warp w's C staging Cs[w] (its WM x WN tile in FP16)."""
        a = SmemArray("As", self.bm, self.bk, self.bk, 2, self.stages, 0, "A", True,
                      self.stage_bytes)
        b = SmemArray("Bs", self.bn, self.bk, self.bk, 2, self.stages, self.a_bytes, "Bt",
                      True, self.stage_bytes)
        cs = SmemArray("Cs", self.wm, self.wn, self.wn, self.c_elem_bytes, self.math_warps,
                       self.stages * self.stage_bytes, "C", True)
        return [a, b, cs]

    def main_loop_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """A math warp's ldmatrix loads of a K step (the producer's copies go through the
        TMA unit, not the LSU: none)."""
        w = self.consumer_warp(warp)
        if w is None:
            return []
        a_s, b_s = self.smem_arrays()[:2]
        s = self.stage(k_step)
        wm0, wn0 = self.warp_origin(w)
        out = []
        for kk in range(self.bk // 16):
            for i in range(self.wm // 16):
                out.append(WarpAccess(
                    f"ldmatrix.x4 A i={i}  kk={kk}", "As", Space.SHARED, Op.LOAD, 16,
                    a_s.address(s, wm0 + i * 16 + LANES % 16,
                                (kk * 2 + LANES // 16) * CHUNK_HALVES), stage=s))
            for j in range(self.wn // 16):
                out.append(WarpAccess(
                    f"ldmatrix.x4 Bt j={j}  kk={kk}", "Bs", Space.SHARED, Op.LOAD, 16,
                    b_s.address(s, wn0 + j * 16 + (LANES // 16) * 8 + LANES % 8,
                                (kk * 2 + (LANES // 8) % 2) * CHUNK_HALVES), stage=s))
        return out

    def epilogue_accesses(self, warp: int) -> list[WarpAccess]:
        """A math warp's staging of its C tile, once per tile: an stmatrix.x4 per 16 x 16
        block, each lane writing one 16-byte row of one of its four 8 x 8 matrices (lane
        l: matrix l / 8, rows 8 of them apart by the matrix, chunk 2 p + l / 16)."""
        w = self.consumer_warp(warp)
        if w is None:
            return []
        cs = self.smem_arrays()[2]
        q, j = LANES // 8, LANES % 8
        out = []
        for mb in range(self.wm // 16):
            for p in range(self.wn // 16):
                row, chunk = mb * 16 + (q % 2) * 8 + j, 2 * p + q // 2
                out.append(WarpAccess(
                    f"stmatrix.x4 C rows {16 * mb}+16, cols {16 * p}+16", "Cs", Space.SHARED,
                    Op.STORE, 16, cs.address(w, row, chunk * CHUNK_HALVES), stage=w))
        return out

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """The K step's ldmatrix loads, then the tile's stmatrix stores (once per tile,
        after its last K step, whatever ``k_step`` says; the totals count them so)."""
        return self.main_loop_accesses(warp, k_step) + self.epilogue_accesses(warp)

    # -- C ---------------------------------------------------------------------------
    def tma_store(self, N: int) -> bool:
        """C leaves by TMA stores (N % 8 == 0: a C map's rows must be 16-byte multiples),
        else straight from registers."""
        return N % 8 == 0

    def tma_stores(self, warp: int, M: int, N: int,
                   block: tuple[int, int] = (0, 0)) -> list[TmaBox]:
        """A math warp's TMA stores of its staged tile: boxes of C_BOX_ROWS x WN, from the
        top (none where N % 8 != 0, or for a producer warp)."""
        w = self.consumer_warp(warp)
        if w is None or not self.tma_store(N):
            return []
        wm0, wn0 = self.warp_origin(w)
        base = self.stages * self.stage_bytes + w * self.staging_bytes
        box_bytes = C_BOX_ROWS * self.wn * self.c_elem_bytes
        return [TmaBox("C", "C", Op.STORE, block[0] * self.bm + wm0 + b * C_BOX_ROWS,
                       block[1] * self.bn + wn0, C_BOX_ROWS, self.wn, self.c_elem_bytes, M, N,
                       base + b * box_bytes, b)
                for b in range(self.wm // C_BOX_ROWS)]

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """A math warp's C: its TMA boxes (32 rows at a time) where the C map exists, else
        an FP16 pair per lane per m16n8 half, two halves one at a time where N is odd (a
        pair needs 4-byte aligned rows)."""
        w = self.consumer_warp(warp)
        if w is None:
            return []
        if self.tma_store(N):
            return [a for box in self.tma_stores(warp, M, N, block) for a in box.warp_accesses()]
        return self.c_stores(w, M, N, block, pairs=N % 2 == 0, elem_bytes=self.c_elem_bytes)

    # -- totals ----------------------------------------------------------------------
    def epilogue_counts(self, rules: BankRules = HARDWARE) -> SharedCounts:
        """Shared stores of one tile's epilogue (all math warps)."""
        total = SharedCounts()
        for w in range(PRODUCER_WARPS, self.warps):
            for acc in self.epilogue_accesses(w):
                rep = acc.banks(rules)
                total = total + SharedCounts(1, rep.wavefronts, rep.conflicts)
        return total

    def totals(self, M: int, N: int, K: int, rules: BankRules = HARDWARE) -> SharedTotals:
        """The K loop's ldmatrix loads per K step, and with a C map the epilogue's
        stmatrix stores once per tile (``blocks`` counts tiles: the launch has min(tiles,
        SMs) persistent blocks walking them)."""
        out = super().totals(M, N, K, rules)
        if not self.tma_store(N):
            return replace(out, caveat="N % 8 != 0: no TMA store, C goes out straight from "
                                       "registers (no staging stores)")
        return replace(out, st=out.st + self.epilogue_counts(rules).times(out.blocks))

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

import numpy as np

from .level_model import LANES, Op, SmemArray, Space, Tile, WarpAccess, global_access, lanes_of
from .persistent import TmaStageLoads
from .wmma import TensorCoreTiles

CHUNK_HALVES = 8


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
                 pairs: bool) -> list[WarpAccess]:
        """Warp ``warp`` (of the warp tiles) storing its m16n8 accumulators: per half h,
        a float2 per lane at row lane / 4 + 8 h, columns 2 (lane % 4) + {0, 1}; or, with
        ``pairs`` False, the two floats one at a time."""
        wm0, wn0 = self.warp_origin(warp)
        out = []
        for i in range(self.wm // 16):
            for j in range(self.wn // 8):
                for h in range(2):
                    row = block[0] * self.bm + wm0 + i * 16 + LANES // 4 + h * 8
                    col = block[1] * self.bn + wn0 + j * 8 + (LANES % 4) * 2
                    if pairs:
                        out.append(global_access(f"float2 C i={i} j={j} h={h}", "C",
                                                 row * N + col, 8, 4, (row < M) & (col < N),
                                                 Op.STORE))
                        continue
                    for q in range(2):
                        out.append(global_access(f"float C i={i} j={j} h={h} +{q}", "C",
                                                 row * N + col + q, 4, 4,
                                                 (row < M) & (col + q < N), Op.STORE))
        return out


class MmaPersistent(MmaSync):
    """mma_persistent: mma_sync's copies and ldmatrix addresses (its offsets are set up
    once per thread, the same addresses); a block walks several output tiles, which the
    per-K-step counts do not see."""

    level_id = "mma_persistent"


PRODUCER_WARPS = 4  # warpgroup 0: its thread 0 issues the TMA copies


class MmaTma(TmaStageLoads, MmaPersistent):
    """mma_tma: mma_persistent's warps and fragments behind a producer warpgroup.

    Warps 0-3 are the producer (they own no outputs; warp 0's thread 0 copies, per K step,
    the A box BM x BK and the Bt box BN x BK by TMA into stage s, A then Bt, both in
    128-byte swizzled rows). Warp 4 + w is consumer warp w of mma_persistent's layout. Bt
    rows are columns n of C, so B's fragments come by the same non-transposed ldmatrix.x4
    as A's: lane l addresses row wn0 + 16 j + 8 (l / 16) + l % 8, chunk 2 kk + (l / 8) % 2.
    The math warps issue no copy; their only shared instructions are the ldmatrix loads.
    """

    level_id = "mma_tma"
    sass_warp = PRODUCER_WARPS
    notes = ("A producer warpgroup (warps 0-3) fills the stages by TMA; the copy engine's "
             "writes are not LSU instructions, so the K loop's only shared accesses are the "
             "consumers' ldmatrix loads, conflict-free by the TMA's 128-byte swizzle.")

    def setup(self, p: dict[str, int]) -> None:
        super().setup(p)
        self.threads += PRODUCER_WARPS * 32
        self.row_bytes = self.bk * self.elem_bytes
        self.a_bytes, self.b_bytes = self.bm * self.row_bytes, self.bn * self.row_bytes
        self.stage_bytes = self.a_bytes + self.b_bytes

    def caveat(self) -> str:
        return ""  # one path: TMA zero-fills the edges

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
        """Stage s holds A (BM rows) then Bt (BN rows) at s * stage_bytes."""
        a = SmemArray("As", self.bm, self.bk, self.bk, 2, self.stages, 0, "A", True,
                      self.stage_bytes)
        return [a, SmemArray("Bs", self.bn, self.bk, self.bk, 2, self.stages, self.a_bytes,
                             "Bt", True, self.stage_bytes)]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        w = self.consumer_warp(warp)
        if w is None:
            return []  # the producer's copies go through the TMA unit, not the LSU
        a_s, b_s = self.smem_arrays()
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

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """A math warp's C: a float2 per lane per m16n8 half, two floats where N is odd
        (a float2 needs 8-byte aligned rows)."""
        w = self.consumer_warp(warp)
        return [] if w is None else self.c_stores(w, M, N, block, pairs=N % 2 == 0)

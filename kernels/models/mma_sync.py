"""mma_sync: FP16 Tensor Cores through ldmatrix + mma.sync.m16n8k16, swizzled tiles.

Parameters BM, BN, BK, WM, WN, STAGES (and SWZ, the block order). (BM/WM) x (BN/WN) warps,
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

from .level_model import (
    LANES,
    Op,
    SmemArray,
    Space,
    WarpAccess,
    global_access,
    lanes_of,
)
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
        wm0, wn0 = self.warp_origin(warp)
        out = []
        for i in range(self.wm // 16):
            for j in range(self.wn // 8):
                for h in range(2):
                    row = block[0] * self.bm + wm0 + i * 16 + LANES // 4 + h * 8
                    col = block[1] * self.bn + wn0 + j * 8 + (LANES % 4) * 2
                    out.append(global_access(f"float2 C i={i} j={j} h={h}", "C",
                                             row * N + col, 8, 4, (row < M) & (col < N),
                                             Op.STORE))
        return out


class MmaPersistent(MmaSync):
    """mma_persistent: mma_sync's copies and ldmatrix addresses (its offsets are set up
    once per thread, the same addresses); a block walks several output tiles, which the
    per-K-step counts do not see."""

    level_id = "mma_persistent"

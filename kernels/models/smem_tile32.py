"""smem_tiled, smem_padded, double_buffer: 32x32 tiles of A and B in shared memory.

Block 32x32 threads, thread (tx, ty) computes C[by*32 + ty][bx*32 + tx]. Each K step it
stores As[ty][tx] = A[row][k0 + tx] and Bs[ty][tx] = B[k0 + ty][col], then for k in
0..31 reads As[ty][k] (the same word for the whole warp: a broadcast) and Bs[k][tx]
(32 consecutive words). Neither read nor store conflicts, so one word of padding (32x33)
changes no count; double buffering keeps two padded stages.
"""

from __future__ import annotations

import numpy as np

from gemmscope.kernels.models.level_model import (
    LANES,
    LevelModel,
    Op,
    SmemArray,
    Space,
    WarpAccess,
    global_access,
)

TILE = 32


class SmemTile32(LevelModel):
    bm = bn = bk = TILE
    threads = TILE * TILE
    pad = 0

    def thread_outputs(self, tid: int) -> np.ndarray:
        return np.array([[tid // TILE, tid % TILE]])

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", TILE, TILE, TILE + self.pad, 4, self.stages, 0, "A")
        b = SmemArray("Bs", TILE, TILE, TILE + self.pad, 4, self.stages, a.size_bytes, "B")
        return [a, b]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        s = self.stage(k_step)
        ty, tx = warp, LANES
        out = [WarpAccess("As[ty][tx] = A[row][k0+tx]", "As", Space.SHARED, Op.STORE, 4,
                          a_s.address(s, ty, tx), stage=s),
               WarpAccess("Bs[ty][tx] = B[k0+ty][col]", "Bs", Space.SHARED, Op.STORE, 4,
                          b_s.address(s, ty, tx), stage=s)]
        for k in range(TILE):
            out.append(WarpAccess(f"As[ty][k]  k={k}", "As", Space.SHARED, Op.LOAD, 4,
                                  a_s.address(s, np.full(32, ty), k), stage=s))
            out.append(WarpAccess(f"Bs[k][tx]  k={k}", "Bs", Space.SHARED, Op.LOAD, 4,
                                  b_s.address(s, k, tx), stage=s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        ty, tx = warp, LANES
        row = block[0] * TILE + ty
        col = block[1] * TILE + tx
        k0 = k_step * TILE
        va = (row < M) & (k0 + tx < K)
        vb = (k0 + ty < K) & (col < N)
        return [global_access("A[row][k0+tx]", "A", row * K + k0 + tx, 4, 4, va),
                global_access("B[k0+ty][col]", "B", (k0 + ty) * N + col, 4, 4, vb)]

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        row = block[0] * TILE + warp
        col = block[1] * TILE + LANES
        return [global_access("C[row][col]", "C", row * N + col, 4, 4,
                              (row < M) & (col < N), Op.STORE)]


class SmemTiled(SmemTile32):
    level_id = "smem_tiled"
    notes = ("As[ty][k] is one word for the whole warp (broadcast) and Bs[k][tx] 32 "
             "consecutive words: no bank conflicts to remove.")


class SmemPadded(SmemTile32):
    level_id = "smem_padded"
    pad = 1
    notes = ("Rows of 33 words: the accesses had no conflicts, so padding changes no "
             "count; it would matter for a column read such as As[k][ty].")


class DoubleBuffer(SmemTile32):
    level_id = "double_buffer"
    pad = 1
    stages = 2
    notes = "Two padded stages, K step i in stage i % 2; the same conflict-free pattern."

"""smem_tiled, smem_padded, double_buffer: TILE x TILE tiles of A and B in shared memory.

Block TILE x TILE threads (32x32), thread (tx, ty) computes C[by*T + ty][bx*T + tx]. Each
K step it stores As[ty][tx] = A[row][k0 + tx] and Bs[ty][tx] = B[k0 + ty][col], then for
k in 0..T-1 reads As[ty][k] (one address for the whole warp: a broadcast) and Bs[k][tx]
(32 consecutive words). Nothing conflicts, so the one word of padding of smem_padded
(rows of T + 1) changes no conflict count. It does change the instructions: with
unpadded, 16-byte aligned rows the compiler reads four k of As[ty][.] with one LDS.128
(seen in the SASS of smem_tiled and double_buffer); a 33-word row breaks that alignment,
so smem_padded reads As with LDS.32. double_buffer (unpadded, as its .cu says) keeps two
stages: K step t lives in stage t % 2.
"""

from __future__ import annotations

import numpy as np

from .level_model import LANES, LevelModel, Op, SmemArray, Space, WarpAccess, global_access


class SmemTile(LevelModel):
    pad = 0

    def setup(self, p: dict[str, int]) -> None:
        self.bm = self.bn = self.bk = p["TILE"]
        self.threads = p["TILE"] ** 2

    @property
    def a_read_bytes(self) -> int:
        """16 when rows stay 16-byte aligned (the compiler merges 4 k into LDS.128)."""
        return 16 if ((self.bk + self.pad) * 4) % 16 == 0 and self.bk % 4 == 0 else 4

    def thread_outputs(self, tid: int) -> np.ndarray:
        return np.array([[tid // self.bn, tid % self.bn]])

    def smem_arrays(self) -> list[SmemArray]:
        t = self.bk
        a = SmemArray("As", t, t, t + self.pad, 4, self.stages, 0, "A")
        b = SmemArray("Bs", t, t, t + self.pad, 4, self.stages, a.size_bytes, "B")
        return [a, b]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        s = self.stage(k_step)
        rows_per_warp = 32 // self.bn
        ty = warp * rows_per_warp + LANES // self.bn
        tx = LANES % self.bn
        out = [WarpAccess("As[ty][tx] = A[row][k0+tx]", "As", Space.SHARED, Op.STORE, 4,
                          a_s.address(s, ty, tx), stage=s),
               WarpAccess("Bs[ty][tx] = B[k0+ty][col]", "Bs", Space.SHARED, Op.STORE, 4,
                          b_s.address(s, ty, tx), stage=s)]
        step = self.a_read_bytes // 4
        for k in range(self.bk):
            if k % step == 0:
                label = f"As[ty][k..k+3]  k={k}" if step > 1 else f"As[ty][k]  k={k}"
                out.append(WarpAccess(label, "As", Space.SHARED, Op.LOAD, self.a_read_bytes,
                                      a_s.address(s, ty, k), stage=s))
            out.append(WarpAccess(f"Bs[k][tx]  k={k}", "Bs", Space.SHARED, Op.LOAD, 4,
                                  b_s.address(s, k, tx), stage=s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        rows_per_warp = 32 // self.bn
        ty = warp * rows_per_warp + LANES // self.bn
        tx = LANES % self.bn
        row = block[0] * self.bm + ty
        col = block[1] * self.bn + tx
        k0 = k_step * self.bk
        va = (row < M) & (k0 + tx < K)
        vb = (k0 + ty < K) & (col < N)
        return [global_access("A[row][k0+tx]", "A", row * K + k0 + tx, 4, 4, va),
                global_access("B[k0+ty][col]", "B", (k0 + ty) * N + col, 4, 4, vb)]

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        rows_per_warp = 32 // self.bn
        row = block[0] * self.bm + warp * rows_per_warp + LANES // self.bn
        col = block[1] * self.bn + LANES % self.bn
        return [global_access("C[row][col]", "C", row * N + col, 4, 4,
                              (row < M) & (col < N), Op.STORE)]


class SmemTiled(SmemTile):
    level_id = "smem_tiled"
    notes = ("As[ty][k] is one address for the whole warp (a broadcast, read 4 k at a time "
             "with LDS.128) and Bs[k][tx] 32 consecutive words: no bank conflicts.")


class SmemPadded(SmemTile):
    level_id = "smem_padded"
    pad = 1
    notes = ("Rows of 33 words: the accesses had no conflicts, so padding removes none; it "
             "breaks the 16-byte alignment, so As is read with LDS.32 instead of LDS.128.")


class DoubleBuffer(SmemTile):
    level_id = "double_buffer"
    stages = 2
    notes = "Two unpadded stages, K step t in stage t % 2; the same conflict-free pattern."

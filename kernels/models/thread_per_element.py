"""naive and coalesced: one thread per element of C, no shared memory.

Block BLOCK x BLOCK threads. ``naive``: threadIdx.x walks rows of C (row = bx*BLOCK + tx,
col = by*BLOCK + ty), so a warp's 32 lanes read A and write C a whole row apart.
``coalesced``: threadIdx.x walks columns (col = bx*BLOCK + tx), so a warp reads 32
consecutive floats of B and writes 32 consecutive floats of C. Each iteration of the k
loop is one "K step" here (bk = 1).
"""

from __future__ import annotations

import numpy as np

from .level_model import LANES, LevelModel, Op, WarpAccess, global_access


class ThreadPerElement(LevelModel):
    row_major_lanes = False  # True: lanes walk rows (naive)

    def setup(self, p: dict[str, int]) -> None:
        self.bm = self.bn = p["BLOCK"]
        self.bk = 1
        self.threads = p["BLOCK"] ** 2

    def _row_col(self, tid: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        tx, ty = np.asarray(tid) % self.bm, np.asarray(tid) // self.bm
        return (tx, ty) if self.row_major_lanes else (ty, tx)

    def thread_outputs(self, tid: int) -> np.ndarray:
        r, c = self._row_col(tid)
        return np.array([[int(r), int(c)]])

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        r, c = self._row_col(warp * 32 + LANES)
        row = block[0] * self.bm + r
        col = block[1] * self.bn + c
        k = k_step
        valid = (row < M) & (col < N) & (k < K)
        return [global_access(f"A[row*K + k]  k={k}", "A", row * K + k, 4, 4, valid),
                global_access(f"B[k*N + col]  k={k}", "B", k * N + col, 4, 4, valid)]

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        r, c = self._row_col(warp * 32 + LANES)
        row = block[0] * self.bm + r
        col = block[1] * self.bn + c
        return [global_access("C[row*N + col]", "C", row * N + col, 4, 4,
                              (row < M) & (col < N), Op.STORE)]


class Naive(ThreadPerElement):
    level_id = "naive"
    row_major_lanes = True
    notes = ("threadIdx.x walks rows: every lane of a warp reads its own row of A "
             "(32 sectors per load) and all read the same B element (one sector).")


class Coalesced(ThreadPerElement):
    level_id = "coalesced"
    notes = ("threadIdx.x walks columns: a warp reads one A element (broadcast) and 32 "
             "consecutive B elements (4 sectors).")

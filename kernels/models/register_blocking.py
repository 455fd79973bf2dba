"""register_2d and vectorized (siboehm kernels 5 and 6): BM x BN block tiles, BK-deep K
steps, (BM/TM)*(BN/TN) threads each computing a TM x TN tile of C in registers.

trow = tid / (BN/TN), tcol = tid % (BN/TN); thread t computes rows trow*TM + i and
columns tcol*TN + j of the block tile. Per k it reads TM values of A and TN of B.

register_2d: As[BM*BK] row-major (A[m][k] at m*BK + k), Bs[BK*BN]. The compiler reads
four k of a thread's A row with one LDS.128 (As[(trow*TM+i)*BK + k..k+3], the fully
unrolled k loop) and four j of B with one LDS.128, as the SASS shows (32 LDS.128 per K
step at 128x128x8, 8x8). At 8x8: in an 8-lane phase all lanes share trow (an A
broadcast), while for B tcol 0..7 start at words 8*tcol and tcol, tcol+4 hit the same
four banks: 2-way, 2 wavefronts per phase, 8 per LDS.128.

vectorized: float4 global loads; A stored transposed As[BK][BM] by four STS.32 per float4
(at 128x128x8 lanes with k-chunk 0 and 1 are 4*BM words apart: the same bank, 2-way), B
by STS.128; A and B reads are LDS.128 as above.
"""

from __future__ import annotations

import numpy as np

from .level_model import LevelModel, Op, SmemArray, Space, WarpAccess, global_access, lanes_of


class RegisterBlocking(LevelModel):
    vector_c = False

    def setup(self, p: dict[str, int]) -> None:
        self.bm, self.bn, self.bk = p["BM"], p["BN"], p["BK"]
        self.tm, self.tn = p["TM"], p["TN"]
        self.threads = (self.bm // self.tm) * (self.bn // self.tn)

    def _trow_tcol(self, tid: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        cols = self.bn // self.tn
        return np.asarray(tid) // cols, np.asarray(tid) % cols

    def thread_outputs(self, tid: int) -> np.ndarray:
        r, c = self._trow_tcol(tid)
        rows, cols = np.meshgrid(int(r) * self.tm + np.arange(self.tm),
                                 int(c) * self.tn + np.arange(self.tn), indexing="ij")
        return np.stack([rows.ravel(), cols.ravel()], axis=1)

    def _b_reads(self, b_s: SmemArray, tcol: np.ndarray, k: int) -> list[WarpAccess]:
        return [WarpAccess(f"LDS.128 Bs[k*BN + tcol*TN + {j}]  k={k}", "Bs", Space.SHARED,
                           Op.LOAD, 16, b_s.address(0, k, tcol * self.tn + j))
                for j in range(0, self.tn, 4)]

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        trow, tcol = self._trow_tcol(lanes_of(warp))
        r0 = block[0] * self.bm + trow * self.tm
        c0 = block[1] * self.bn + tcol * self.tn
        out = []
        step = 4 if self.vector_c else 1
        for i in range(self.tm):
            for j in range(0, self.tn, step):
                row, col = r0 + i, c0 + j
                out.append(global_access(f"C[row+{i}][col+{j}]", "C", row * N + col,
                                         4 * step, 4, (row < M) & (col < N), Op.STORE))
        return out


class Register2D(RegisterBlocking):
    level_id = "register_2d"
    # bytes per A read: 16 as the SASS shows (four k merged into an LDS.128); 4 would be
    # the source read literally (LDS.32: at 8x8 two thread rows 64 words apart, 2-way)
    a_read_bytes = 16
    notes = ("A and B reads are LDS.128 (the compiler merges four k of As and four j of "
             "Bs); A reads are broadcasts within a phase, B reads 2-way (tcol c and c+4).")

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", self.bm, self.bk, self.bk, 4, 1, 0, "A")
        return [a, SmemArray("Bs", self.bk, self.bn, self.bn, 4, 1, a.size_bytes, "B")]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        tid = lanes_of(warp)
        out = []
        a_stride = self.threads // self.bk
        for p in range(self.bm // a_stride):
            row, col = tid // self.bk + p * a_stride, tid % self.bk
            out.append(WarpAccess(f"As[(a_row+{p * a_stride})*BK + a_col] = A[...]", "As",
                                  Space.SHARED, Op.STORE, 4, a_s.address(0, row, col)))
        b_stride = self.threads // self.bn
        for p in range(self.bk // b_stride):
            row, col = tid // self.bn + p * b_stride, tid % self.bn
            out.append(WarpAccess(f"Bs[(b_row+{p * b_stride})*BN + b_col] = B[...]", "Bs",
                                  Space.SHARED, Op.STORE, 4, b_s.address(0, row, col)))
        trow, tcol = self._trow_tcol(tid)
        step = self.a_read_bytes // 4
        for k in range(self.bk):
            if k % step == 0:
                for i in range(self.tm):
                    kind = "LDS.128" if step > 1 else "LDS"
                    out.append(WarpAccess(f"{kind} As[(trow*TM+{i})*BK + k]  k={k}", "As",
                                          Space.SHARED, Op.LOAD, self.a_read_bytes,
                                          a_s.address(0, trow * self.tm + i, k)))
            out += self._b_reads(b_s, tcol, k)
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        tid = lanes_of(warp)
        k0 = k_step * self.bk
        out = []
        a_stride = self.threads // self.bk
        for p in range(self.bm // a_stride):
            row = block[0] * self.bm + tid // self.bk + p * a_stride
            col = k0 + tid % self.bk
            out.append(global_access(f"A[(r+{p * a_stride})*K + k0 + c]", "A", row * K + col,
                                     4, 4, (row < M) & (col < K)))
        b_stride = self.threads // self.bn
        for p in range(self.bk // b_stride):
            row = k0 + tid // self.bn + p * b_stride
            col = block[1] * self.bn + tid % self.bn
            out.append(global_access(f"B[(k0+r+{p * b_stride})*N + c]", "B", row * N + col,
                                     4, 4, (row < K) & (col < N)))
        return out


class Vectorized(RegisterBlocking):
    level_id = "vectorized"
    vector_c = True
    notes = ("A stored transposed with four STS.32 per float4 (2-way at 128x128x8: the two "
             "k-chunks of a row are 4*BM words apart); A reads are LDS.128 broadcasts, B "
             "reads LDS.128, 2-way per phase as in register_2d.")

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", self.bk, self.bm, self.bm, 4, 1, 0, "A^T")
        return [a, SmemArray("Bs", self.bk, self.bn, self.bn, 4, 1, a.size_bytes, "B")]

    def _a_chunks(self, tid: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        stride = self.threads // (self.bk // 4)
        return [(p * stride, tid // (self.bk // 4) + p * stride, (tid % (self.bk // 4)) * 4)
                for p in range(self.bm // stride)]

    def _b_chunks(self, tid: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        stride = self.threads // (self.bn // 4)
        return [(p * stride, tid // (self.bn // 4) + p * stride, (tid % (self.bn // 4)) * 4)
                for p in range(self.bk // stride)]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        tid = lanes_of(warp)
        out = []
        for off, r, c in self._a_chunks(tid):
            for j in range(4):
                out.append(WarpAccess(f"As[(a_col+{j})*BM + a_row+{off}] = v.{'xyzw'[j]}",
                                      "As", Space.SHARED, Op.STORE, 4,
                                      a_s.address(0, c + j, r)))
        for off, r, c in self._b_chunks(tid):
            out.append(WarpAccess(f"STS.128 Bs[(b_row+{off})*BN + b_col]", "Bs", Space.SHARED,
                                  Op.STORE, 16, b_s.address(0, r, c)))
        trow, tcol = self._trow_tcol(tid)
        for k in range(self.bk):
            for i in range(0, self.tm, 4):
                out.append(WarpAccess(f"LDS.128 As[k*BM + trow*TM + {i}]  k={k}", "As",
                                      Space.SHARED, Op.LOAD, 16,
                                      a_s.address(0, k, trow * self.tm + i)))
            out += self._b_reads(b_s, tcol, k)
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        tid = lanes_of(warp)
        k0 = k_step * self.bk
        out = []
        for off, r, c in self._a_chunks(tid):
            row, col = block[0] * self.bm + r, k0 + c
            out.append(global_access(f"float4 A[(a_row+{off})*K + k0 + a_col]", "A",
                                     row * K + col, 16, 4, (row < M) & (col < K)))
        for off, r, c in self._b_chunks(tid):
            row, col = k0 + r, block[1] * self.bn + c
            out.append(global_access(f"float4 B[(k0+b_row+{off})*N + b_col]", "B",
                                     row * N + col, 16, 4, (row < K) & (col < N)))
        return out

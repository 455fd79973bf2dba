"""register_2d and vectorized (siboehm kernels 5 and 6): 128x128 block tiles, BK = 8,
256 threads each computing an 8x8 tile of C in registers.

threadRow = tid / 16 and threadCol = tid % 16; thread t computes rows threadRow*8 + i
and columns threadCol*8 + j of the block tile. Per k (``dotIdx``) it reads 8 A values
and 8 B values from shared memory.

register_2d: As[BM*BK] row-major (A[m][k] at m*8 + k), Bs[BK*BN]. The 8 A reads are
LDS.32 at (threadRow*8 + i)*8 + k: a warp holds two thread rows, 64 words apart, so the
same bank: 2-way. The 8 B reads are contiguous and 32-byte aligned, which the compiler
turns into two LDS.128 (assumed): in each 8-lane phase threadCol 0..7 start at words
8*c, and c and c+4 hit the same four banks: 2-way, 2 wavefronts per phase.

vectorized: float4 global loads; A stored transposed As[BK][BM] by four STS.32 per
thread (lanes with innerColA 0 and 1 are 512 words apart: 2-way), B by one STS.128; A
reads become two LDS.128 that all 8 lanes of a phase share (broadcast).
"""

from __future__ import annotations

import numpy as np

from gemmscope.kernels.models.level_model import (
    LevelModel,
    Op,
    SmemArray,
    Space,
    WarpAccess,
    global_access,
    lanes_of,
)

BM = BN = 128
BK = 8
TM = TN = 8


class RegisterBlocking(LevelModel):
    bm, bn, bk = BM, BN, BK
    threads = 256

    def thread_outputs(self, tid: int) -> np.ndarray:
        r, c = tid // (BN // TN), tid % (BN // TN)
        rows, cols = np.meshgrid(r * TM + np.arange(TM), c * TN + np.arange(TN),
                                 indexing="ij")
        return np.stack([rows.ravel(), cols.ravel()], axis=1)

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        tid = lanes_of(warp)
        r0 = block[0] * BM + (tid // 16) * TM
        c0 = block[1] * BN + (tid % 16) * TN
        out = []
        step = 4 if self.vector_c else 1
        for i in range(TM):
            for j in range(0, TN, step):
                row, col = r0 + i, c0 + j
                out.append(global_access(f"C[row+{i}][col+{j}]", "C", row * N + col,
                                         4 * step, 4, (row < M) & (col < N), Op.STORE))
        return out

    vector_c = False


class Register2D(RegisterBlocking):
    level_id = "register_2d"
    # bytes per A read: 4 as written (LDS.32); 16 if the compiler merges the fully
    # unrolled k loop's As[(threadRow*8+i)*8 + k..k+3] into LDS.128 (then each 8-lane
    # phase reads one address: 4 wavefronts, no conflict). ncu decides which.
    a_read_bytes = 4
    notes = ("A reads: LDS.32, two thread rows 64 words apart share a bank (2-way). "
             "B reads: assumed vectorized to LDS.128 by the compiler; threadCol c and c+4 "
             "share banks (2-way per phase).")

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", BM, BK, BK, 4, 1, 0, "A")
        return [a, SmemArray("Bs", BK, BN, BN, 4, 1, a.size_bytes, "B")]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        tid = lanes_of(warp)
        out = []
        for it in range(BM // 32):
            row, col = tid // BK + 32 * it, tid % BK
            out.append(WarpAccess(f"As[(r+{32 * it})*BK + c] = A[...]", "As", Space.SHARED,
                                  Op.STORE, 4, a_s.address(0, row, col)))
        for it in range(BK // 2):
            row, col = tid // BN + 2 * it, tid % BN
            out.append(WarpAccess(f"Bs[(r+{2 * it})*BN + c] = B[...]", "Bs", Space.SHARED,
                                  Op.STORE, 4, b_s.address(0, row, col)))
        t_row, t_col = tid // 16, tid % 16
        step = self.a_read_bytes // 4
        for k in range(BK):
            for i in range(TM if k % step == 0 else 0):
                out.append(WarpAccess(f"As[(threadRow*TM+{i})*BK + k]  k={k}", "As",
                                      Space.SHARED, Op.LOAD, self.a_read_bytes,
                                      a_s.address(0, t_row * TM + i, k)))
            for h in range(TN // 4):
                out.append(WarpAccess(f"Bs[k*BN + threadCol*TN + {4 * h}..+3]  k={k}", "Bs",
                                      Space.SHARED, Op.LOAD, 16,
                                      b_s.address(0, k, t_col * TN + 4 * h)))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        tid = lanes_of(warp)
        k0 = k_step * BK
        out = []
        for it in range(BM // 32):
            row, col = block[0] * BM + tid // BK + 32 * it, k0 + tid % BK
            out.append(global_access(f"A[(r+{32 * it})*K + k0 + c]", "A", row * K + col, 4,
                                     4, (row < M) & (col < K)))
        for it in range(BK // 2):
            row, col = k0 + tid // BN + 2 * it, block[1] * BN + tid % BN
            out.append(global_access(f"B[(k0+r+{2 * it})*N + c]", "B", row * N + col, 4, 4,
                                     (row < K) & (col < N)))
        return out


class Vectorized(RegisterBlocking):
    level_id = "vectorized"
    vector_c = True
    notes = ("A stored transposed with four STS.32 (2-way: innerColA 0 and 1 are 512 "
             "words apart); A reads are LDS.128 broadcasts; B reads LDS.128, 2-way per "
             "phase as in register_2d.")

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", BK, BM, BM, 4, 1, 0, "A^T")
        return [a, SmemArray("Bs", BK, BN, BN, 4, 1, a.size_bytes, "B")]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        tid = lanes_of(warp)
        out = []
        r_a, c_a = tid // (BK // 4), tid % (BK // 4)
        for j in range(4):
            out.append(WarpAccess(f"As[(innerColA*4+{j})*BM + innerRowA] = tmp.{'xyzw'[j]}",
                                  "As", Space.SHARED, Op.STORE, 4,
                                  a_s.address(0, c_a * 4 + j, r_a)))
        r_b, c_b = tid // (BN // 4), tid % (BN // 4)
        out.append(WarpAccess("float4 Bs[innerRowB*BN + innerColB*4] = B[...]", "Bs",
                              Space.SHARED, Op.STORE, 16, b_s.address(0, r_b, c_b * 4)))
        t_row, t_col = tid // 16, tid % 16
        for k in range(BK):
            for h in range(TM // 4):
                out.append(WarpAccess(f"As[k*BM + threadRow*TM + {4 * h}..+3]  k={k}", "As",
                                      Space.SHARED, Op.LOAD, 16,
                                      a_s.address(0, k, t_row * TM + 4 * h)))
            for h in range(TN // 4):
                out.append(WarpAccess(f"Bs[k*BN + threadCol*TN + {4 * h}..+3]  k={k}", "Bs",
                                      Space.SHARED, Op.LOAD, 16,
                                      b_s.address(0, k, t_col * TN + 4 * h)))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        tid = lanes_of(warp)
        k0 = k_step * BK
        row = block[0] * BM + tid // (BK // 4)
        col = k0 + (tid % (BK // 4)) * 4
        brow = k0 + tid // (BN // 4)
        bcol = block[1] * BN + (tid % (BN // 4)) * 4
        return [global_access("float4 A[innerRowA*K + k0 + innerColA*4]", "A",
                              row * K + col, 16, 4, (row < M) & (col < K)),
                global_access("float4 B[(k0+innerRowB)*N + innerColB*4]", "B",
                              brow * N + bcol, 16, 4, (brow < K) & (bcol < N))]

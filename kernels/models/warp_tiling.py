"""warp_tiling and cp_async: 128x128x8 block tiles split into warp tiles of 32x64.

8 warps: warpRow = warp / 2, warpCol = warp % 2. A warp walks its 32x64 tile in 2x2
sub-tiles of 16x32; inside a sub-tile the lanes form 4 rows x 8 columns
(laneRow = lane / 8, laneCol = lane % 8) and each lane computes a 4x4 piece, so a lane
owns four 4x4 pieces (8x8 outputs). Per k a lane reads its 2x4 A values and 2x4 B values
with four LDS.128: in each 8-lane phase all lanes share one A address (broadcast) and read
8 consecutive float4 of B, so every read is conflict-free (4 wavefronts).

The A tile is stored transposed, As[k][m] with a row pitch of BM + 4 floats: the lanes
of a warp store 16 consecutive m for two k four rows apart, 4*(BM+4) = 528 words, i.e.
16 banks apart, so the transposing STS.32 (or 4-byte cp.async) do not conflict.
warp_tiling stages through registers into two stages; cp_async copies with cp.async into
a ring of four stages (A element by element with 4-byte cp.async, e = tid + 256 p going to
row e / 8 and k e % 8, B 16 bytes at a time).
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
    lanes_of,
)

BM = BN = 128
BK = 8
WM, WN = 32, 64
WMITER = WNITER = 2
TM = TN = 4
SUB_M, SUB_N = WM // WMITER, WN // WNITER  # 16 x 32
PAD_A = 4
PAD_B = 0


class WarpTiling(LevelModel):
    level_id = "warp_tiling"
    bm, bn, bk = BM, BN, BK
    threads = 256
    stages = 2
    a_op = Op.STORE
    notes = ("Every shared read is an LDS.128 with no conflict; the transposed A store "
             "is conflict-free thanks to the row pitch BM + 4.")

    def warp_origin(self, warp: int) -> tuple[int, int]:
        return (warp // (BN // WN)) * WM, (warp % (BN // WN)) * WN

    def thread_outputs(self, tid: int) -> np.ndarray:
        r0, c0 = self.warp_origin(tid // 32)
        lane = tid % 32
        rows = [r0 + wm * SUB_M + (lane // 8) * TM + i
                for wm in range(WMITER) for i in range(TM)]
        cols = [c0 + wn * SUB_N + (lane % 8) * TN + j
                for wn in range(WNITER) for j in range(TN)]
        rr, cc = np.meshgrid(rows, cols, indexing="ij")
        return np.stack([rr.ravel(), cc.ravel()], axis=1)

    def a_tile_elements(self, warp: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(label, row m, column k) of the A-tile elements each STS.32 stores: the four
        components of the lane's float4 (row tid / 2, k (tid % 2) * 4 + j)."""
        tid = lanes_of(warp)
        r, c = tid // (BK // 4), (tid % (BK // 4)) * 4
        return [(f"As[c+{j}][r] = a_reg.{'xyzw'[j]}", r, c + j) for j in range(4)]

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", BK, BM, BM + PAD_A, 4, self.stages, 0, "A^T")
        return [a, SmemArray("Bs", BK, BN, BN + PAD_B, 4, self.stages, a.size_bytes, "B")]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        s = self.stage(k_step)
        tid = lanes_of(warp)
        verb = "cp.async" if self.a_op is Op.CP_ASYNC else "STS"
        out = [WarpAccess(f"{verb} {text}", "As", Space.SHARED, self.a_op, 4,
                          a_s.address(s, c, r), stage=s)
               for text, r, c in self.a_tile_elements(warp)]
        r_b, c_b = tid // (BN // 4), tid % (BN // 4)
        out.append(WarpAccess(f"{verb}.128 Bs[innerRowB][innerColB*4]", "Bs", Space.SHARED,
                              self.a_op, 16, b_s.address(s, r_b, c_b * 4), stage=s))
        r0, c0 = self.warp_origin(warp)
        lane_row, lane_col = LANES // 8, LANES % 8
        for k in range(BK):
            for wm in range(WMITER):
                m = r0 + wm * SUB_M + lane_row * TM
                out.append(WarpAccess(f"LDS.128 As[k][warpRow+{wm * SUB_M}+laneRow*4]  k={k}",
                                      "As", Space.SHARED, Op.LOAD, 16, a_s.address(s, k, m),
                                      stage=s))
            for wn in range(WNITER):
                n = c0 + wn * SUB_N + lane_col * TN
                out.append(WarpAccess(f"LDS.128 Bs[k][warpCol+{wn * SUB_N}+laneCol*4]  k={k}",
                                      "Bs", Space.SHARED, Op.LOAD, 16, b_s.address(s, k, n),
                                      stage=s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        tid = lanes_of(warp)
        k0 = k_step * BK
        row = block[0] * BM + tid // (BK // 4)
        col = k0 + (tid % (BK // 4)) * 4
        brow = k0 + tid // (BN // 4)
        bcol = block[1] * BN + (tid % (BN // 4)) * 4
        va = (row < M) & (col < K)
        b = global_access("float4 B[k0+innerRowB][innerColB*4]", "B", brow * N + bcol, 16,
                          4, (brow < K) & (bcol < N))
        if self.a_op is Op.CP_ASYNC:
            a = []
            for text, r, c in self.a_tile_elements(warp):
                gr, gc = block[0] * BM + r, k0 + c
                a.append(global_access(f"cp.async.4 A for {text}", "A", gr * K + gc, 4, 4,
                                       (gr < M) & (gc < K)))
        else:
            a = [global_access("float4 A[innerRowA][k0+innerColA*4]", "A", row * K + col,
                               16, 4, va)]
        return [*a, b]

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        r0, c0 = self.warp_origin(warp)
        out = []
        for wm in range(WMITER):
            for wn in range(WNITER):
                for i in range(TM):
                    row = block[0] * BM + r0 + wm * SUB_M + (LANES // 8) * TM + i
                    col = block[1] * BN + c0 + wn * SUB_N + (LANES % 8) * TN
                    out.append(global_access(f"float4 C sub-tile ({wm},{wn}) row {i}", "C",
                                             row * N + col, 16, 4, (row < M) & (col < N),
                                             Op.STORE))
        return out


class CpAsync(WarpTiling):
    level_id = "cp_async"
    stages = 4
    a_op = Op.CP_ASYNC

    def a_tile_elements(self, warp: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """Element e = tid + 256 p goes to row e / BK, k e % BK: a warp covers 4 rows x 8 k,
        which lands on 32 distinct banks (k*(BM+4) + m: 4 banks per k step)."""
        tid = lanes_of(warp)
        out = []
        for p in range(BM * BK // self.threads):
            e = tid + p * self.threads
            out.append((f"As[k][m], e = tid + {p * self.threads}", e // BK, e % BK))
        return out
    notes = ("Same reads as warp_tiling; tiles arrive by cp.async into a 4-stage ring. "
             "Their shared writes are cp.async (LDGSTS) traffic, not STS: the model keeps "
             "them apart from the st totals.")

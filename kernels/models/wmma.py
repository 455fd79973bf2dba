"""wmma: FP16 inputs, FP32 accumulation on Tensor Cores through the WMMA API.

128x128 block tile, BK = 32, 8 warps of 64x32 (warpRow = warp / 4, warpCol = warp % 4),
each holding 4x2 accumulator fragments of 16x16. Tiles arrive by 16-byte cp.async into a
3-stage ring of padded rows (As[BM][BK+8], Bs[BK][BN+8] halves).

The instructions behind ``wmma::load_matrix_sync`` are not documented; the model assumes
ldmatrix.x4 (lanes 0-15 address rows 0-15 of the fragment at its first 8 columns, lanes
16-31 at the next 8), which is what the compiler emits for row-major FP16 fragments on
sm_80 and later as far as we know. ``exact`` is False for that reason.
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
BK = 32
WM, WN = 64, 32
FRAG = 16
PAD = 8  # halves
CHUNK = 8  # halves per 16-byte cp.async


class Wmma(LevelModel):
    level_id = "wmma"
    bm, bn, bk = BM, BN, BK
    threads = 256
    stages = 3
    elem_bytes = 2
    exact = False
    notes = ("Fragment loads modelled as ldmatrix.x4 (WMMA's instructions are not "
             "documented); cp.async stores are reported apart from st.")

    def warp_origin(self, warp: int) -> tuple[int, int]:
        return (warp // (BN // WN)) * WM, (warp % (BN // WN)) * WN

    def thread_outputs(self, tid: int) -> np.ndarray:
        """The warp's whole 64x32 tile: fragments are held by the warp collectively."""
        r0, c0 = self.warp_origin(tid // 32)
        rr, cc = np.meshgrid(r0 + np.arange(WM), c0 + np.arange(WN), indexing="ij")
        return np.stack([rr.ravel(), cc.ravel()], axis=1)

    def warp_mask(self, warp: int) -> np.ndarray:
        mask = np.zeros((BM, BN), bool)
        r0, c0 = self.warp_origin(warp)
        mask[r0:r0 + WM, c0:c0 + WN] = True
        return mask

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", BM, BK, BK + PAD, 2, self.stages, 0, "A")
        return [a, SmemArray("Bs", BK, BN, BN + PAD, 2, self.stages, a.size_bytes, "B")]

    def _chunks(self, warp: int, cols: int) -> list[tuple[np.ndarray, np.ndarray]]:
        tid = lanes_of(warp)
        per_row = cols // CHUNK
        return [((tid + 256 * i) // per_row, ((tid + 256 * i) % per_row) * CHUNK)
                for i in range(2)]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        s = self.stage(k_step)
        out = []
        for i, (r, c) in enumerate(self._chunks(warp, BK)):
            out.append(WarpAccess(f"cp.async.16 As[{i}]", "As", Space.SHARED, Op.CP_ASYNC,
                                  16, a_s.address(s, r, c), stage=s))
        for i, (r, c) in enumerate(self._chunks(warp, BN)):
            out.append(WarpAccess(f"cp.async.16 Bs[{i}]", "Bs", Space.SHARED, Op.CP_ASYNC,
                                  16, b_s.address(s, r, c), stage=s))
        r0, c0 = self.warp_origin(warp)
        lr, lc = LANES % 16, (LANES // 16) * 8
        for kk in range(0, BK, FRAG):
            for i in range(WM // FRAG):
                out.append(WarpAccess(f"ldmatrix.x4 A frag {i}  kk={kk}", "As", Space.SHARED,
                                      Op.LOAD, 16,
                                      a_s.address(s, r0 + i * FRAG + lr, kk + lc), stage=s))
            for j in range(WN // FRAG):
                out.append(WarpAccess(f"ldmatrix.x4.trans B frag {j}  kk={kk}", "Bs",
                                      Space.SHARED, Op.LOAD, 16,
                                      b_s.address(s, kk + lr, c0 + j * FRAG + lc), stage=s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        k0 = k_step * BK
        out = []
        for i, (r, c) in enumerate(self._chunks(warp, BK)):
            row, col = block[0] * BM + r, k0 + c
            out.append(global_access(f"cp.async.16 A chunk {i}", "A", row * K + col, 16, 2,
                                     (row < M) & (col < K)))
        for i, (r, c) in enumerate(self._chunks(warp, BN)):
            row, col = k0 + r, block[1] * BN + c
            out.append(global_access(f"cp.async.16 B chunk {i}", "B", row * N + col, 16, 2,
                                     (row < K) & (col < N)))
        return out

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        return []  # store_matrix_sync's per-lane layout is not documented

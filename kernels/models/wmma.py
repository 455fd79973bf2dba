"""wmma: FP16 inputs, FP32 accumulation on Tensor Cores through the WMMA API.

BM x BN block tile, BK-deep K steps, (BM/WM) x (BN/WN) warps of WM x WN (warpRow = warp /
(BN/WN)), each holding (WM/16) x (WN/16) accumulator fragments of 16x16. Tiles arrive by
16-byte cp.async (chunk e = tid + p*THREADS at row e / (cols/8), column (e % (cols/8))*8)
into a STAGES ring of padded rows (As[BM][BK+8], Bs[BK][BN+8] halves).

``wmma::load_matrix_sync`` compiles to ldmatrix.x4 here (LDSM.16.M88.4 and .MT88.4 in
the SASS, one per fragment per 16 of k); the model lets lanes 0-15 address rows 0-15 of
the fragment at its first 8 columns and lanes 16-31 at the next 8. Each 8-lane phase is
one 8x8 matrix whatever the order, so the bank counts do not depend on that guess, but
the lane-to-address mapping shown may; ``exact`` is False for that reason.
"""

from __future__ import annotations

import numpy as np

from .level_model import (
    LANES,
    LevelModel,
    Op,
    SmemArray,
    Space,
    WarpAccess,
    global_access,
    lanes_of,
)

FRAG = 16
PAD = 8  # halves of padding per row
CHUNK = 8  # halves per 16-byte cp.async


class TensorCoreTiles(LevelModel):
    """What the Tensor Core levels (wmma, mma_sync) share: a BM x BN block tile cut into
    WM x WN warp tiles, FP16 elements, and a cp.async path the model covers."""

    elem_bytes = 2

    def setup(self, p: dict[str, int]) -> None:
        self.bm, self.bn, self.bk = p["BM"], p["BN"], p["BK"]
        self.wm, self.wn = p["WM"], p["WN"]
        self.stages = p["STAGES"]
        self.warps_n = self.bn // self.wn
        self.threads = (self.bm // self.wm) * self.warps_n * 32

    def caveat(self) -> str:
        if self.vector_path:
            return ""
        return ("K or N is not a multiple of 8: the kernel stages tiles with element-wise "
                "stores, which the model does not cover; its counts are the cp.async path's")

    def warp_origin(self, warp: int) -> tuple[int, int]:
        return (warp // self.warps_n) * self.wm, (warp % self.warps_n) * self.wn


class Wmma(TensorCoreTiles):
    level_id = "wmma"
    exact = False
    notes = ("Fragment loads are ldmatrix.x4 (LDSM.16.M88.4 for A, .MT88.4 for B in the "
             "SASS); the order of the four 8x8 matrices is assumed. cp.async writes are "
             "reported apart from st.")

    def thread_outputs(self, tid: int) -> np.ndarray:
        """The warp's whole 64x32 tile: fragments are held by the warp collectively."""
        r0, c0 = self.warp_origin(tid // 32)
        rr, cc = np.meshgrid(r0 + np.arange(self.wm), c0 + np.arange(self.wn), indexing="ij")
        return np.stack([rr.ravel(), cc.ravel()], axis=1)

    def warp_mask(self, warp: int) -> np.ndarray:
        mask = np.zeros((self.bm, self.bn), bool)
        r0, c0 = self.warp_origin(warp)
        mask[r0:r0 + self.wm, c0:c0 + self.wn] = True
        return mask

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", self.bm, self.bk, self.bk + PAD, 2, self.stages, 0, "A")
        return [a, SmemArray("Bs", self.bk, self.bn, self.bn + PAD, 2, self.stages,
                             a.size_bytes, "B")]

    def _chunks(self, warp: int, cols: int) -> list[tuple[np.ndarray, np.ndarray]]:
        tid = lanes_of(warp)
        per_row = cols // CHUNK
        rows = self.bk if cols == self.bn else self.bm
        return [((tid + self.threads * i) // per_row,
                 ((tid + self.threads * i) % per_row) * CHUNK)
                for i in range(rows * cols // CHUNK // self.threads)]

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        s = self.stage(k_step)
        out = []
        for i, (r, c) in enumerate(self._chunks(warp, self.bk)):
            out.append(WarpAccess(f"cp.async.16 As[{i}]", "As", Space.SHARED, Op.CP_ASYNC,
                                  16, a_s.address(s, r, c), stage=s))
        for i, (r, c) in enumerate(self._chunks(warp, self.bn)):
            out.append(WarpAccess(f"cp.async.16 Bs[{i}]", "Bs", Space.SHARED, Op.CP_ASYNC,
                                  16, b_s.address(s, r, c), stage=s))
        r0, c0 = self.warp_origin(warp)
        lr, lc = LANES % 16, (LANES // 16) * 8
        for kk in range(0, self.bk, FRAG):
            for i in range(self.wm // FRAG):
                out.append(WarpAccess(f"ldmatrix.x4 A frag {i}  kk={kk}", "As", Space.SHARED,
                                      Op.LOAD, 16,
                                      a_s.address(s, r0 + i * FRAG + lr, kk + lc), stage=s))
            for j in range(self.wn // FRAG):
                out.append(WarpAccess(f"ldmatrix.x4.trans B frag {j}  kk={kk}", "Bs",
                                      Space.SHARED, Op.LOAD, 16,
                                      b_s.address(s, kk + lr, c0 + j * FRAG + lc), stage=s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        k0 = k_step * self.bk
        out = []
        for i, (r, c) in enumerate(self._chunks(warp, self.bk)):
            row, col = block[0] * self.bm + r, k0 + c
            out.append(global_access(f"cp.async.16 A chunk {i}", "A", row * K + col, 16, 2,
                                     (row < M) & (col < K)))
        for i, (r, c) in enumerate(self._chunks(warp, self.bn)):
            row, col = k0 + r, block[1] * self.bn + c
            out.append(global_access(f"cp.async.16 B chunk {i}", "B", row * N + col, 16, 2,
                                     (row < K) & (col < N)))
        return out

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        return []  # store_matrix_sync's per-lane layout is not documented

"""warp_tiling and cp_async: block tiles split into warp tiles, walked in sub-tiles.

Parameters BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN (and STAGES for cp_async), as in
the .cu: (BM/WM) x (BN/WN) warps, warpRow = warp / (BN/WN), warpCol = warp % (BN/WN).
A warp walks its WM x WN tile in WMITER x WNITER sub-tiles of WSUBM x WSUBN; inside a
sub-tile the lanes form (WSUBM/TM) rows x LANE_COLS = WSUBN/TN columns and own TM x TN
pieces: m0 = warpRow*WM + (lane / LANE_COLS)*TM, n0 = warpCol*WN + (lane % LANE_COLS)*TN.
Per k a lane reads WMITER*TM/4 + WNITER*TN/4 float4 (LDS.128): within an 8-lane phase the
lanes share one A address (broadcast) and read 8 consecutive float4 of B, so no read
conflicts (4 wavefronts each).

A is stored transposed, As[k][m] with a row pitch LDA = BM + 4. warp_tiling stages a
float4 of A per (tid + p*THREADS) through registers (row e / (BK/4), k (e % (BK/4))*4)
into two stages with four STS.32; cp_async copies A element by element with 4-byte
cp.async (copy p of thread tid: row tid/8 + (p % (BM/ROWS))*ROWS, k (p / (BM/ROWS))*8 +
tid % 8, ROWS = THREADS/8: a warp covers 4 rows x 8 k, 32 distinct banks) into a ring of
STAGES stages. B goes as
float4 (STS.128 or 16-byte cp.async) row-major, pitch BN.
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

PAD_A = 4


class WarpTiling(LevelModel):
    level_id = "warp_tiling"
    a_op = Op.STORE
    notes = ("Every shared read is an LDS.128 with no conflict; the transposed A store "
             "is conflict-free thanks to the row pitch BM + 4.")

    def setup(self, p: dict[str, int]) -> None:
        self.bm, self.bn, self.bk = p["BM"], p["BN"], p["BK"]
        self.wm, self.wn = p["WM"], p["WN"]
        self.wmiter, self.wniter = p["WMITER"], p["WNITER"]
        self.tm, self.tn = p["TM"], p["TN"]
        self.wsubm, self.wsubn = self.wm // self.wmiter, self.wn // self.wniter
        self.lane_cols = self.wsubn // self.tn
        self.warps_n = self.bn // self.wn
        self.threads = (self.bm // self.wm) * self.warps_n * 32
        self.stages = p["STAGES"] if self.a_op is Op.CP_ASYNC else 2
        self.lda = self.bm + PAD_A

    def lane_origin(self, warp: int, lane: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        """(m0, n0) of a lane's first piece inside the block tile."""
        lane = np.asarray(lane)
        m0 = (warp // self.warps_n) * self.wm + (lane // self.lane_cols) * self.tm
        n0 = (warp % self.warps_n) * self.wn + (lane % self.lane_cols) * self.tn
        return m0, n0

    def thread_outputs(self, tid: int) -> np.ndarray:
        m0, n0 = self.lane_origin(tid // 32, tid % 32)
        rows = [int(m0) + im * self.wsubm + i for im in range(self.wmiter)
                for i in range(self.tm)]
        cols = [int(n0) + jn * self.wsubn + j for jn in range(self.wniter)
                for j in range(self.tn)]
        rr, cc = np.meshgrid(rows, cols, indexing="ij")
        return np.stack([rr.ravel(), cc.ravel()], axis=1)

    def smem_arrays(self) -> list[SmemArray]:
        a = SmemArray("As", self.bk, self.bm, self.lda, 4, self.stages, 0, "A^T")
        return [a, SmemArray("Bs", self.bk, self.bn, self.bn, 4, self.stages, a.size_bytes,
                             "B")]

    def a_tile_elements(self, warp: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(label, row m, column k) of the A elements each shared write of A stores."""
        tid = lanes_of(warp)
        out = []
        for p in range(self.bm * self.bk // 4 // self.threads):
            e = tid + p * self.threads
            r, c = e // (self.bk // 4), (e % (self.bk // 4)) * 4
            out += [(f"As[c+{j}][r] = a_reg[{p}].{'xyzw'[j]}", r, c + j) for j in range(4)]
        return out

    def b_tile_vectors(self, warp: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
        tid = lanes_of(warp)
        out = []
        for p in range(self.bk * self.bn // 4 // self.threads):
            e = tid + p * self.threads
            out.append((p, e // (self.bn // 4), (e % (self.bn // 4)) * 4))
        return out

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        a_s, b_s = self.smem_arrays()
        s = self.stage(k_step)
        cp = self.a_op is Op.CP_ASYNC
        out = [WarpAccess(f"{'cp.async.4' if cp else 'STS'} {text}", "As", Space.SHARED,
                          self.a_op, 4, a_s.address(s, c, r), stage=s)
               for text, r, c in self.a_tile_elements(warp)]
        out += [WarpAccess(f"{'cp.async.16' if cp else 'STS.128'} Bs[r][c], p={p}", "Bs",
                           Space.SHARED, self.a_op, 16, b_s.address(s, r, c), stage=s)
                for p, r, c in self.b_tile_vectors(warp)]
        m0, n0 = self.lane_origin(warp, LANES)
        for k in range(self.bk):
            for im in range(self.wmiter):
                for i in range(0, self.tm, 4):
                    out.append(WarpAccess(
                        f"LDS.128 As[k][m0+{im * self.wsubm + i}]  k={k}", "As", Space.SHARED,
                        Op.LOAD, 16, a_s.address(s, k, m0 + im * self.wsubm + i), stage=s))
            for jn in range(self.wniter):
                for j in range(0, self.tn, 4):
                    out.append(WarpAccess(
                        f"LDS.128 Bs[k][n0+{jn * self.wsubn + j}]  k={k}", "Bs", Space.SHARED,
                        Op.LOAD, 16, b_s.address(s, k, n0 + jn * self.wsubn + j), stage=s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        k0 = k_step * self.bk
        out = []
        if self.a_op is Op.CP_ASYNC:
            for text, r, c in self.a_tile_elements(warp):
                gr, gc = block[0] * self.bm + r, k0 + c
                out.append(global_access(f"cp.async.4 A for {text}", "A", gr * K + gc, 4, 4,
                                         (gr < M) & (gc < K)))
        else:
            for text, r, c in self.a_tile_elements(warp)[::4]:
                gr, gc = block[0] * self.bm + r, k0 + c
                out.append(global_access(f"float4 A for {text.split(' =')[0]}..+3", "A",
                                         gr * K + gc, 16, 4, (gr < M) & (gc < K)))
        for p, r, c in self.b_tile_vectors(warp):
            gr, gc = k0 + r, block[1] * self.bn + c
            out.append(global_access(f"float4 B[k0+r][c], p={p}", "B", gr * N + gc, 16, 4,
                                     (gr < K) & (gc < N)))
        return out

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        m0, n0 = self.lane_origin(warp, LANES)
        out = []
        for im in range(self.wmiter):
            for i in range(self.tm):
                for jn in range(self.wniter):
                    for j in range(0, self.tn, 4):
                        row = block[0] * self.bm + m0 + im * self.wsubm + i
                        col = block[1] * self.bn + n0 + jn * self.wsubn + j
                        out.append(global_access(
                            f"float4 C piece ({im},{jn}) row {i}", "C", row * N + col, 16, 4,
                            (row < M) & (col < N), Op.STORE))
        return out


class CpAsync(WarpTiling):
    level_id = "cp_async"
    a_op = Op.CP_ASYNC
    notes = ("Same reads as warp_tiling; tiles arrive by cp.async into a ring of stages. "
             "Their shared writes are cp.async (LDGSTS) traffic, not STS: the model keeps "
             "them apart from the st totals.")

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        out = super().shared_accesses(warp, k_step)
        if self.vector_path:
            return out
        # edge path (K or N not a multiple of 4): B element by element, 4-byte cp.async
        _, b_s = self.smem_arrays()
        s = self.stage(k_step)
        tid = lanes_of(warp)
        scalar = []
        for p in range(self.bk * self.bn // self.threads):
            e = tid + p * self.threads
            scalar.append(WarpAccess(f"cp.async.4 Bs[r][c], e = tid + {p * self.threads}",
                                     "Bs", Space.SHARED, Op.CP_ASYNC, 4,
                                     b_s.address(s, e // self.bn, e % self.bn), stage=s))
        keep = [a for a in out if not (a.array == "Bs" and a.op is Op.CP_ASYNC)]
        n_a = sum(1 for a in keep if a.op is Op.CP_ASYNC)
        return keep[:n_a] + scalar + keep[n_a:]

    def a_tile_elements(self, warp: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """Copy p of thread tid: row tid / 8 + (p % (BM / ROWS)) * ROWS, k
        (p / (BM / ROWS)) * 8 + tid % 8, with ROWS = THREADS / 8 rows per pass."""
        tid = lanes_of(warp)
        rows = self.threads // 8
        per_k = self.bm // rows
        out = []
        for p in range(self.bm * self.bk // self.threads):
            r = tid // 8 + (p % per_k) * rows
            c = (p // per_k) * 8 + tid % 8
            out.append((f"As[k][m], copy {p}", r, c))
        return out


class CpAsyncInterior(CpAsync):
    """cp_async_interior: cp_async's copies and reads; interior blocks compute the same
    addresses without guards, which changes instructions, not accesses."""

    level_id = "cp_async_interior"

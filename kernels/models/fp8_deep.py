"""fp8_deep (kernels/cuda/fp8_deep.cu): the block-scaled FP8 GEMM on DeepGEMM's schedule.

What differs from fp8_block_scaled's model (hopper_fp8.py): a 256 x BN tile; each of the
two consumer warpgroups owns 128 rows as two 64-row sub-tiles (one wgmma.m64nBNk32 group
and one promotion each per K block); the ring holds A stages, then Bt stages, then each
warpgroup's C staging buffer, then per stage the K block's scales (256 row scales of A,
two block scales of Bt), which the producer warp copies with cp.async; the tiles are
walked in groups of GW tile columns, row by row; the grid is the level's grid rule; each
tile's K blocks start at stage 0.
"""

from __future__ import annotations

import numpy as np

from ..ladder import registry
from ..ladder.fp8_deep_level import SCALE_STAGE_BYTES
from .banks import WARP_SIZE
from .hopper import (
    CONSUMER_ROWS,
    H200_SMS,
    STAGING_COLS,
    SWIZZLE_ROW_BYTES,
    WARPGROUP,
    WARPS_PER_GROUP,
    PromoteOp,
    WarpSpecialized,
    WgmmaOp,
)
from .level_model import LANES, Op, SmemArray, Space, Tile, WarpAccess, global_access
from .persistent import TmaBox, WorkPiece

HALF_ROWS = 128  # a consumer warpgroup's rows (two sub-tiles), and one TMA box of A
SCALE_FLOATS = SCALE_STAGE_BYTES // 4


class Fp8Deep(WarpSpecialized):
    level_id = "fp8_deep"
    elem_bytes = 1
    notes = ("DeepGEMM's schedule on the block-scaled FP8 inputs: 256 x BN tiles, each "
             "consumer warpgroup two 64-row sub-tiles of one wgmma.m64nBNk32 group each, "
             "waited for and promoted one after the other; per K block a consumer thread "
             "reads its four row scales of A and the tile's Bt block scale(s) from the "
             "stage (LDS), which the producer warp copied there (cp.async, 4 bytes, eight "
             "a lane); C is staged per warpgroup (128-byte swizzle in 64 x 64 chunks, or "
             "plain rows where BN % 64 != 0) and stored by TMA.")

    def setup(self, p: dict[str, int]) -> None:
        self.bm, self.bn, self.bk = p["BM"], p["BN"], p["BK"]
        self.stages, self.group_rows = p["STAGES"], p["GW"]
        self.cl = p.get("CL", 1)
        self.consumers, self.kpipe, self.epi, self.stream_k = 2, 0, 1, 0
        self.threads = (self.consumers + 1) * WARPGROUP
        self.half_cols = self.bn  # one part: the whole width, promoted once per sub-tile
        self.instruction = f"wgmma.mma_async.m64n{self.bn}k32.f32.e4m3.e4m3"
        self.a_bytes = self.bm * self.bk
        self.b_bytes = self.bn * self.bk
        self.stage_bytes = self.a_bytes + self.b_bytes
        self.swizzled_c = self.bn % STAGING_COLS == 0
        self.c_bytes = 2 * CONSUMER_ROWS * self.bn * 2  # a warpgroup's staging, BF16
        self.c_base = self.stages * self.stage_bytes
        self.sc_base = self.c_base + 2 * self.c_bytes
        self.sass_k_steps = self.stages  # the K loop is unrolled over the ring's stages

    # -- warpgroups ------------------------------------------------------------------
    def consumer_rows(self, consumer: int) -> Tile:
        return Tile(consumer * HALF_ROWS, 0, HALF_ROWS, self.bn)

    def accumulators_per_thread(self) -> int:
        return HALF_ROWS * self.bn // WARPGROUP

    def _sub_rows(self, consumer: int, sub: int) -> int:
        return consumer * HALF_ROWS + sub * CONSUMER_ROWS

    def thread_outputs(self, tid: int) -> np.ndarray:
        """Register w * BN / 2 + i is register i of sub-tile w's wgmma D fragment (rows
        16 w' + lane / 4 and + 8 of the 64, warp w' of the group)."""
        c = self.consumer_of(tid // WARP_SIZE)
        if c is None:
            return np.zeros((0, 2), np.int64)
        t = tid % WARPGROUP
        reg = np.arange(self.accumulators_per_thread())
        sub, i = reg // (self.bn // 2), reg % (self.bn // 2)
        j, h, q = i // 4, (i // 2) % 2, i % 2
        rows = (c * HALF_ROWS + sub * CONSUMER_ROWS + (t // WARP_SIZE) * 16
                + (t % WARP_SIZE) // 4 + 8 * h)
        cols = 8 * j + 2 * (t % 4) + q
        return np.stack([rows, cols], axis=1).astype(np.int64)

    def warp_mask(self, warp: int) -> np.ndarray:
        mask = np.zeros((self.bm, self.bn), bool)
        c = self.consumer_of(warp)
        if c is not None:
            for sub in range(2):
                r0 = self._sub_rows(c, sub) + (warp % WARPS_PER_GROUP) * 16
                mask[r0:r0 + 16, :] = True
        return mask

    def warp_tile(self, warp: int) -> Tile:
        """The warp's 16 rows of its first sub-tile (the second is 64 rows further)."""
        c = self.consumer_of(warp)
        if c is None:
            return Tile(0, 0, 0, 0)
        return Tile(self._sub_rows(c, 0) + (warp % WARPS_PER_GROUP) * 16, 0, 16, self.bn)

    # -- persistent grid ----------------------------------------------------------------
    def tile_coords(self, t: int, gm: int, gn: int) -> tuple[int, int]:
        """Groups of GW tile columns, row by row inside a group (gs_dp_tile)."""
        per_group = self.group_rows * gm
        first = t // per_group * self.group_rows
        width = min(gn - first, self.group_rows)
        inside = t % per_group
        return inside // width, first + inside % width

    def persistent_grid(self, M: int, N: int, sms: int = H200_SMS) -> int:
        gm, gn = self.grid(M, N)
        level = registry.get(self.level_id)
        assert level.grid_rule is not None
        return level.grid_rule(gm * gn, sms, self.params)

    def block_tiles_ids(self, block: int, tiles: int, grid: int) -> list[int]:
        """The tile indices block ``block`` walks: every grid-th (CL = 1), or for a cluster
        pair its CTA's tile of pairs cluster, + clusters, ... (CL = 2)."""
        if self.cl == 1:
            return list(range(block, tiles, grid))
        clusters, rank = grid // self.cl, block % self.cl
        out, r = [], 0
        while (t := self.cl * (r * clusters + block // self.cl) + rank) < tiles:
            out.append(t)
            r += 1
        return out

    def block_work(self, block: int, M: int, N: int, K: int, sms: int = H200_SMS
                   ) -> list[WorkPiece]:
        gm, gn = self.grid(M, N)
        grid = self.persistent_grid(M, N, sms)
        steps = self.k_steps(K)
        return [WorkPiece(t, self.tile_coords(t, gm, gn), 0, steps)
                for t in self.block_tiles_ids(block, gm * gn, grid)]

    def stage_of(self, iteration: int) -> int:
        """The stage of a tile's iteration-th K block: each tile starts at stage 0."""
        return iteration % self.stages

    # -- shared memory -----------------------------------------------------------------
    def smem_arrays(self) -> list[SmemArray]:
        """A stages, Bt stages, the staging of C (64 x 64 swizzled chunks, or one plain
        64 x BN block per sub-tile), the scales of each stage."""
        a = SmemArray("As", self.bm, self.bk, self.bk, 1, self.stages, 0, "A", True,
                      self.a_bytes)
        b = SmemArray("Bs", self.bn, self.bk, self.bk, 1, self.stages,
                      self.stages * self.a_bytes, "Bt", True, self.b_bytes)
        if self.swizzled_c:
            cs = SmemArray("Cs", CONSUMER_ROWS, STAGING_COLS, STAGING_COLS, 2,
                           2 * self.c_bytes // (CONSUMER_ROWS * STAGING_COLS * 2), self.c_base,
                           "C", True)
        else:
            cs = SmemArray("Cs", CONSUMER_ROWS, self.bn, self.bn, 2, 4, self.c_base, "C")
        ss = SmemArray("Ss", 1, SCALE_FLOATS, SCALE_FLOATS, 4, self.stages, self.sc_base,
                       "scales")
        return [a, b, cs, ss]

    def main_loop_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """Per K block: a consumer thread reads the A scales of its rows (r and r + 8 of
        both sub-tiles) and the Bt block scale(s) from the stage; the producer warp's
        lanes copy the 256 row scales (eight 4-byte cp.async a lane, 32 rows apart) and
        lanes 0 and 1 the tile's two Bt block scales into it."""
        ss = self.smem_arrays()[3]
        s = self.stage(k_step)
        c = self.consumer_of(warp)
        if c is None:
            if warp != 0:
                return []
            out = [WarpAccess(f"cp.async.4 A scales rows lane+{32 * j}", "Ss", Space.SHARED,
                              Op.CP_ASYNC, 4, ss.address(s, 0, LANES + 32 * j), stage=s)
                   for j in range(8)]
            out.append(WarpAccess("cp.async.4 Bt block scales", "Ss", Space.SHARED,
                                  Op.CP_ASYNC, 4, ss.address(s, 0, 256 + np.minimum(LANES, 1)),
                                  LANES < 2, stage=s))
            return out
        r = (warp % WARPS_PER_GROUP) * 16 + LANES // 4
        out = [WarpAccess(f"LDS A scale sub-tile {sub} rows r{'+8' if h else ''}", "Ss",
                          Space.SHARED, Op.LOAD, 4,
                          ss.address(s, 0, self._sub_rows(c, sub) + r + 8 * h), stage=s)
               for sub in range(2) for h in range(2)]
        for b in range(1 if 128 % self.bn == 0 else 2):
            out.append(WarpAccess(f"LDS Bt block scale {b}", "Ss", Space.SHARED, Op.LOAD, 4,
                                  ss.address(s, 0, np.full(WARP_SIZE, 256 + b)), stage=s))
        return out

    def epilogue_accesses(self, warp: int) -> list[WarpAccess]:
        """A consumer warp's staging stores, once per tile: for each sub-tile and 8-column
        group g, rows r and r + 8, a bf16 pair (4 bytes) a lane; in 64 x 64 chunks with
        16-byte unit j of row rr at j ^ (rr % 8), or in plain rows of BN columns."""
        c = self.consumer_of(warp)
        if c is None:
            return []
        cs = self.smem_arrays()[2]
        r = (warp % WARPS_PER_GROUP) * 16 + LANES // 4
        col = 2 * (LANES % 4)
        out = []
        for sub in range(2):
            for g in range(self.bn // 8):
                for h in range(2):
                    rr = r + 8 * h
                    if self.swizzled_c:
                        chunk = (2 * c + sub) * (self.bn // STAGING_COLS) + g // 8
                        addr = cs.address(chunk, rr, 8 * (g % 8) + col)
                    else:
                        chunk = 2 * c + sub
                        addr = cs.address(chunk, rr, 8 * g + col)
                    out.append(WarpAccess(
                        f"epilogue STS.32 C sub-tile {sub} cols {8 * g}+[0,8) "
                        f"rows r{'+8' if h else ''}", "Cs", Space.SHARED, Op.STORE, 4, addr,
                        stage=chunk))
        return out

    def wgmma_ops(self, consumer: int, k_step: int) -> list[WgmmaOp | PromoteOp]:
        s = self.stage(k_step)
        shape = f"m{CONSUMER_ROWS}n{self.bn}k32"
        out: list[WgmmaOp | PromoteOp] = []
        for sub in range(2):
            r0 = self._sub_rows(consumer, sub)
            for kk in range(self.bk // 32):
                out.append(WgmmaOp(
                    consumer, len(out), shape, Tile(r0, kk * 32, CONSUMER_ROWS, 32),
                    Tile(0, kk * 32, self.bn, 32), Tile(r0, 0, CONSUMER_ROWS, self.bn),
                    s * self.a_bytes + r0 * SWIZZLE_ROW_BYTES + kk * 32,
                    self.stages * self.a_bytes + s * self.b_bytes + kk * 32))
            out.append(PromoteOp(consumer, len(out), Tile(r0, 0, CONSUMER_ROWS, self.bn)))
        return out

    # -- global memory ---------------------------------------------------------------------
    def tma_loads(self, k_step: int, M: int, N: int, K: int,
                  block: tuple[int, int] = (0, 0), iteration: int | None = None
                  ) -> list[TmaBox]:
        """A in two boxes of 128 rows (with CL = 2 each CTA copies one, multicast to both),
        Bt in one box of BN rows."""
        s = self.stage(k_step if iteration is None else iteration)
        k0 = k_step * self.bk
        out = [TmaBox("A", "A", Op.LOAD, block[0] * self.bm + h * HALF_ROWS, k0, HALF_ROWS,
                      self.bk, 1, M, K, s * self.a_bytes + h * HALF_ROWS * self.bk, s)
               for h in range(2)]
        out.append(TmaBox("Bt", "Bt", Op.LOAD, block[1] * self.bn, k0, self.bn, self.bk, 1, N,
                          K, self.stages * self.a_bytes + s * self.b_bytes, s))
        return out

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """Warp 0: the K block's TMA boxes, and its lanes' cp.async reads of the scales
        (row bm * 256 + lane + 32 j of A's scales for the K block; Bt's (nb, k) and
        (nb + 1, k))."""
        if warp != 0:
            return []
        out = [a for box in self.tma_loads(k_step, M, N, K, block) for a in box.warp_accesses()]
        ksteps = max(1, K // self.bk)
        for j in range(8):
            rows = block[0] * self.bm + LANES + 32 * j
            out.append(global_access(f"cp.async scale_a[kb={k_step}] rows +{32 * j}",
                                     "scale_a", k_step * M + rows, 4, 4, rows < M, Op.CP_ASYNC))
        nb = block[1] * self.bn // 128 + np.minimum(LANES, 1)
        out.append(global_access(f"cp.async scale_b[kb={k_step}]", "scale_b",
                                 nb * ksteps + k_step, 4, 4,
                                 (LANES < 2) & (nb < -(-N // 128)), Op.CP_ASYNC))
        return out

    def tma_stores(self, consumer: int, M: int, N: int,
                   block: tuple[int, int] = (0, 0)) -> list[TmaBox]:
        """Per sub-tile: BN / 64 boxes of 64 x 64 (swizzled staging), or one 64 x BN."""
        if not self.tma_store(N):
            return []
        out = []
        for sub in range(2):
            row = block[0] * self.bm + self._sub_rows(consumer, sub)
            if self.swizzled_c:
                per = self.bn // STAGING_COLS
                for ch in range(per):
                    chunk = (2 * consumer + sub) * per + ch
                    out.append(TmaBox("C", "C", Op.STORE, row,
                                      block[1] * self.bn + ch * STAGING_COLS, CONSUMER_ROWS,
                                      STAGING_COLS, 2, M, N, self.c_base + chunk * 8192, chunk))
            else:
                chunk = 2 * consumer + sub
                out.append(TmaBox("C", "C", Op.STORE, row, block[1] * self.bn, CONSUMER_ROWS,
                                  self.bn, 2, M, N,
                                  self.c_base + chunk * CONSUMER_ROWS * self.bn * 2, chunk))
        return out

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """The TMA stores (first warp of each consumer), or with N % 8 != 0 every consumer
        warp's direct stores of both sub-tiles (gs_store_acc_bf16)."""
        c = self.consumer_of(warp)
        if c is None:
            return []
        if self.tma_store(N):
            if warp % WARPS_PER_GROUP:
                return []
            return [a for box in self.tma_stores(c, M, N, block) for a in box.warp_accesses()]
        out = []
        for sub in range(2):
            r = (block[0] * self.bm + self._sub_rows(c, sub) + (warp % WARPS_PER_GROUP) * 16
                 + LANES // 4)
            for j in range(self.bn // 8):
                col = block[1] * self.bn + 8 * j + 2 * (LANES % 4)
                for h in range(2):
                    row = r + 8 * h
                    ok = row < M
                    if N % 2 == 0:
                        out.append(global_access(f"C bf16x2 sub {sub} cols 8*{j}+, row+{8 * h}",
                                                 "C", row * N + col, 4, 2, ok & (col < N),
                                                 Op.STORE))
                        continue
                    for q in range(2):
                        out.append(global_access(f"C bf16 sub {sub} cols 8*{j}+{q}, "
                                                 f"row+{8 * h}", "C", row * N + col + q, 2, 2,
                                                 ok & (col + q < N), Op.STORE))
        return out

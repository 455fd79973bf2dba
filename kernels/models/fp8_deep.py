"""fp8_deep's access model: the block-scaled FP8 GEMM on DeepGEMM's schedule.

The level's CUDA source is the file its entry names (``fp8_deep_level.FP8_DEEP.source``).

What differs from fp8_block_scaled's model (hopper_fp8.py): a 256 x BN tile; each of the
two consumer warpgroups owns 128 rows as two 64-row sub-tiles (one wgmma.m64nBNk32 group
and one promotion each per K block); the ring holds A stages, then Bt stages, then each
warpgroup's C staging buffer, then per stage the K block's scales (256 row scales of A,
two block scales of Bt), which the producer warp copies with cp.async (the level's row scales
come by TMA where M % 4 == 0; the model draws the lanes' copies, its form elsewhere); the tiles are
walked in groups of GW tile columns, row by row; the grid is the level's grid rule; each
tile's K blocks start at stage 0 (RING 0; with RING 1 the ring of stages runs on from tile
to tile, and the model draws a tile's steps from stage 0, as its CTA's first tile takes
them). With EPC 1 each warpgroup's C staging is a ring of three 32 x 64 boxes, written
and stored one box at a time (by the two warps whose rows it holds).
"""

from __future__ import annotations

import numpy as np

from ..ladder import registry
from ..ladder.fp8_deep_level import C_BOX_BYTES, C_BOX_RING, C_BOX_ROWS, SCALE_STAGE_BYTES
from .banks import WARP_SIZE
from .hopper import (
    CONSUMER_ROWS,
    H200_SMS,
    STAGING_COLS,
    WARPS_PER_GROUP,
    WarpSpecialized,
)
from .level_model import LANES, Op, SmemArray, Space, WarpAccess, global_access
from .persistent import TmaBox, WorkPiece

HALF_ROWS = 128  # a consumer warpgroup's rows (two sub-tiles), and one TMA box of A
SCALE_FLOATS = SCALE_STAGE_BYTES // 4


class Fp8Deep(WarpSpecialized):
    level_id = "fp8_deep"
    elem_bytes = 1
    sub_tiles = 2
    producer_regs, consumer_regs = 56, 224  # 40 spills the producer's unrolled ring
    notes = ("DeepGEMM's schedule on the block-scaled FP8 inputs: 256 x BN tiles, each "
             "consumer warpgroup two 64-row sub-tiles of one wgmma.m64nBNk32 group each, "
             "waited for and promoted one after the other; per K block a consumer thread "
             "reads its four row scales of A and the tile's Bt block scale(s) from the "
             "stage (LDS), which came there by one TMA box with the stage's data (the "
             "producer's lanes' cp.async where M % 4 != 0, drawn here); C is staged per "
             "warpgroup (128-byte swizzle in 64 x 64 chunks, or plain rows where BN % 64 "
             "!= 0; with EPC 1, where a tile has many K blocks, one 32 x 64 box at a time "
             "through a ring of three, which leaves room for a fourth stage) and stored by "
             "TMA.")

    @property
    def empty_count(self) -> int:
        """fp8_deep.cu's count, (WREL == 2 ? 8 : 2) * CL: each consumer warp (WREL 2) or
        warpgroup arrives, on both CTAs' barriers with 2-CTA clusters."""
        return self.consumers * (WARPS_PER_GROUP if self.wrel == 2 else 1) * self.cl

    def setup(self, p: dict[str, int]) -> None:
        self.bm, self.bn, self.bk = p["BM"], p["BN"], p["BK"]
        self.stages, self.group_rows = p["STAGES"], p["GW"]
        self.cl = p.get("CL", 1)
        self.wrel = p.get("WREL", 2)  # 2: every consumer warp frees a stage; 1: each warpgroup
        self.consumers, self.kpipe, self.epi, self.stream_k = 2, 0, 1, 0
        self.half_cols = self.bn  # one part: the whole width, promoted once per sub-tile
        self.instruction = f"wgmma.mma_async.m64n{self.bn}k32.f32.e4m3.e4m3"
        self.set_sizes()
        self.swizzled_c = self.bn % STAGING_COLS == 0
        self.epc = p.get("EPC", 0) if self.swizzled_c else 0
        # a warpgroup's staging, BF16: its whole 128 x BN, or (EPC 1) three 32 x 64 boxes
        self.c_bytes = (C_BOX_RING * C_BOX_BYTES if self.epc
                        else 2 * CONSUMER_ROWS * self.bn * 2)
        self.c_base = self.stages * self.stage_bytes
        self.sc_base = self.c_base + 2 * self.c_bytes
        self.sass_k_steps = self.stages  # the K loop is unrolled over the ring's stages

    def a_stage_base(self, stage: int) -> int:
        """The ring holds all A stages, then all Bt stages."""
        return stage * self.a_bytes

    def b_stage_base(self, stage: int) -> int:
        return self.stages * self.a_bytes + stage * self.b_bytes

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

    # -- shared memory -----------------------------------------------------------------
    def smem_arrays(self) -> list[SmemArray]:
        """A stages, Bt stages, the staging of C (64 x 64 swizzled chunks, or one plain
        64 x BN block per sub-tile), the scales of each stage."""
        a = SmemArray("As", self.bm, self.bk, self.bk, 1, self.stages, 0, "A", True,
                      self.a_bytes)
        b = SmemArray("Bs", self.bn, self.bk, self.bk, 1, self.stages,
                      self.stages * self.a_bytes, "Bt", True, self.b_bytes)
        if self.epc:
            cs = SmemArray("Cs", C_BOX_ROWS, STAGING_COLS, STAGING_COLS, 2, 2 * C_BOX_RING,
                           self.c_base, "C", True)
        elif self.swizzled_c:
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
                          ss.address(s, 0, self.sub_rows(c, sub) + r + 8 * h), stage=s)
               for sub in range(2) for h in range(2)]
        for b in range(1 if 128 % self.bn == 0 else 2):
            out.append(WarpAccess(f"LDS Bt block scale {b}", "Ss", Space.SHARED, Op.LOAD, 4,
                                  ss.address(s, 0, np.full(WARP_SIZE, 256 + b)), stage=s))
        return out

    def epilogue_accesses(self, warp: int) -> list[WarpAccess]:
        """A consumer warp's staging stores, once per tile: for each sub-tile and 8-column
        group g, rows r and r + 8, a bf16 pair (4 bytes) a lane; in 64 x 64 chunks with
        16-byte unit j of row rr at j ^ (rr % 8), or in plain rows of BN columns. EPC 1:
        box by box (sub-tile, 64-column chunk, 32-row half) into the warpgroup's ring of
        three 32 x 64 boxes, each box's rows written by the two warps that hold them."""
        c = self.consumer_of(warp)
        if c is None:
            return []
        cs = self.smem_arrays()[2]
        r = (warp % WARPS_PER_GROUP) * 16 + LANES // 4
        col = 2 * (LANES % 4)
        out = []
        if self.epc:
            half = (warp % WARPS_PER_GROUP) // 2
            for b, (sub, ch, hh) in enumerate(self.c_boxes()):
                if hh != half:
                    continue
                slot = c * C_BOX_RING + b % C_BOX_RING  # the ring's buffer (from a tile's first)
                for j in range(8):
                    for h in range(2):
                        rr = r + 8 * h - C_BOX_ROWS * hh
                        out.append(WarpAccess(
                            f"epilogue STS.32 C box {b} (sub-tile {sub}, cols "
                            f"{ch * STAGING_COLS + 8 * j}+[0,8), rows r{'+8' if h else ''})",
                            "Cs", Space.SHARED, Op.STORE, 4, cs.address(slot, rr, 8 * j + col),
                            stage=slot))
            return out
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

    # -- global memory ---------------------------------------------------------------------
    def tma_loads(self, k_step: int, M: int, N: int, K: int,
                  block: tuple[int, int] = (0, 0), iteration: int | None = None
                  ) -> list[TmaBox]:
        """A in two boxes of 128 rows (with CL = 2 the first CTA copies both, multicast to
        both CTAs), Bt in one box of BN rows."""
        s = self.stage(k_step if iteration is None else iteration)
        k0 = k_step * self.bk
        out = [TmaBox("A", "A", Op.LOAD, block[0] * self.bm + h * HALF_ROWS, k0, HALF_ROWS,
                      self.bk, 1, M, K, self.a_stage_base(s) + h * HALF_ROWS * self.bk, s)
               for h in range(2)]
        out.append(TmaBox("Bt", "Bt", Op.LOAD, block[1] * self.bn, k0, self.bn, self.bk, 1, N,
                          K, self.b_stage_base(s), s))
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

    def c_boxes(self) -> list[tuple[int, int, int]]:
        """EPC 1: a warpgroup's C boxes in the order it stores them: (sub-tile, 64-column
        chunk, 32-row half)."""
        chunks = self.bn // STAGING_COLS
        return [(sub, ch, hh) for sub in range(2) for ch in range(chunks) for hh in range(2)]

    def tma_stores(self, consumer: int, M: int, N: int,
                   block: tuple[int, int] = (0, 0)) -> list[TmaBox]:
        """Per sub-tile: BN / 64 boxes of 64 x 64 (swizzled staging), or one 64 x BN; with
        EPC 1, 2 BN / 64 boxes of 32 x 64 through the ring of three."""
        if not self.tma_store(N):
            return []
        out = []
        if self.epc:
            for b, (sub, ch, hh) in enumerate(self.c_boxes()):
                slot = consumer * C_BOX_RING + b % C_BOX_RING
                row = block[0] * self.bm + self.sub_rows(consumer, sub) + C_BOX_ROWS * hh
                out.append(TmaBox("C", "C", Op.STORE, row, block[1] * self.bn + ch * STAGING_COLS,
                                  C_BOX_ROWS, STAGING_COLS, 2, M, N,
                                  self.c_base + slot * C_BOX_BYTES, slot))
            return out
        for sub in range(2):
            row = block[0] * self.bm + self.sub_rows(consumer, sub)
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

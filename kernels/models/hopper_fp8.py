"""The FP8 block-scaled levels: wgmma_tma's warp-specialized pipeline on E4M3 with
DeepGEMM-style promotion, and the scales staged through shared memory (SCL)."""

from __future__ import annotations

import copy

import numpy as np

from ..ladder.hopper_levels import fp8_scale_blocks
from .banks import WARP_SIZE
from .hopper import CONSUMER_ROWS, STAGING_HALF_BYTES, WARPS_PER_GROUP, WarpSpecialized
from .level_model import (
    LANES,
    LevelModel,
    Op,
    SmemArray,
    Space,
    WarpAccess,
    ceil_div,
    global_access,
)

BLOCK_COLS = 128  # columns of Bt one scale covers


class Fp8BlockScaled(WarpSpecialized):
    level_id = "fp8_block_scaled"
    elem_bytes = 1
    instruction = "wgmma.mma_async.m64n128k32.f32.e4m3.e4m3"
    notes = ("The wgmma_tma pipeline on E4M3 with 128-deep K blocks: per block and per "
             "128-column half, 4 wgmma.m64n128k32 into temporary registers, then FP32 "
             "promotion acc += tmp * scale_a[row] * scale_b[block]. The scales go through "
             "shared memory (SCL): while a block's first half runs, a consumer reads this "
             "block's scales from one buffer (4 LDS a thread, broadcasts) and its first 64 "
             "threads (and one per half) copy the next block's into the other (cp.async, "
             "4 bytes). A tile whose second half lies wholly past N issues only its first "
             "(N = 2112 with BN = 256: the last tile column). BN = 192 (the host's pick "
             "where it needs fewer waves): one part of 4 wgmma.m64n192k32 whose columns "
             "span two scale blocks of Bt, both read. Otherwise as wgmma_tma: the "
             "epilogue's staging stores conflict-free.")

    def k_steps(self, K: int) -> int:
        return K // self.bk  # the host refuses K % 128 != 0

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """Besides the TMA boxes (warp 0), the scales of K block k_step. SCL = 0: each
        consumer warp loads, per half h of the tile, scale_b of block (nb, k_step) (one
        address for the warp) and scale_a of its rows r0 and r0 + 8 (8 rows, 4 lanes
        each), as the compiled loop does (6 LDG per K step). SCL = 1: threads 0..63 of a
        consumer warpgroup copy the scale_a of its 64 rows (two warps, 32 contiguous
        floats each) and threads 64.. the halves' scale_b (cp.async, one K step ahead)."""
        out = super().global_accesses(warp, k_step, M, N, K, block)
        c = self.consumer_of(warp)
        if c is None:
            return out
        ksteps = max(1, K // self.bk)
        row0 = block[0] * self.bm + c * CONSUMER_ROWS
        nb0 = block[1] * self.bn // BLOCK_COLS
        nb_count = ceil_div(N, BLOCK_COLS)
        if self.scl:
            t = (warp % WARPS_PER_GROUP) * WARP_SIZE + LANES
            if t[0] < CONSUMER_ROWS:
                out.append(global_access(f"cp.async scale_a[kb={k_step}] rows", "scale_a",
                                         k_step * M + row0 + t, 4, 4, row0 + t < M,
                                         Op.CP_ASYNC))
            elif t[0] < self.scale_slots:
                nbs = nb0 + t - CONSUMER_ROWS
                out.append(global_access(f"cp.async scale_b[kb={k_step}]", "scale_b",
                                         nbs * ksteps + k_step, 4, 4,
                                         (t < self.scale_slots) & (nbs < nb_count),
                                         Op.CP_ASYNC))
            return out
        r0 = row0 + (warp % WARPS_PER_GROUP) * 16 + LANES // 4
        for h in range(self.b_scales_read):
            nb = nb0 + h
            uniform = np.full(WARP_SIZE, nb * ksteps + k_step)
            out.append(global_access(f"LDG scale_b[nb={nb}, kb={k_step}]", "scale_b",
                                     uniform, 4, 4, np.full(WARP_SIZE, nb < nb_count)))
            for d in (0, 8):
                out.append(global_access(f"LDG scale_a[kb={k_step}, r0+{d}] (half {h})",
                                         "scale_a", k_step * M + r0 + d, 4, 4, r0 + d < M))
        return out

    # -- the scales through shared memory (SCL = 1) -------------------------------------
    def setup(self, p: dict[str, int]) -> None:
        super().setup(p)
        # parts: halves of 128 columns, or the whole tile (192) in one wgmma shape
        self.half_cols = BLOCK_COLS if self.bn % BLOCK_COLS == 0 else self.bn
        self.scl = int(p.get("SCL", 0)) and (self.kpipe == 0 or self.bn != BLOCK_COLS)
        self.halves = self.bn // self.half_cols
        self.scale_blocks = fp8_scale_blocks(self.bn)
        # SKIP: a second copy of the K loop issues only the first half (the tiles whose
        # second half lies wholly past N); ``live`` is the halves the modelled copy issues
        self.skip = int(p.get("SKIP", 0)) and self.halves > 1 and self.kpipe == 0
        self.live = self.halves

    @property
    def issued_halves(self) -> int:
        return self.live

    def k_loop_copies(self) -> list[LevelModel]:
        if not self.skip:
            return [self]
        edge = copy.copy(self)
        edge.live = 1
        return [self, edge]

    @property
    def b_scales_read(self) -> int:
        """The Bt block scales a K step reads: one per issued half, or the blocks a whole
        192-wide part spans."""
        return self.live if self.half_cols == BLOCK_COLS else self.scale_blocks

    @property
    def scale_slots(self) -> int:
        """FP32 values of one scale buffer: the consumer's 64 row scales of A, then the
        block scales of Bt the tile spans."""
        return CONSUMER_ROWS + self.scale_blocks

    def smem_arrays(self) -> list[SmemArray]:
        """wgmma_tma's arrays, and with SCL two scale buffers per consumer (buffer
        2 c + (K step % 2)) after the staging buffers."""
        arrays = super().smem_arrays()
        if self.scl:
            staging = self.epi * self.consumers * 2 * STAGING_HALF_BYTES
            base = self.stages * self.stage_bytes + staging
            arrays.append(SmemArray("Ss", 1, self.scale_slots, self.scale_slots, 4,
                                    2 * self.consumers, base, "scales"))
        return arrays

    def main_loop_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """With SCL, per K step a consumer thread reads its rows' A scales (rows r0 and
        r0 + 8) and the B scales of the halves it issues (``live``: one LDS.64 for two)
        from buffer k_step % 2,
        then threads 0..63 of the warpgroup copy the next K block's row scales and the
        next halves' B scales into the other buffer (cp.async, 4 bytes each); a warp with
        no copying lane skips it."""
        c = self.consumer_of(warp)
        if c is None or not self.scl:
            return []
        ss = self.smem_arrays()[-1]
        t = (warp % WARPS_PER_GROUP) * WARP_SIZE + LANES
        r0 = (t // 32) * 16 + (t % 32) // 4
        buf = 2 * c + k_step % 2
        out = [WarpAccess(f"LDS A scale rows r0{d}", "Ss", Space.SHARED, Op.LOAD, 4,
                          ss.address(buf, 0, r0 + (8 if d else 0)), stage=buf)
               for d in ("", "+8")]
        # the halves' B scales are adjacent: ptxas reads two of them with one LDS.64
        for h in range(0, self.b_scales_read, 2):
            n = min(2, self.b_scales_read - h)
            out.append(WarpAccess(f"LDS B scales of halves {h}..{h + n - 1}", "Ss",
                                  Space.SHARED, Op.LOAD, 4 * n,
                                  ss.address(buf, 0, np.full(WARP_SIZE, CONSUMER_ROWS + h)),
                                  stage=buf))
        copying = t < self.scale_slots
        if copying.any():
            nxt = 2 * c + (k_step + 1) % 2
            slot = np.minimum(t, self.scale_slots - 1)
            out.append(WarpAccess("cp.async.4 next K block's scales", "Ss", Space.SHARED,
                                  Op.CP_ASYNC, 4, ss.address(nxt, 0, slot), copying, stage=nxt))
        return out


class Fp8StreamK(Fp8BlockScaled):
    level_id = "fp8_stream_k"
    notes = Fp8BlockScaled.notes + (" The last wave of tiles is shared out by K blocks "
                                    "(stream-K).")

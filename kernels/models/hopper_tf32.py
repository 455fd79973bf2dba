"""tf32_wgmma: wgmma_tma's pipeline (kernels/models/hopper.py) on 4-byte FP32 operands that
the tensor cores read as TF32 (kernels/cuda/tf32_wgmma.cu).

What differs from the BF16 model:

- an element is 4 bytes, so one 128-byte swizzle row, the K step, is BK = 32 floats, and a
  wgmma.m64nBNk8 (TF32) steps 32 bytes along it, as a k16 BF16 one does: BK / 8 = 4
  wgmmas per consumer per K step, with the same descriptor offsets;
- C is FP32 and leaves from registers (no staging buffer, no TMA store): each lane stores
  its two columns of a row as one 8-byte float2 where N is even (rows r and r + 8,
  columns 8j + 2 (lane % 4)), else element by element. So the shared memory holds the
  ring's stages only, and no LSU instruction touches it at all.
"""

from __future__ import annotations

from ..ladder import registry
from .hopper import WARPGROUP, WARPS_PER_GROUP, WarpSpecialized
from .level_model import LANES, Op, SmemArray, WarpAccess, global_access
from .persistent import TmaBox


class Tf32Wgmma(WarpSpecialized):
    level_id = "tf32_wgmma"
    elem_bytes = 4
    wgmma_k_bytes = 32  # K = 8 TF32 elements
    instruction = "wgmma.mma_async.m64n256k8.f32.tf32.tf32"
    notes = ("wgmma_tma's warp-specialized, persistent pipeline on FP32 operands read as "
             "TF32: a K step is 32 floats (one 128-byte swizzle row), four wgmma.k8 per "
             "consumer. No shared load or store instruction at all: TMA fills the stages, "
             "the tensor cores read them, and C goes to global memory straight from the "
             "accumulators (a float2 per lane).")

    def setup(self, p: dict[str, int]) -> None:
        super().setup(p)
        self.epi = 0  # no staging of C: FP32 stores from registers
        # the register file shared out as the source's CREG: 40 a producer thread, the
        # rest to the consumers in steps of 8, at most 232
        share = (65536 - self.producer_regs * WARPGROUP) // (self.consumers * WARPGROUP)
        self.consumer_regs = min(232, share // 8 * 8)

    def smem_arrays(self) -> list[SmemArray]:
        """The ring's A and Bt stages (stage s holds A then Bt at s * stage_bytes)."""
        a, b, _staging = super().smem_arrays()
        return [a, b]

    def tma_store(self, N: int) -> bool:
        return False

    def tma_stores(self, consumer: int, M: int, N: int,
                   block: tuple[int, int] = (0, 0)) -> list[TmaBox]:
        return []

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """A consumer warp's stores of its 16 rows (gs_store_acc_f32): per 8-column group
        j and row half h, a float2 (8 bytes) per lane where N is even, else one float at a
        time."""
        c = self.consumer_of(warp)
        if c is None:
            return []
        r = (block[0] * self.bm + self.sub_rows(c, 0) + (warp % WARPS_PER_GROUP) * 16
             + LANES // 4)
        out = []
        for h in range(2):
            row = r + 8 * h
            ok = row < M
            for j in range(self.bn // 8):
                col = block[1] * self.bn + 8 * j + 2 * (LANES % 4)
                if N % 2 == 0:
                    out.append(global_access(f"C float2 cols 8*{j}+, row+{8 * h}", "C",
                                             row * N + col, 8, 4, ok & (col < N), Op.STORE))
                    continue
                for q in range(2):
                    out.append(global_access(f"C float cols 8*{j}+{q}, row+{8 * h}", "C",
                                             row * N + col + q, 4, 4, ok & (col + q < N),
                                             Op.STORE))
        return out

    def shape_caveat(self, M: int, N: int, K: int) -> str:
        multiple = registry.get(self.level_id).k_multiple if self.level_id else 1
        if K % multiple:
            return f"the host refuses K % {multiple} != 0 (counted as if it ran)"
        return ""

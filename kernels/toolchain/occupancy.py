"""Occupancy: how many blocks of a kernel fit on one SM, and which resource says so.

Pure arithmetic, no GPU and no Qt, so the app can also answer "what would one register
more, or one KB of shared memory less, change". It follows the CUDA Occupancy Calculator
as NVIDIA ships it in the toolkit, ``include/cuda_occupancy.h`` (CUDA 13;
``cudaOccMaxActiveBlocksPerMultiprocessor`` and the functions it calls), for compute
capability 9.0:

- registers are allocated per warp, ``regs × 32`` rounded up to 256
  (``cudaOccRegAllocationGranularity``), in each of the SM's 4 sub-partitions
  (``cudaOccSubPartitionsPerMultiprocessor``) of 65536 / 4 registers: warps per SM =
  4 × floor(16384 / registers per warp), blocks = that / warps per block. 255 registers ×
  256 threads: 8192 per warp, 2 warps per sub-partition, 8 per SM, one block;
- shared memory per block is static + dynamic + the 1 KB the driver reserves per block
  from Ampere on (``reservedSharedMemPerBlock``), rounded up to 128 bytes
  (``cudaOccSMemAllocationGranularity``); blocks = 233472 (228 KB per SM, the default
  carveout takes the largest configuration that fits) / that. A block may use at most
  232448 bytes (227 KB, opted in) + the reserved 1 KB;
- at most 64 warps (2048 threads) and 32 blocks per SM (``cudaOccMaxBlocksPerMultiprocessor``);
- on Hopper a block using named barriers is also limited to 2 × 32 / barriers blocks
  (``cudaOccMaxBlocksPerSMBlockBarrierLimit``).

The device's numbers are those of the H100/H200 (``HOPPER``) unless a GPU's own attributes
are given (:meth:`DeviceLimits.from_attributes`). Resource names in results:
``registers``, ``shared_memory``, ``threads`` (warp slots), ``blocks``, ``barriers``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

RESOURCES = ("registers", "shared_memory", "threads", "blocks", "barriers")
KB = 1024


@dataclass(frozen=True, slots=True)
class DeviceLimits:
    regs_per_sm: int = 65536
    regs_per_block: int = 65536
    reg_alloc_unit: int = 256  # registers per warp are allocated in multiples of this
    max_regs_per_thread: int = 255
    sub_partitions: int = 4
    warp_size: int = 32
    max_threads_per_sm: int = 2048  # 64 warps
    max_threads_per_block: int = 1024
    max_blocks_per_sm: int = 32
    smem_per_sm: int = 233472  # 228 KB
    smem_per_block_optin: int = 232448  # 227 KB
    smem_reserved_per_block: int = 1024
    smem_alloc_unit: int = 128
    barriers_per_block_slot: int = 2  # named barriers available: 2 x max blocks per SM

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @classmethod
    def from_attributes(cls, attrs: dict[str, int]) -> DeviceLimits:
        """From ``cupy.cuda.Device().attributes`` (the driver's device attributes)."""
        names = {"regs_per_sm": "MaxRegistersPerMultiprocessor",
                 "regs_per_block": "MaxRegistersPerBlock",
                 "max_threads_per_sm": "MaxThreadsPerMultiProcessor",
                 "max_threads_per_block": "MaxThreadsPerBlock",
                 "max_blocks_per_sm": "MaxBlocksPerMultiprocessor",
                 "smem_per_sm": "MaxSharedMemoryPerMultiprocessor",
                 "smem_per_block_optin": "MaxSharedMemoryPerBlockOptin",
                 "smem_reserved_per_block": "ReservedSharedMemoryPerBlock"}
        return cls(**{f: int(attrs[a]) for f, a in names.items() if a in attrs})

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


HOPPER = DeviceLimits()


@dataclass(frozen=True, slots=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    max_warps_per_sm: int
    limited_by: tuple[str, ...]  # every resource whose own limit equals blocks_per_sm
    limits: dict[str, int]  # resource -> blocks per SM it alone would allow
    regs_per_block: int  # as allocated
    smem_per_block: int  # as allocated: static + dynamic + reserved, rounded up

    @property
    def pct(self) -> float:
        return 100.0 * self.warps_per_sm / self.max_warps_per_sm

    def as_dict(self) -> dict[str, Any]:
        return {"blocks_per_sm": self.blocks_per_sm, "warps_per_sm": self.warps_per_sm,
                "occupancy_pct": round(self.pct, 2), "limited_by": list(self.limited_by),
                "limits": dict(self.limits), "regs_per_block": self.regs_per_block,
                "smem_per_block": self.smem_per_block}


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(regs: int, threads: int, smem_static: int = 0, smem_dynamic: int = 0,
              device: DeviceLimits = HOPPER, barriers: int = 0) -> Occupancy:
    """Blocks per SM of a kernel using ``regs`` registers per thread, ``threads`` per
    block, ``smem_static`` + ``smem_dynamic`` bytes of shared memory and ``barriers``
    named barriers (0: not counted), as the CUDA occupancy calculator finds them."""
    d = device
    warps = -(-threads // d.warp_size)
    fits = 0 < threads <= d.max_threads_per_block
    # registers, per sub-partition (the hardware also checks the block's total)
    regs_per_warp = _round_up(regs * d.warp_size, d.reg_alloc_unit)
    regs_block = regs_per_warp * warps
    assumed = regs_per_warp * _round_up(warps, d.sub_partitions)
    if regs > d.max_regs_per_thread or max(regs_block, assumed) > d.regs_per_block:
        by_regs = 0
    elif regs_per_warp == 0:
        by_regs = d.max_blocks_per_sm
    else:
        per_partition = (d.regs_per_sm // d.sub_partitions) // regs_per_warp
        by_regs = per_partition * d.sub_partitions // warps if warps else 0
    # shared memory, with the per-block reservation and allocation unit
    smem_block = _round_up(smem_static + smem_dynamic + d.smem_reserved_per_block,
                           d.smem_alloc_unit)
    if smem_block > d.smem_per_block_optin + d.smem_reserved_per_block:
        by_smem = 0
    else:
        by_smem = d.smem_per_sm // smem_block
    limits = {"registers": by_regs if fits else 0, "shared_memory": by_smem,
              "threads": d.max_warps_per_sm // warps if fits and warps else 0,
              "blocks": d.max_blocks_per_sm}
    if barriers > 0:
        limits["barriers"] = d.barriers_per_block_slot * d.max_blocks_per_sm // barriers
    blocks = min(limits.values())
    limited_by = tuple(r for r in RESOURCES if limits.get(r) == blocks)
    return Occupancy(blocks, blocks * warps, d.max_warps_per_sm, limited_by, limits,
                     regs_block, smem_block)


def what_if(regs: int, threads: int, smem_static: int = 0, smem_dynamic: int = 0,
            device: DeviceLimits = HOPPER, barriers: int = 0) -> dict[str, Any]:
    """What a small change would do: blocks per SM with one register per thread more or
    less and with 1 KB of shared memory more or less (None where the change is impossible:
    below 1 or above the 255 registers a thread can address, below 0 bytes); and the
    thresholds: the most
    registers per thread and the most shared memory per block (static + dynamic, as the
    kernel declares it) that keep the present blocks per SM, and those that would fit one
    block more (None where no such number exists)."""
    def blocks(r: int, smem: int) -> int:
        return occupancy(r, threads, max(smem, 0), 0, device, barriers).blocks_per_sm

    smem = smem_static + smem_dynamic
    now = blocks(regs, smem)
    out: dict[str, Any] = {
        "regs-1": blocks(regs - 1, smem) if regs > 1 else None,
        "regs+1": blocks(regs + 1, smem) if regs < device.max_regs_per_thread else None,
        "smem-1KB": blocks(regs, smem - KB) if smem >= KB else None,
        "smem+1KB": blocks(regs, smem + KB),
    }
    reg_range = range(1, device.max_regs_per_thread + 1)
    keep = [r for r in reg_range if blocks(r, smem) >= now]
    more = [r for r in reg_range if blocks(r, smem) > now]
    out["regs_max_keeping_blocks"] = max(keep) if keep and now else None
    out["regs_max_for_one_more_block"] = max(more) if more else None
    top = device.smem_per_block_optin
    out["smem_max_keeping_blocks"] = _max_smem(lambda s: blocks(regs, s) >= now, top) \
        if now else None
    out["smem_max_for_one_more_block"] = _max_smem(lambda s: blocks(regs, s) > now, top)
    return out


def _max_smem(ok: Any, top: int) -> int | None:
    """The largest shared memory size in [0, top] for which ``ok`` holds (monotone:
    true up to some size, false above), by bisection; None if it fails at 0."""
    if not ok(0):
        return None
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo

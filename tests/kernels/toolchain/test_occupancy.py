"""The occupancy calculator (kernels/toolchain/occupancy.py) on cases worked by hand from the CUDA
occupancy calculator's rules (include/cuda_occupancy.h) for compute capability 9.0."""

from __future__ import annotations

import pytest

from gemmscope.kernels.toolchain.occupancy import HOPPER, DeviceLimits, occupancy, what_if

KB = 1024


def test_255_registers_and_256_threads_fit_one_block_limited_by_registers():
    # 255 x 32 = 8160 -> 8192 registers per warp; 16384 per sub-partition hold 2 warps,
    # 4 sub-partitions 8 warps: one block of 8 warps (the cp_async level's 12.5%)
    occ = occupancy(255, 256)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limited_by) == (1, 8, ("registers",))
    assert occ.pct == 12.5
    assert occ.regs_per_block == 8 * 8192


def test_200_kb_of_dynamic_shared_memory_fit_one_block_limited_by_shared_memory():
    occ = occupancy(32, 256, 0, 200 * KB)
    assert (occ.blocks_per_sm, occ.limited_by) == (1, ("shared_memory",))
    assert occ.smem_per_block == 200 * KB + 1024  # the 1 KB reserved per block
    assert occ.limits["registers"] == 8


@pytest.mark.parametrize(("regs", "threads", "smem", "blocks", "limited_by"), [
    (32, 1024, 0, 2, ("registers", "threads")),    # 64 warps either way
    (64, 256, 0, 4, ("registers",)),               # 2048 per warp: 8 per partition, 32 warps
    (16, 32, 0, 32, ("blocks",)),                  # tiny blocks: 32 per SM at most
    (40, 128, 48 * KB, 4, ("shared_memory",)),     # 49 KB each: 233472 // 50176 = 4
    (32, 1025, 0, 0, ("registers", "threads")),    # more threads than a block may have
    (168, 384, 64 + 230400, 1, ("registers", "shared_memory")),  # wgmma_tma
])
def test_known_cases(regs, threads, smem, blocks, limited_by):
    occ = occupancy(regs, threads, 0, smem)
    assert occ.blocks_per_sm == blocks
    assert occ.limited_by[:len(limited_by)] == limited_by


def test_shared_memory_over_the_opt_in_limit_fits_nothing():
    assert occupancy(32, 128, 0, 227 * KB).blocks_per_sm == 1
    assert occupancy(32, 128, 0, 227 * KB + 1).blocks_per_sm == 0


def test_named_barriers_limit_blocks_on_hopper():
    # 64 barrier slots (2 x 32 blocks): 16 barriers per block allow 4 blocks
    occ = occupancy(32, 64, barriers=16)
    assert occ.limits["barriers"] == 4 and occ.blocks_per_sm == 4
    assert occ.limited_by == ("barriers",)


def test_what_one_register_or_one_kb_would_change():
    w = what_if(255, 256, 0, 74496)  # cp_async
    assert w["regs-1"] == 1 and w["regs+1"] is None  # 256 registers cannot be addressed
    assert w["regs_max_for_one_more_block"] == 128  # 4096 per warp: 4 per partition
    assert w["regs_max_keeping_blocks"] == 255
    # two blocks of 113 KB fill the SM; one more KB leaves room for one
    edge = 113 * KB
    assert occupancy(64, 256, 0, edge).blocks_per_sm == 2
    w = what_if(64, 256, 0, edge)
    assert (w["smem+1KB"], w["smem-1KB"]) == (1, 2)
    assert w["smem_max_keeping_blocks"] == edge
    assert w["smem_max_for_one_more_block"] == 76800  # 233472 / 3 = 77824, less 1 KB
    # one register more and the wgmma level no longer launches at all
    assert what_if(168, 384, 64, 230400)["regs+1"] == 0


def test_limits_from_device_attributes():
    attrs = {"MaxRegistersPerMultiprocessor": 65536, "MaxRegistersPerBlock": 65536,
             "MaxThreadsPerMultiProcessor": 2048, "MaxThreadsPerBlock": 1024,
             "MaxBlocksPerMultiprocessor": 32, "MaxSharedMemoryPerMultiprocessor": 233472,
             "MaxSharedMemoryPerBlockOptin": 232448, "ReservedSharedMemoryPerBlock": 1024,
             "L2CacheSize": 62914560}
    assert DeviceLimits.from_attributes(attrs) == HOPPER
    half = DeviceLimits.from_attributes({**attrs, "MaxSharedMemoryPerMultiprocessor": 116736})
    assert occupancy(64, 256, 0, 50 * KB, half).blocks_per_sm == 2

"""Every level compiles with NVRTC, on a machine without a GPU, for every architecture it
claims (kernels/ladder/arch.py), and its resources in the cubin fit that architecture's
limits: what CI shows of the GPUs nobody here has (sm_80, sm_86, sm_89, sm_100, sm_120)."""

from __future__ import annotations

import pytest

from gemmscope.kernels.ladder import arch as archs
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import cubin
from gemmscope.kernels.toolchain import nvrtc as build

pytest.importorskip("cuda.bindings.nvrtc", reason="the nvrtc extra (cuda-bindings) is not "
                    "installed: no offline NVRTC here")

CASES = [(lv, a) for lv in registry.ladder() for a in lv.archs]


def test_every_level_claims_an_architecture_and_the_portable_ones_claim_all_four_families():
    for lv in registry.ladder():
        assert lv.archs, lv.id
        assert set(lv.archs) <= set(archs.ARCHS), lv.id
    naive = registry.get("naive").archs
    assert {"sm_80", "sm_86", "sm_89", "sm_120"} <= set(naive)


@pytest.mark.parametrize(("level", "arch"), CASES, ids=[f"{lv.id}-{a}" for lv, a in CASES])
def test_level_compiles_for_each_claimed_arch_within_its_limits(level: registry.Level,
                                                               arch: str):
    limits = archs.ARCHS[arch]
    out = build.compile_offline(level, arch=arch)
    assert "warning" not in out.log.lower(), out.log
    found = cubin.kernels(out.cubin)
    assert set(found) == set(out.lowered.values())
    bx, by = level.threads
    threads = bx * by
    dyn = level.dyn_smem_bytes()
    for res in found.values():
        where = f"{level.id} on {arch} ({res.name})"
        assert 0 < res.regs <= limits.max_regs_per_thread, where
        assert res.regs * threads <= limits.regs_per_block, where
        assert res.smem_static_bytes <= limits.static_smem_per_block_bytes, where
        assert res.smem_static_bytes + dyn <= limits.smem_per_block_optin_bytes, where
        # one block fits on an SM, with the 1 KiB the toolchain reserves per block
        assert res.smem_static_bytes + dyn + cubin.RESERVED_SHARED_BYTES \
            <= limits.smem_per_sm_bytes, where
        assert threads <= limits.max_threads_per_sm, where
        if res.max_threads is not None:
            assert threads <= res.max_threads, where


def test_a_level_over_an_architectures_shared_memory_does_not_claim_it():
    wmma = registry.get("wmma")
    need = wmma.dyn_smem_bytes()
    for name in archs.PORTABLE:
        fits = need <= archs.ARCHS[name].smem_per_block_optin_bytes
        assert (name in wmma.archs) == fits, name

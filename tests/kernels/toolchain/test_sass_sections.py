"""The SASS listing of a cubin finds every kernel section nvdisasm prints."""

from __future__ import annotations

import pytest


def test_a_kernel_with_a_short_name_is_disassembled_too():
    """nvdisasm pads a short section name with spaces (Triton's kernels, extern "C" ones):
    the listing must still find it (a user's Triton kernel's SASS comes from here)."""
    from gemmscope.kernels.toolchain import build_event, nvrtc, sass

    if build_event.nvrtc_missing() or sass.nvdisasm_missing():
        pytest.skip("NVRTC or nvdisasm missing")
    ob = nvrtc.compile_source("t", 'extern "C" __global__ void mm(float* c) '
                              "{ c[threadIdx.x] = 1.f; }", [], ("-arch=sm_90a",), "sm_90a")
    texts = sass.disassemble(ob.cubin)
    assert list(texts) == ["mm"] and "STG" in texts["mm"]

"""The ceiling probes of ``record --ceilings`` (kernels/cuda/probes) compile as the record
command builds them, offline with NVRTC (no GPU): the portable probes for every
architecture the ladder claims, the wgmma ones for sm_90a with hopper.cuh and the headers
it includes pasted in. A probe that cannot find its headers (as ceilings_hopper.cu once
could not, after hopper.cuh was split) fails here instead of on the GPU machine."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from gemmscope.kernels.engine import ceilings
from gemmscope.kernels.toolchain import nvrtc


def kernel_names(source: str) -> list[str]:
    return re.findall(r'extern "C" __global__ void(?: __launch_bounds__\([^)]*\))?\s+(\w+)\(',
                      source)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_120"])
def test_the_portable_probes_compile_for_each_architecture(arch):
    source = ceilings.probe_source("ceilings.cu")
    names = kernel_names(source)
    assert {"gs_probe_read", "gs_probe_copy", "gs_probe_ffma"} <= set(names)
    built = nvrtc.compile_source("ceilings", source, [], ("-std=c++17", f"-arch={arch}"), arch)
    assert built.cubin[:4] == b"\x7fELF"


def test_the_wgmma_probes_compile_for_hopper_with_their_headers_pasted_in():
    from gemmscope.kernels.toolchain import cubin

    source = ceilings.probe_source("ceilings_hopper.cu")
    assert '#include "' not in source  # every local header pasted, none left to find
    built = nvrtc.compile_source("ceilings_hopper", source, [],
                                 ("-std=c++17", "-arch=sm_90a"), "sm_90a")
    assert built.cubin[:4] == b"\x7fELF"
    # every probe the step times is in it (the 16-bit ones are made by one macro)
    assert {entry[0] for entry in ceilings.WGMMA.values()} <= set(cubin.kernels(built.cubin))


def probes_for(cc: str) -> ceilings.Probes:
    """The probes' SASS check for a device of compute capability ``cc``, without a GPU."""
    p = object.__new__(ceilings.Probes)
    p.cc, p._sass = cc, {}
    return p


def test_a_probe_not_compiled_to_the_instruction_it_counts_is_no_ceiling():
    from gemmscope.kernels.toolchain import sass

    if sass.nvdisasm_missing() is not None:
        pytest.skip(sass.nvdisasm_missing())
    hopper, ada = probes_for("90"), probes_for("89")
    name, instruction, _ = ceilings.MMA["fp8"]
    # Hopper has no QMMA: mma.sync e4m3 becomes F2FP conversions and FP16 HMMA there
    why = hopper.not_native("ceilings.cu", name, instruction, ceilings.MMA_PER_ITER)
    assert why is not None and "not a ceiling" in why and "0 QMMA.16832" in why
    assert ada.not_native("ceilings.cu", name, instruction, ceilings.MMA_PER_ITER) is None
    for precision in ("fp16", "bf16", "tf32"):
        name, instruction, _ = ceilings.MMA[precision]
        assert hopper.not_native("ceilings.cu", name, instruction,
                                 ceilings.MMA_PER_ITER) is None, precision
    for name, instruction, _ in ceilings.WGMMA.values():
        assert hopper.not_native("ceilings_hopper.cu", name, instruction,
                                 ceilings.WGMMA_PER_ITER) is None, name
    # more than the loop holds: said, with what it holds
    name, instruction, _ = ceilings.MMA["fp16"]
    why = hopper.not_native("ceilings.cu", name, instruction, 1000)
    assert why is not None and "HMMA.16816.F32" in why

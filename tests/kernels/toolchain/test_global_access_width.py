"""The cost of the deterministic build, kept at zero: with NVVM's load/store vectorizer off
(kernels.toolchain.nvrtc_options) a float4 copy to or from global memory stays four scalar
accesses, so the vector paths write theirs as one (common.cuh's gs_load4 / gs_store4,
mma.cuh's pair store). Compiled here by NVRTC for the levels' arch and read with nvdisasm
(no GPU): every global load and store of a level's fast (VEC=true) kernel is as wide as
the level says."""

from __future__ import annotations

import collections

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import build_event, nvrtc, nvrtc_options, sass

MISSING = build_event.nvrtc_missing() or sass.nvdisasm_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

# level -> width in bits of every global load (LDG) and store (STG) of its VEC=true kernel;
# cp.async levels load through LDGSTS (not counted here), TMA levels through the tensor unit
WIDTHS = {
    "vectorized": (128, 128),
    "warp_tiling": (128, 128),
    "cp_async": (None, 128),
    "cp_async_interior": (None, 128),
    "mma_sync": (None, 64),
    "mma_persistent": (None, 64),
}


# a width's mark in the mnemonic (none: 32 bits)
BITS = {"64": 64, "128": 128, "U16": 16, "S16": 16, "U8": 8, "S8": 8}


def global_accesses(level_id: str) -> dict[str, collections.Counter[int]]:
    """{"LDG"/"STG": Counter(width in bits)} of the level's VEC=true kernel."""
    level = registry.get(level_id)
    built = nvrtc.compile_offline(level, arch=level.arch or "sm_90")
    text = sass.disassemble(built.cubin)[built.lowered[level.name_expression(True)]]
    found: dict[str, collections.Counter[int]] = {"LDG": collections.Counter(),
                                                  "STG": collections.Counter()}
    for line in sass.parse(text):
        kind = line.mnemonic.split(".")[0]
        if line.counted and kind in found:
            sizes = [BITS[p] for p in line.mnemonic.split(".")[1:] if p in BITS]
            found[kind][sizes[0] if sizes else 32] += 1
    return found


@pytest.mark.parametrize("level_id", sorted(WIDTHS))
def test_vector_kernel_accesses_global_memory_at_its_full_width(level_id):
    load_bits, store_bits = WIDTHS[level_id]
    got = global_accesses(level_id)
    assert set(got["STG"]) == {store_bits}, got
    if load_bits is not None:
        assert set(got["LDG"]) == {load_bits}, got


def test_mma_tma_pairs_its_fp16_stores_where_rows_are_aligned():
    # where no C map can be made (N % 8 != 0; else TMA stores C): one kernel for every such
    # N, an FP16 pair a store when N is even, else element by element, so one 32-bit store
    # for each two 16-bit ones of the other path
    got = global_accesses("mma_tma")["STG"]
    assert set(got) == {16, 32} and got[16] == 2 * got[32], got


def test_float4_copy_through_a_variable_is_scalar_under_the_build_options():
    # why the tests above are needed: a float4 loaded into a zeroed variable (gs_load4's
    # pattern) and stored back is split into scalars by the front end, which NVVM's
    # vectorizer merged again; without it they stay four 32-bit accesses each (a change
    # of NVRTC that made them one again shows here, and the rule could be revisited)
    src = """extern "C" __global__ void float4_through_a_guarded_variable_copy(
        const float* a, float* b, int n) {
        const int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (i < n) v = *reinterpret_cast<const float4*>(a + i);
        v.x *= 2.f; v.y *= 3.f; v.z *= 4.f; v.w *= 5.f;
        if (i < n) *reinterpret_cast<float4*>(b + i) = v;
    }"""

    def widths(options: tuple[str, ...]) -> collections.Counter[str]:
        built = nvrtc.compile_source("copy", src, [], (*options, "-arch=sm_90"), "sm_90")
        (text,) = sass.disassemble(built.cubin).values()
        return collections.Counter(ln.mnemonic for ln in sass.parse(text)
                                   if ln.mnemonic.startswith(("LDG", "STG")))

    assert widths(nvrtc.BASE_OPTIONS) == {"LDG.E": 4, "STG.E": 4}
    without = tuple(o for o in nvrtc.BASE_OPTIONS if o not in nvrtc_options.DETERMINISTIC)
    assert widths(without) == {"LDG.E.128": 1, "STG.E.128": 1}

"""tf32_wgmma's rules without a GPU: what it refuses before launch, its reference, the
tolerance against TF32's error (emulated in numpy), its tensor maps, and its SASS (NVRTC
and nvdisasm from PyPI)."""

from __future__ import annotations

import numpy as np
import pytest

from gemmscope.kernels.device import hopper
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.fp8_deep_level import SMEM_PER_BLOCK
from gemmscope.kernels.ladder.registry import TOLERANCE, Precision
from gemmscope.kernels.toolchain import gen_wgmma

LEVEL = registry.get("tf32_wgmma")


@pytest.mark.parametrize("shape", [(1, 1, 4), (7, 13, 4), (4099, 17, 516), (1000, 999, 1004),
                                   (129, 264, 388), (8192, 8192, 8192)])
def test_every_m_and_n_runs_with_k_a_multiple_of_four(shape):
    assert LEVEL.shape_refusal(*shape) is None


@pytest.mark.parametrize("K", [1, 2, 3, 5, 1001, 4098])
def test_k_not_a_multiple_of_four_is_refused_naming_the_tma_row_pitch(K):
    why = LEVEL.shape_refusal(64, 64, K)
    assert why is not None
    assert "multiple of 4" in why and "row pitch" in why and f"K={K}" in why


def test_its_reference_is_cublas_tf32_on_the_same_bt_and_tf32_keeps_its_default():
    ref = registry.get(LEVEL.reference or "")
    assert ref.kind is registry.Kind.REFERENCE and ref.library is registry.Library.CUBLAS
    assert ref.precision is LEVEL.precision is Precision.TF32
    assert ref.b_layout == LEVEL.b_layout == "nk"  # wgmma reads TF32 only K-major
    assert registry.REFERENCE_FOR[Precision.TF32] == "cublas_tf32"
    assert registry.get("cublas_tf32").b_layout == "kn"


def test_the_stages_fit_a_blocks_shared_memory_and_each_k_step_is_one_swizzle_row():
    p = LEVEL.params
    assert p["BK"] * 4 == 128
    assert LEVEL.dyn_smem_bytes() == p["STAGES"] * (p["BM"] + p["BN"]) * 128 + 1024
    assert LEVEL.dyn_smem_bytes() <= SMEM_PER_BLOCK
    assert LEVEL.with_params({"STAGES": 5}).dyn_smem_bytes() > SMEM_PER_BLOCK


def _tf32_dropped(x: np.ndarray) -> np.ndarray:
    """x with the 13 low mantissa bits cleared: TF32 read without rounding."""
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def _rel_err(c: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("draw", ["uniform", "normal", "positive"])
def test_the_tolerance_holds_tf32s_error_with_margin_and_that_error_does_not_grow_with_k(draw):
    """TF32's relative error, emulated with the low mantissa bits dropped (the worse of
    dropping and rounding), is the same at K = 128 and 4096 and a sixth of the tolerance
    or less; the float64 product of the dropped inputs is what the GPU's FP32
    accumulation adds ~1e-6 to."""
    rng = np.random.default_rng(7)
    errs = []
    for K in (128, 4096):
        shape_a, shape_b = (48, K), (K, 40)
        if draw == "uniform":
            a, b = (rng.random(s, dtype=np.float32) * 2 - 1 for s in (shape_a, shape_b))
        elif draw == "normal":
            a, b = (rng.standard_normal(s, dtype=np.float32) for s in (shape_a, shape_b))
        else:
            a, b = (rng.random(s, dtype=np.float32) for s in (shape_a, shape_b))
        ref = a.astype(np.float64) @ b.astype(np.float64)
        tf32 = _tf32_dropped(a).astype(np.float64) @ _tf32_dropped(b).astype(np.float64)
        errs.append(_rel_err(tf32, ref))
    assert all(2e-4 < e < TOLERANCE[Precision.TF32] / 6 for e in errs), errs
    assert errs[1] / errs[0] < 1.25, errs


def test_the_tolerance_still_fails_a_k_step_left_out():
    """One BK = 32 step of K = 16384 missing (a lost stage) is 4% of C: far outside."""
    rng = np.random.default_rng(3)
    K = 16384
    a = rng.random((16, K), dtype=np.float32) * 2 - 1
    b = rng.random((K, 16), dtype=np.float32) * 2 - 1
    ref = a.astype(np.float64) @ b.astype(np.float64)
    keep = np.ones(K, bool)
    keep[4096:4096 + 32] = False
    lost = a[:, keep].astype(np.float64) @ b[keep].astype(np.float64)
    assert _rel_err(lost, ref) > 5 * TOLERANCE[Precision.TF32]


def test_fp32_operands_get_a_128_byte_box_and_a_row_pitch_of_16_byte_multiples():
    ok = hopper.TiledMap(0x1000, "f32", 1000, 1004, 128, 32)
    ok.check()
    assert ok.arguments()["data_type"] == 7 and ok.arguments()["strides"] == [1004 * 4]
    assert hopper.TiledMap(0x1000, "tf32", 8, 8, 8, 32).arguments()["data_type"] == 11
    with pytest.raises(hopper.TensorMapError, match="multiple of 16"):
        hopper.TiledMap(0x1000, "f32", 1000, 1001, 128, 32).check()
    with pytest.raises(hopper.TensorMapError, match="128-byte row"):
        hopper.TiledMap(0x1000, "f32", 1000, 1004, 128, 64).check()


def test_the_tf32_header_is_the_generators_output_and_each_wrapper_is_used():
    assert gen_wgmma.TF32_HEADER.read_text(encoding="utf-8") == gen_wgmma.tf32_header()
    source = registry.source_file(LEVEL).read_text(encoding="utf-8")
    for s in gen_wgmma.TF32_SHAPES:
        assert f"gs_wgmma_tf32_n{s.n}(" in source, s
        assert f"m64n{s.n}k8.f32.tf32.tf32" in gen_wgmma.wrapper(s)
        assert "p, 1, 1;" in gen_wgmma.wrapper(s)  # no transpose immediates for TF32
    # the BF16 and FP8 levels' header is untouched by the TF32 shapes
    assert "tf32" not in gen_wgmma.HEADER.read_text(encoding="utf-8")


@pytest.mark.parametrize("changes", [{}, {"BN": 128, "STAGES": 6}, {"BN": 192, "STAGES": 5}])
def test_the_compiled_level_multiplies_with_tf32_wgmma_and_touches_no_shared_memory_by_lsu(
        changes, monkeypatch):
    """sm_90a SASS: HGMMA.64xBNx8.F32.TF32, four per K step; TMA loads (UTMALDG); no LDS or
    STS anywhere (TMA fills the stages, the tensor cores read them, C leaves from
    registers); C stored as 8-byte float2 where N is even (STG.E.64, one per register
    pair) and element by element otherwise."""
    from gemmscope.kernels.models import model_for
    from gemmscope.kernels.toolchain.sass_check import (
        compile_sass,
        mnemonic_counts,
        sass_counts,
        tools_missing,
    )

    if tools_missing() is not None:
        pytest.skip(str(tools_missing()))
    level = LEVEL.with_params(changes)
    model = model_for(level.id, level.params)
    # compile_sass reads the registry's entry: the variant stands in for it here
    monkeypatch.setitem(registry.BY_ID, level.id, level)
    sass = compile_sass(level.id, registry.cuda_dir())
    ops = mnemonic_counts(sass)
    bn = level.params["BN"]
    hgmma = {k: v for k, v in ops.items() if k.startswith("HGMMA")}
    assert set(hgmma) == {f"HGMMA.64x{bn}x8.F32.TF32"}, hgmma
    assert hgmma[f"HGMMA.64x{bn}x8.F32.TF32"] % (level.params["BK"] // 8) == 0
    assert model.wgmma_k == 8 and len(model.wgmma_ops(0, 0)) == level.params["BK"] // 8
    assert ops.get("UTMALDG.2D", 0) >= 2
    assert sass_counts(sass) == {}
    pair_stores = sum(a.width_bytes == 8 for a in model.store_accesses(4, 1024, 1024))
    assert ops.get("STG.E.64", 0) == pair_stores == bn // 4
    assert ops.get("STG.E", 0) == bn // 2  # the odd-N path: one float per register

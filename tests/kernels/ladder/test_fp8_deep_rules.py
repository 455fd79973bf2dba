"""fp8_deep's per-shape rules (tile width, stages, grid) and its generated wgmma text; no
GPU needed."""

from __future__ import annotations

import itertools
import re

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.fp8_deep_level import (
    CL_MIN_CTA_KSTEPS,
    CL_MIN_KSTEPS,
    DEEP_WIDTHS,
    EPC_MIN_KSTEPS,
    GW_MAX_KSTEPS,
    GW_MIN_COLUMNS,
    GW_MIN_ROWS,
    SMEM_PER_BLOCK,
    deep_cluster,
    deep_epc,
    deep_grid,
    deep_ksteps,
    deep_smem,
    deep_stages,
    deep_tile_width,
    deep_waves,
)
from gemmscope.kernels.ladder.registry import cuda_dir

DEEPGEMM_SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 2112, 7168),
                   (4096, 24576, 1536), (4096, 32768, 512), (4096, 7168, 16384),
                   (4096, 4096, 7168), (4096, 7168, 2048)]


def test_width_at_n_2112_is_88_where_128_leaves_the_last_wave_nearly_empty():
    assert deep_waves(4096, 2112, 128, 132) == (3, 8)
    assert deep_waves(4096, 2112, 88, 132) == (3, 120)
    assert deep_tile_width(4096, 2112, 132) == 88


@pytest.mark.parametrize("shape", [s for s in DEEPGEMM_SHAPES if s[1] != 2112])
def test_width_is_128_where_its_waves_are_fewest(shape):
    M, N, _ = shape
    assert deep_tile_width(M, N, 132) == 128


@pytest.mark.parametrize(("M", "N", "sms"), list(itertools.product(
    (1, 100, 256, 1000, 4096, 4099), (8, 300, 2112, 4104, 7168), (78, 114, 132))))
def test_width_has_the_fewest_waves_then_the_fullest_last_wave(M, N, sms):
    bn = deep_tile_width(M, N, sms)
    waves, last = deep_waves(M, N, bn, sms)
    for other in DEEP_WIDTHS:
        w, lst = deep_waves(M, N, other, sms)
        assert (waves, -last) <= (w, -lst), (bn, other)


@pytest.mark.parametrize("bn", DEEP_WIDTHS)
@pytest.mark.parametrize("K", [128, 256, 384, 512, 8192])
@pytest.mark.parametrize("epc", [0, 1])
def test_stages_fit_the_shared_memory_and_k(bn, K, epc):
    stages = deep_stages(bn, K, epc)
    p = {"BM": 256, "BN": bn, "BK": 128, "STAGES": stages, "EPC": epc}
    assert deep_smem(p) <= SMEM_PER_BLOCK
    assert 1 <= stages <= max(1, K // 128)
    if stages < 4 and stages < K // 128:  # one more would not fit
        assert deep_smem({**p, "STAGES": stages + 1}) > SMEM_PER_BLOCK


def test_stages_are_3_at_width_128_and_4_at_88_and_at_128_with_c_staged_box_by_box():
    assert deep_stages(128, 8192) == 3
    assert deep_stages(88, 7168) == 4
    assert deep_stages(128, 8192, epc=1) == 4
    # the ring of three 32 x 64 boxes a warpgroup: 24 KB of C staging instead of 64 KB
    base = {"BM": 256, "BN": 128, "BK": 128, "STAGES": 4}
    assert deep_smem({**base, "EPC": 0}) - deep_smem({**base, "EPC": 1}) == 64 * 1024 - 24 * 1024


@pytest.mark.parametrize("bn", DEEP_WIDTHS)
@pytest.mark.parametrize("K", [512, 1536, 2048, 3072, 3968, 4096, 7168, 8192, 16384])
def test_c_is_staged_box_by_box_where_boxes_are_64_wide_and_a_tile_has_64_k_blocks(bn, K):
    assert deep_epc(bn, K) == int(bn % 64 == 0 and K // 128 >= EPC_MIN_KSTEPS)
    assert EPC_MIN_KSTEPS == 64  # measured on the H200: a loss at 32 and 56 K blocks


@pytest.mark.parametrize(("shape", "epc", "stages"), [
    ((8192, 8192, 8192), 1, 4), ((4096, 4096, 4096), 0, 3), ((4096, 7168, 16384), 1, 4),
    ((4096, 4096, 7168), 0, 3), ((4096, 2112, 7168), 0, 4), ((4096, 24576, 1536), 0, 3),
    ((4096, 32768, 512), 0, 3), ((4096, 7168, 2048), 0, 3), ((8192, 8192, 3072), 0, 3)])
def test_the_level_takes_the_fourth_stage_where_c_is_staged_box_by_box(shape, epc, stages):
    p = registry.get("fp8_deep").for_shape(*shape, 132).params
    assert (p["EPC"], p["STAGES"]) == (epc, stages), p


@pytest.mark.parametrize(("shape", "cl"), [
    ((8192, 8192, 8192), 2), ((4096, 4096, 4096), 1), ((4096, 2112, 7168), 2),
    ((4096, 24576, 1536), 1), ((4096, 32768, 512), 1), ((4096, 7168, 16384), 2),
    ((4096, 4096, 7168), 2), ((4096, 7168, 2048), 1), ((8192, 8192, 3968), 1),
    ((8192, 8192, 4096), 2), ((2048, 4096, 8192), 1), ((6144, 4096, 4096), 2)])
def test_the_level_takes_2_cta_clusters_where_tiles_and_ctas_have_many_k_blocks(shape, cl):
    """DeepGEMM's eight shapes and four around 4096^3: the multicast pays where a tile has
    many K blocks (H100, stretch 29: +1.4..+4.5% at 56 to 128) and a CTA many tiles of
    them (stretch 31: 0..-1.0% where a CTA's tiles hold 128 K blocks or fewer, +1.3..+6.1%
    above), and costs where a tile has few (-1.9..-4.5% at 4 to 16); its launch is whole
    clusters."""
    M, N, K = shape
    level = registry.get("fp8_deep").for_shape(M, N, K, 132)
    bn = level.params["BN"]
    assert level.params["CL"] == cl == deep_cluster(M, N, K, bn, 132)
    waves, _ = deep_waves(M, N, bn, 132)
    many = K // 128 >= CL_MIN_KSTEPS and waves * (K // 128) >= CL_MIN_CTA_KSTEPS
    assert many == (cl == 2)
    assert level.grid(M, N, 132)[0] % cl == 0


@pytest.mark.parametrize(("shape", "gw"), [
    ((4096, 32768, 512), 8), ((4096, 16384, 512), 8), ((8192, 32768, 512), 8),
    ((4096, 32768, 256), 8), ((4096, 7168, 512), 16), ((2048, 32768, 512), 16),
    ((4096, 32768, 768), 16), ((4096, 32768, 1024), 16), ((8192, 16384, 1024), 16),
    *((s, 16) for s in DEEPGEMM_SHAPES if s != (4096, 32768, 512)),
    ((512, 512, 512), 16), ((256, 256, 256), 16)])
def test_the_tile_walk_groups_8_columns_where_tiles_have_few_k_blocks_on_a_large_grid(
        shape, gw):
    """GW 8 against 16 paid 3-7% on H100s where a tile has 2-4 K blocks and the grid is at
    least 16 x 128 tiles, nothing at 56 tile columns or 8 tile rows, and cost at 8 K
    blocks and at 4096^3 (stretches 37-38): the rule keeps 16 everywhere else, DeepGEMM's
    other seven shapes and the bundled recording's cubes among them."""
    M, N, K = shape
    level = registry.get("fp8_deep").for_shape(M, N, K, 132)
    bn = level.params["BN"]
    assert level.params["GW"] == gw
    rows, columns = -(-M // 256), -(-N // bn)
    few = K // 128 <= GW_MAX_KSTEPS and rows >= GW_MIN_ROWS and columns >= GW_MIN_COLUMNS
    assert few == (gw == 8)


@pytest.mark.parametrize("K", [128, 512, 1536, 4096, 7168, 65536, 4096 * 128])
def test_the_level_is_built_with_the_k_blocks_of_the_shape(K):
    level = registry.get("fp8_deep").for_shape(4096, 4096, K, 132)
    assert level.params["KS"] == deep_ksteps(K) == K // 128
    assert level.shape_refusal(4096, 4096, K) is None


def test_k_past_the_largest_parameter_is_read_at_run_time():
    K = 4097 * 128
    assert deep_ksteps(K) == 0
    level = registry.get("fp8_deep").for_shape(256, 256, K, 132)
    assert level.params["KS"] == 0
    assert level.shape_refusal(256, 256, K) is None


@pytest.mark.parametrize(("ks", "K"), [(32, 7168), (56, 4096), (1, 256)])
def test_a_build_for_another_k_is_refused_before_launch_in_words(ks, K):
    level = registry.get("fp8_deep").with_params({"KS": ks})
    why = level.shape_refusal(4096, 4096, K)
    assert why is not None
    assert f"KS={ks}" in why and f"K={K} has {K // 128}" in why and "KS=0" in why


@pytest.mark.parametrize("K", [128, 1024, 7168, 16384])
def test_a_build_that_reads_k_at_run_time_runs_every_k(K):
    level = registry.get("fp8_deep").with_params({"KS": 0})
    assert level.shape_refusal(4096, 4096, K) is None


@pytest.mark.parametrize("tiles", [1, 2, 3, 131, 132, 133, 264, 288, 384, 512, 561, 2048])
@pytest.mark.parametrize("cl", [1, 2])
@pytest.mark.parametrize("sms", [132, 114])
def test_grid_keeps_the_waves_of_every_sm_on_fewer_in_whole_clusters(tiles, cl, sms):
    g = deep_grid(tiles, sms, {"CL": cl})
    cap = sms // cl * cl
    assert g % cl == 0 and g <= cap
    assert -(-tiles // g) == -(-tiles // cap), "as many waves as on every SM"
    if g > cl:  # one cluster fewer would take another wave
        assert -(-tiles // (g - cl)) > -(-tiles // cap)


def test_grid_at_4096_cubed_is_128_ctas_of_4_tiles():
    level = registry.get("fp8_deep").for_shape(4096, 4096, 4096, 132)
    assert level.params["BN"] == 128
    assert level.grid(4096, 4096, 132) == (128, 1, 1)


def test_level_picks_width_and_stages_per_shape_and_refuses_k_off_128():
    level = registry.get("fp8_deep")
    picked = level.for_shape(4096, 2112, 7168, 132).params
    assert (picked["BN"], picked["STAGES"]) == (88, 4)
    assert "multiple of 128" in (level.shape_refusal(4096, 4096, 1000) or "")
    assert level.shape_refusal(4096, 4096, 1024) is None


def wgmma_text(n: int) -> str:
    """The specialization of GsDpWgmma for N, as fp8_deep.cu holds it."""
    r = n // 2
    regs = ", ".join(f"%{i}" for i in range(r))
    cons = ", ".join(f'"+f"(d[{i}])' for i in range(r))
    return f'''template <>
struct GsDpWgmma<{n}> {{
    __device__ __forceinline__ static void run(float (&d)[{r}], unsigned long long da,
                                               unsigned long long db, int accumulate) {{
        asm volatile(
            "{{\\n.reg .pred p;\\n"
            "setp.ne.b32 p, %{r + 2}, 0;\\n"
            "wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e4m3 "
            "{{{regs}}}, %{r}, %{r + 1}, p, 1, 1;\\n}}\\n"
            : {cons}
            : "l"(da), "l"(db), "r"(accumulate));
    }}
}};
'''


@pytest.mark.parametrize("n", DEEP_WIDTHS)
def test_every_width_has_its_generated_wgmma(n):
    source = (cuda_dir() / "fp8_deep.cu").read_text(encoding="utf-8")
    assert wgmma_text(n) in source


def test_launch_plan_follows_the_parameters_the_kernel_was_built_with():
    from gemmscope.kernels.engine.deep_launch import deep_plan

    level = registry.get("fp8_deep")  # BN = 128, CL = 1
    # its own BN: 16 x 17 tiles, 3 waves, spread over 91 CTAs
    assert deep_plan(level, dict(level.params), 4096, 2112, 132) == (128, (91, 1, 1))
    # a run given BN = 88 (and clusters): boxes of 88 rows, 384 tiles in 3 waves on 128 CTAs
    bn, grid = deep_plan(level, {**level.params, "BN": 88, "CL": 2}, 4096, 2112, 132)
    assert (bn, grid) == (88, (128, 1, 1))


@pytest.mark.parametrize("M, by_tma", [(4096, True), (300, True), (7, False), (4099, False),
                                       (513, False), (2048, True)])
def test_row_scales_go_by_tma_where_their_row_pitch_is_a_multiple_of_16_bytes(M, by_tma):
    """A's row scales are K/128 rows of M floats: a tensor map needs a 16-byte row pitch, so
    the shape rule builds the TMA form (SCT 1) there and the lanes' copies (SCT 0)
    elsewhere; the GPU tests run both."""
    params = registry.get("fp8_deep").for_shape(M, 4096, 1024, 132).params
    assert params["SCT"] == int(by_tma)


def test_a_run_given_the_tma_form_where_m_cannot_be_mapped_is_refused_in_words():
    from gemmscope.kernels.device.hopper import TensorMapError
    from gemmscope.kernels.engine.deep_launch import scale_map

    class Ops:  # only the shape is read before the refusal
        shape = (4099, 4096, 1024)

    with pytest.raises(TensorMapError, match=r"M % 4 == 0.*SCT=0"):
        scale_map(Ops(), True)


def test_the_kernel_takes_the_form_as_a_template_parameter_and_the_map_last():
    """The kernel's template parameters are the registry's, in its order, then VEC (SCT and
    RING among them), and the row scales' map the kernel's last parameter (the launch's
    last argument)."""
    source = (cuda_dir() / "fp8_deep.cu").read_text(encoding="utf-8")
    head = re.search(r"template <([^>]*)>\s*__global__[^;{]*?\bfp8gemm_deep\(", source)
    assert head is not None
    names = [item.split()[-1] for item in head.group(1).split(",")]
    assert names == [*registry.get("fp8_deep").params, "VEC"]
    assert {"SCT", "RING"} <= set(names)
    assert "const __grid_constant__ GsTensorMap tmS) {" in source

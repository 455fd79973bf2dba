"""Registry rules: every level is one .cu plus an entry that matches it."""

from __future__ import annotations

import hashlib
import re

import level_checks
import places
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.registry import Kind, OutputFormat, Precision, Scaling

REPO = places.REPO
LEVELS = registry.ladder()


def test_ids_unique_and_ladder_nonempty():
    ids = [lv.id for lv in registry.LEVELS]
    assert len(ids) == len(set(ids))
    assert [lv.id for lv in LEVELS][:6] == ["naive", "coalesced", "smem_tiled", "smem_padded",
                                           "double_buffer", "register_2d"]
    assert "wmma" in ids


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_level_entry_is_complete(level: registry.Level):
    level_checks.entry_is_complete(level)


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_params_match_the_kernel_template(level: registry.Level):
    level_checks.params_match_the_kernel_template(level)


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_launch_geometry_is_consistent(level: registry.Level):
    p = level.params
    threads = level.threads[0] * level.threads[1]
    assert threads <= 1024
    if "WM" in p:  # warp-tiled: one warp per WM x WN tile (after a producer warpgroup)
        producer = 128 if level.persistent else 0
        assert threads == producer + (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32
        assert level.tile == (p["BM"], p["BN"])
    elif "TM" in p:
        assert threads == (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])
    assert level.dyn_smem_bytes() <= 232448, "H200 opt-in shared memory limit"
    if level.persistent:  # one block per SM walks the tiles; never more blocks than tiles
        if "CONSUMERS" in p:  # wgmma: consumer warpgroups of 64 rows each
            assert threads == (p["CONSUMERS"] + 1) * 128 and p["BM"] == 64 * p["CONSUMERS"]
        if level.grid_rule is not None:  # fewer CTAs, as many waves as on every SM
            tiles = -(-4097 // level.tile[0]) * -(-4099 // level.tile[1])
            g = level.grid(4097, 4099, 132)[0]
            assert g <= min(tiles, 132) and -(-tiles // g) == -(-tiles // 132)
            assert g % level.params.get("CL", 1) == 0, "whole clusters"
            return
        assert level.grid(4097, 4099, 132) == (132, 1, 1)
        # stream-K shares K steps: every SM takes part even in one tile
        assert level.grid(7, 13, 132) == ((132 if level.stream_k else 1), 1, 1)
        assert bool(p.get("SK", 0)) == level.stream_k, "the SK switch and stream_k agree"
        if level.stream_k:
            return
        assert level.grid(200, 300, 132) == (2 * -(-300 // p["BN"]), 1, 1)
        return
    if level.sm_grid:  # one block per SM walks the tiles, at most one block per tile
        tiles = -(-4097 // level.tile[0]) * -(-4099 // level.tile[1])
        assert level.grid(4097, 4099, 132) == (min(tiles, 132), 1, 1)
        assert level.grid(7, 13, 132) == (1, 1, 1)
        assert level.grid(4097, 4099) == (tiles, 1, 1)  # no SM count: a block per tile
        return
    for M, N in ((1, 1), (7, 13), (4097, 4099)):
        gx, gy, gz = level.grid(M, N)
        rows = gy if level.grid_x == "N" else gx
        cols = gx if level.grid_x == "N" else gy
        assert rows * level.tile[0] >= M > (rows - 1) * level.tile[0]
        assert cols * level.tile[1] >= N > (cols - 1) * level.tile[1]
        assert gz == 1


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_geometry_blocks_cover_c_with_the_block_tile(level: registry.Level):
    level_checks.geometry_blocks_cover_c(level)


def test_references_are_library_calls_without_geometry():
    for ref in registry.references():
        assert ref.geometry is None
        assert ref.launch_geometry() == registry.LIBRARY_CALL  # the catalog's block and tile


def test_vector_path_needs_aligned_k_and_n():
    lv = registry.get("vectorized")
    assert lv.use_vector_path(4096, 4096, 4096)
    assert not lv.use_vector_path(4096, 4096, 4097)
    assert not lv.use_vector_path(4096, 4098, 4096)
    assert lv.use_vector_path(7, 8, 12)  # M is free
    assert not registry.get("naive").use_vector_path(4096, 4096, 4096)


def test_source_hashes_cover_every_level_and_the_header():
    hashes = registry.source_hashes()
    headers = {p.stem for p in registry.cuda_dir().glob("*.cuh")}
    # hopper.cuh's topics (tests/test_cuda_headers.py) are headers of their own
    assert {"common", "hopper", "mma", "hopper_tma", "hopper_wgmma_ops"} <= headers
    levels = {lv.id for lv in LEVELS if lv.kind is Kind.LEVEL}
    assert not headers & levels  # one map: a header never shadows a level
    assert set(hashes) == levels | headers
    for entry in hashes.values():
        data = (REPO / entry["source"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]


def test_references_and_precisions():
    refs = {lv.id for lv in registry.references()}
    assert {"cublas_fp32", "cublas_tf32", "cublas_fp16"} <= refs
    for lv in registry.references():
        assert lv.kind is Kind.REFERENCE and lv.source is None
    for lv in LEVELS:
        assert registry.REFERENCE_FOR[lv.precision] in registry.BY_ID


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.id)
def test_every_level_names_a_reference_of_its_precision_class(level: registry.Level):
    ref = registry.get(level.reference or "")
    assert ref.kind is Kind.REFERENCE and ref.precision is level.precision
    # the precision's reference (what old recordings fall back on), or one that differs
    # from it only in taking B the way the level does (like for like)
    default = registry.get(registry.REFERENCE_FOR[level.precision])
    assert ref.id == default.id or (
        ref.b_layout == level.b_layout != default.b_layout
        and (ref.library, ref.output_format) == (default.library, default.output_format))


def test_references_name_their_library_and_no_reference():
    for lv in registry.LEVELS:
        assert (lv.library is None) == (lv.kind is Kind.LEVEL), lv.id
        assert (lv.reference is None) == (lv.kind is Kind.REFERENCE), lv.id
        # FP8 inputs come with scales (blocks for the level, per tensor for cuBLASLt)
        assert (lv.scaling is not Scaling.NONE) == (lv.precision is Precision.FP8), lv.id
    assert registry.get("fp8_block_scaled").scaling is Scaling.BLOCKS
    assert registry.get("cublaslt_fp8").scaling is Scaling.PER_TENSOR


# the FP16 levels that write C as their reference does (FP16), not as FP32
FP16_C_LEVELS = {"mma_tma"}


def test_output_format_is_the_entrys():
    # a 16-bit C where the library writes one, for every BF16/FP8 level and reference, and
    # for the FP16 levels that store it so
    for lv in registry.LEVELS:
        fp16_c = lv.library is not None or lv.id in FP16_C_LEVELS
        want = (OutputFormat.BF16 if lv.precision in (Precision.BF16, Precision.FP8) else
                OutputFormat.FP16 if fp16_c and lv.precision is Precision.FP16
                else OutputFormat.FP32)
        assert lv.output_format is want, lv.id


def test_shape_refusals_come_from_the_entry():
    lt, fp8 = registry.get("cublaslt_fp8"), registry.get("fp8_block_scaled")
    assert lt.shape_refusal(1000, 1000, 1000) == (
        "cublaslt_fp8: torch._scaled_mm needs M, N and K to be multiples of 16; "
        "got 1000x1000x1000")
    assert lt.shape_refusal(1024, 16, 32) is None
    assert fp8.shape_refusal(256, 256, 1000) == (
        "fp8_block_scaled needs K to be a multiple of 128 (one FP32 scale per 128 of K); "
        "K=1000")
    assert fp8.shape_refusal(17, 4099, 512) is None
    # the grid's y limit: blockIdx.y walks M (rows of 128), or N for naive (grid_x "M")
    r2d = registry.get("register_2d")
    assert "grid y of 65536 blocks" in (r2d.shape_refusal(128 * 65536, 128, 8) or "")
    assert r2d.shape_refusal(128 * 65535, 128, 8) is None
    assert registry.get("naive").shape_refusal(128 * 65536, 32, 8) is None
    assert registry.get("naive").shape_refusal(32, 32 * 65536, 8)


# per-level knowledge asked of a level anywhere but its registry entry: a test of its id,
# or of whether its template has a parameter of some name
LEAKS = re.compile(r"""\.id\s*[!=]=\s*["']|\bid\s+(not\s+)?in\s*[(\[{]\s*["']"""
                   r"""|level_id\s*[!=]=\s*["']|["'][A-Z][A-Z_0-9]*["']\s+(not\s+)?in\s+[\w.]*params"""
                   r"""|params\.get\(\s*["']""")


def test_level_knowledge_stays_in_the_registry():
    leaks = [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
             for folder in ("app", "kernels") for path in sorted((REPO / folder).rglob("*.py"))
             if path != REPO / "kernels" / "ladder" / "registry.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if LEAKS.search(line)]
    assert not leaks, "\n".join(leaks)


def test_unknown_level_message_lists_known():
    with pytest.raises(KeyError, match="known levels: naive"):
        registry.get("nope")


def test_catalog_is_json_ready():
    import json

    cat = registry.catalog()
    assert [c["id"] for c in cat] == [lv.id for lv in registry.LEVELS]
    json.dumps(cat)


def test_with_params_keeps_the_launch_geometry_consistent():
    lv = registry.get("cp_async").with_params({"BN": 128, "WN": 32})
    assert lv.tile == (128, 128) and lv.threads == (256, 1)  # (128/64) x (128/32) warps
    assert lv.params["BN"] == 128
    assert lv.params["STAGES"] == registry.get("cp_async").params["STAGES"]
    assert registry.get("register_2d").with_params({"BM": 64}).threads == (128, 1)
    assert registry.get("smem_tiled").with_params({"TILE": 16}).threads == (16, 16)
    with pytest.raises(ValueError, match="no parameter"):
        registry.get("naive").with_params({"BK": 8})


@pytest.mark.parametrize("level", registry.LEVELS, ids=lambda lv: lv.id)
def test_every_entry_s_texts_are_strings(level: registry.Level):
    """Entries made from others (dataclasses.replace) keep every text a string."""
    for name in ("id", "title", "adds", "follows", "notes", "k_reason"):
        assert isinstance(getattr(level, name), str), name
    assert level.title and level.adds


DEEPGEMM_SHAPES = [(4096, 2112, 7168), (4096, 24576, 1536), (4096, 32768, 512),
                   (4096, 7168, 16384), (4096, 4096, 7168), (4096, 7168, 2048)]


@pytest.mark.parametrize("level_id", ["fp8_block_scaled", "fp8_stream_k"])
def test_fp8_levels_pick_192_wide_tiles_only_where_they_need_fewer_waves(level_id):
    lv = registry.get(level_id)
    picked = {s: lv.for_shape(*s, 132).params["BN"] for s in DEEPGEMM_SHAPES}
    # N = 2112: 9 columns of 256 (the last 64 wide) or 11 of 192, 3 waves either way
    assert picked == {s: 192 if s[1] == 2112 else 256 for s in DEEPGEMM_SHAPES}
    assert lv.for_shape(8192, 8192, 8192, 132) is lv  # full waves: the default tile
    # the rule, not the one shape: N = 4160 = 16 x 256 + 64 (5 waves of 256, 6 of 192)
    assert lv.for_shape(4096, 4160, 4096, 132).params["BN"] == 192
    # and the SM count: with 300 SMs the 288 tiles of 256 are one wave, 352 of 192 two
    assert lv.for_shape(4096, 2112, 7168, 300) is lv
    fitted = lv.for_shape(4096, 2112, 7168, 132)
    assert fitted.tile == (128, 192) and fitted.id == lv.id
    assert fitted.dyn_smem_bytes() < lv.dyn_smem_bytes()


# the BF16 shapes of issue 42's table, with the width the count picks on 132 SMs
BF16_SHAPES = {(3000, 5000, 4096): 232, (8192, 28672, 8192): 256, (2048, 2048, 8192): 256,
               (4096, 4096, 4096): 256, (8192, 8192, 8192): 256, (6144, 6144, 6144): 256}


@pytest.mark.parametrize("level_id", ["wgmma_tma", "wgmma_stream_k"])
def test_bf16_levels_pick_232_wide_tiles_only_where_their_waves_cost_clearly_less(level_id):
    lv = registry.get(level_id)
    assert {s: lv.for_shape(*s, 132).params["BN"] for s in BF16_SHAPES} == BF16_SHAPES
    # 3000 x 5000: 24 x 22 tiles of 232 are exactly 4 waves (928), 24 x 20 of 256 3.64 (1024)
    fitted = lv.for_shape(3000, 5000, 4096, 132)
    assert fitted.tile == (128, 232) and fitted.id == lv.id and fitted is not lv
    assert fitted.dyn_smem_bytes() < lv.dyn_smem_bytes()
    # the SM count decides, not the shape: 480 tiles of 256 on 160 SMs are 3 full waves
    assert lv.for_shape(3000, 5000, 4096, 160) is lv
    # and a shape of other numbers with the same fault: 24 x 20 tiles of 256 over 132
    assert lv.for_shape(3072, 5100, 1024, 132).params["BN"] == 232


def test_levels_without_a_shape_rule_run_their_own_parameters_everywhere():
    for lv in registry.ladder():
        if lv.shape_params is None:
            assert lv.for_shape(4096, 2112, 7168, 132) is lv


def test_wmma_takes_blocks_of_four_warps_where_128x256_would_leave_half_the_sms_idle():
    lv = registry.get("wmma")
    assert (lv.tile, lv.threads) == ((128, 256), (256, 1))  # eight 64x64 warp tiles
    small = lv.for_shape(1024, 1024, 1024, 132)  # 8 x 4 = 32 blocks of 128x256 for 132 SMs
    assert (small.tile, small.threads) == ((128, 128), (128, 1)) and small.id == lv.id
    assert small.dyn_smem_bytes() < lv.dyn_smem_bytes()
    # 2048^3: 128 blocks of 128x256, more than half of 132 SMs: the default block
    assert lv.for_shape(2048, 2048, 2048, 132) is lv
    assert lv.for_shape(4096, 4096, 4096, 132) is lv
    # the SM count decides, not the shape: on 300 SMs 128 blocks leave more than half idle
    assert lv.for_shape(2048, 2048, 2048, 300).tile == (128, 128)
    # and a ragged grid counts its edge blocks: 66 of them (11 x 6) are half of 132
    assert lv.for_shape(1300, 1400, 512, 132) is lv
    assert lv.for_shape(1300, 1280, 512, 132).tile == (128, 128)  # 11 x 5 = 55

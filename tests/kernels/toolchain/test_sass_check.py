"""The models' shared instructions per warp per K step equal those in the K loop of the
compiled kernels (NVRTC for sm_90 + nvdisasm, no GPU). Skipped where the tools or the .cu
sources are absent."""

from __future__ import annotations

import os
from pathlib import Path

import level_checks
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import MODELS, model_for
from gemmscope.kernels.toolchain.sass_check import (
    SassComparison,
    compiler_versions,
    main_loop,
    normalise,
    sass_counts,
    tools_missing,
)

SRC = Path(os.environ.get("GEMMSCOPE_CUDA_SRC", str(registry.cuda_dir())))

SASS_SAMPLE = """
        /*0400*/                   LDS R8, [R5] ;
        /*0410*/                   LDS.128 R12, [R18] ;
        /*0420*/              @!PT LDS RZ, [RZ] ;
        /*0430*/               @P0 STS.128 [R10], R100 ;
        /*0440*/                   LDSM.16.MT88.4 R4, [R2] ;
        /*0450*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R6.64] ;
"""


def test_sass_counting():
    assert sass_counts(SASS_SAMPLE) == {"LDS": 1, "LDS.128": 1, "STS.128": 1, "LDSM": 1,
                                        "LDGSTS": 1}
    assert normalise("LDS.U.128") == "LDS.128" and normalise("STS.64") == "STS.64"
    # stmatrix (STSM) is a shared store of its own, not an STS
    assert sass_counts("        /*0460*/                   STSM.16.M88.4 [R3], R4 ;\n") == {
        "STSM": 1}


def test_main_loop_is_the_loop_with_the_most_shared_loads():
    sass = """
        /*0010*/                   LDS.128 R1, [R2] ;
.L_x_1:
        /*0020*/                   LDS R3, [R4] ;
        /*0030*/                   STS [R5], R6 ;
        /*0040*/               @P0 BRA `(.L_x_1) ;
        /*0050*/                   LDS.128 R1, [R2] ;
        /*0060*/                   EXIT ;
"""
    assert sass_counts(main_loop(sass)) == {"LDS": 1, "STS": 1}
    assert main_loop("no loop here") == "no loop here"



def test_of_two_loops_with_as_many_shared_loads_the_shorter_is_the_main_loop():
    """A guarded and a guard-free copy of one K loop (cp_async_interior): the hot one is
    the shorter; a second backward branch to one label still ends that loop's body."""
    sass = """
.L_x_1:
        /*0010*/                   LDS.128 R1, [R2] ;
        /*0020*/                   ISETP.GE.AND P1, PT, R7, R8, PT ;
        /*0030*/                   SEL R9, R10, R11, P1 ;
        /*0040*/               @P0 BRA `(.L_x_1) ;
.L_x_2:
        /*0050*/                   LDS.128 R1, [R2] ;
        /*0060*/               @P2 BRA `(.L_x_2) ;
        /*0070*/                   STS [R5], R6 ;
        /*0080*/               @P0 BRA `(.L_x_2) ;
        /*0090*/                   EXIT ;
"""
    body = main_loop(sass)
    assert body.startswith(".L_x_2") and "ISETP" not in body
    assert sass_counts(body) == {"LDS.128": 1, "STS": 1}

def test_of_two_loops_with_as_many_shared_loads_the_one_with_more_tensor_ops_is_main():
    """fp8_block_scaled's copy of the K loop for whole tiles (two halves: 8 QGMMA, one
    LDS.64 for both B scales) beside the copy for tiles half past N (4 QGMMA, one LDS):
    both read three values, the hot one does twice the math though it is longer."""
    sass = """
.L_x_1:
        /*0010*/                   LDS R1, [R2] ;
        /*0020*/                   LDS.64 R3, [R2+0x10] ;
        /*0030*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ ;
        /*0040*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24 ;
        /*0050*/                   FFMA R5, R6, R7, R5 ;
        /*0060*/               @P0 BRA `(.L_x_1) ;
.L_x_2:
        /*0070*/                   LDS R1, [R2] ;
        /*0080*/                   LDS R3, [R2+0x10] ;
        /*0090*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ ;
        /*00a0*/               @P0 BRA `(.L_x_2) ;
        /*00b0*/                   EXIT ;
"""
    body = main_loop(sass)
    assert body.startswith(".L_x_1")
    assert sass_counts(body) == {"LDS": 1, "LDS.64": 1}


def test_a_mismatch_shows_the_loop_lines_of_the_kinds_that_differ():
    cmp = SassComparison("x", sass_counts(SASS_SAMPLE), {"LDS.128": 1}, SASS_SAMPLE)
    assert set(cmp.mismatches) == {"LDS", "STS.128", "LDSM", "LDGSTS"}
    assert cmp.lines_of(["LDS"]) == ["/*0400*/                   LDS R8, [R5] ;",
                                     "/*0420*/              @!PT LDS RZ, [RZ] ;"]
    assert cmp.lines_of(["STS.128"]) == ["/*0430*/               @P0 STS.128 [R10], R100 ;"]


@pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing()))
def test_the_compiler_versions_name_nvrtc_and_nvdisasm_releases():
    import re

    assert re.fullmatch(r"NVRTC \d+\.\d+, nvdisasm V\d+(\.\d+)+", compiler_versions())


@pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing()))
@pytest.mark.parametrize("level_id", sorted(MODELS))
def test_model_matches_the_compiled_k_loop(level_id):
    level = registry.get(level_id)
    if level.source is None or not (SRC / level.source).exists():
        pytest.skip(f"no source for {level_id} under {SRC}")
    level_checks.compiled_k_loop_matches_the_model(level_id, SRC)


@pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing()))
@pytest.mark.parametrize("level_id", ["wgmma_tma", "fp8_block_scaled"])
def test_hopper_kernels_use_shared_memory_only_as_the_model_says(level_id):
    """Compiled for sm_90a: no ldmatrix anywhere and no shared load or cp.async for the
    tiles (TMA fills the stages, wgmma reads them); the shared-memory instructions are
    the epilogue's 32-bit stores (STS, written as st.shared), as many as the model lists
    per consumer thread and tile, and (FP8 with SCL) the scale buffers' loads and copies
    of the model's K loop, plus the first K block's copies before the loop; the wgmma
    shape, the TMA stores per consumer and (FP8 without SCL) the scale loads per K step
    are the model's."""
    from gemmscope.kernels.models.hopper import WARPS_PER_GROUP
    from gemmscope.kernels.models.level_model import Op
    from gemmscope.kernels.toolchain.sass_check import compile_sass, mnemonic_counts, model_counts

    level = registry.get(level_id)
    if not (SRC / str(level.source)).exists():
        pytest.skip(f"no source for {level_id} under {SRC}")
    m = model_for(level_id)
    sass = compile_sass(level_id, SRC)
    ops = mnemonic_counts(sass)
    expected = {"STS": len(m.epilogue_accesses(WARPS_PER_GROUP))}
    for copy in m.k_loop_copies():  # fp8_block_scaled: a second K loop for edge tiles
        for kind, n in model_counts(copy, m.sass_warp).items():
            expected[kind] = expected.get(kind, 0) + n
    if getattr(m, "scl", 0):
        expected["LDGSTS"] += 1
    assert sass_counts(sass) == expected
    assert ops.get("ST.E", 0) == 0
    shape = f"64x{m.wgmma_n}x{m.wgmma_k}"
    assert any("GMMA" in k and shape in k for k in ops), sorted(ops)
    assert ops.get("UTMASTG.2D", 0) == len(m.tma_stores(0, 1024, 1024))
    scale_loads = sum(a.op is Op.LOAD
                      for a in m.global_accesses(WARPS_PER_GROUP, 0, 1024, 1024, 1024))
    # a level that loads the next K block's scales ahead also has the first block's
    # loads before its K loop
    assert ops.get("LDG.E.CONSTANT", 0) == scale_loads * getattr(m, "scale_load_sites", 1)


@pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing()))
def test_mma_tma_stages_c_as_the_model_says():
    """Compiled for sm_90a: the only shared instructions are the K loop's ldmatrix loads
    (test_model_matches_the_compiled_k_loop) and the epilogue's stmatrix.x4, as many as the
    model lists per math warp and tile; its TMA stores of C are the model's boxes, and the
    path without a C map stores what the model lists for an even N (FP16 pairs, STG.E) and
    an odd one (single halves, STG.E.U16)."""
    from gemmscope.kernels.models.mma_sync import PRODUCER_WARPS
    from gemmscope.kernels.toolchain.sass_check import compile_sass, mnemonic_counts, sass_kind

    if not (SRC / "mma_tma.cu").exists():
        pytest.skip(f"no source for mma_tma under {SRC}")
    m = model_for("mma_tma")
    w = PRODUCER_WARPS  # the first math warp; every math warp runs the same code
    sass = compile_sass("mma_tma", SRC)
    ops = mnemonic_counts(sass)
    staged = m.epilogue_accesses(w)
    assert {sass_kind(a) for a in staged} == {"STSM"}
    shared = sass_counts(sass)
    assert shared.pop("LDSM") > 0 and shared == {"STSM": len(staged)}
    assert ops.get("UTMASTG.2D", 0) == len(m.tma_stores(w, 1024, 1024))
    pairs, halves = m.store_accesses(w, 1000, 998), m.store_accesses(w, 1000, 999)
    assert {a.width_bytes for a in pairs} == {4} and {a.width_bytes for a in halves} == {2}
    assert {k: v for k, v in ops.items() if k.startswith("STG")} == {
        "STG.E": len(pairs), "STG.E.U16": len(halves)}

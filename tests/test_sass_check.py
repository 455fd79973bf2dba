"""The models' shared loads per warp per K step equal the compiled kernels' (NVRTC for
sm_90 + nvdisasm, no GPU). Skipped where the tools or the .cu sources are absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gemmscope.kernels import registry
from gemmscope.kernels.models import MODELS, model_for
from gemmscope.kernels.models.sass_check import (
    compare_level,
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


@pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing()))
@pytest.mark.parametrize("level_id", sorted(MODELS))
def test_model_loads_match_the_compiled_kernel(level_id):
    level = registry.get(level_id)
    if level.source is None or not (SRC / level.source).exists():
        pytest.skip(f"no source for {level_id} under {SRC}")
    cmp = compare_level(level_id, model_for(level_id), SRC)
    assert not cmp.load_mismatches, (cmp.sass, cmp.model)

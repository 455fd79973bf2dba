"""benchmarks/attempts/fp8_deep_quad.py: the 2 x 2 cluster attempt on fp8_deep (issue 42) is
made from the level's source as it is, changes its clusters' schedule, loads and stage
release and nothing of the K loop's math or the epilogue, and compiles for sm_90a with
four-CTA clusters, which the level itself refuses; a level source without the text it
replaces is refused naming that text, and nothing is written."""

from __future__ import annotations

import dataclasses
import importlib.util

import benchmark_script
import pytest

from gemmscope.kernels.ladder import registry

needs_nvrtc = pytest.mark.skipif(importlib.util.find_spec("cuda") is None,
                                 reason="the nvrtc extra is missing")
QUAD_SHAPE = (4096, 4096, 7168)  # 56 K blocks: a shape the attempt was timed at


@pytest.fixture(scope="module")
def quad():
    return benchmark_script.load("attempts/fp8_deep_quad")


def _between(text: str, start: str, end: str) -> str:
    a = text.index(start)
    return text[a:text.index(end, a)]


def test_the_copy_shares_both_operands_and_keeps_the_math_and_epilogue(quad, tmp_path):
    level = quad.LEVEL_SOURCE.read_text()
    copy = quad.write(tmp_path).read_text()
    # A to the tile row's two CTAs (masks 0b0011, 0b1100), Bt to the column's (0b0101, 0b1010)
    assert "0x3u << (rank & 2)" in copy and "0x5u << (rank & 1)" in copy
    assert "gs_dp_arrive_remote(&empty[s], rank ^ (t128 & 3))" in copy
    assert "(CL == 4 ? 3 : CL)" in copy  # three CTAs' warps free a stage
    assert "__cluster_dims__(CL, 1, 1)" in copy
    # the promotion and the epilogue as the level has them
    for start, end in (("auto kblock = [&](int s, int gs_k)", "auto pass = [&](int s)"),
                       ("// ---------------------------------------------------------- epilogue",
                        "GS_TRACE(LANE_END, -1, 0);\n    }")):
        assert _between(copy, start, end) == _between(level, start, end)
    assert 0 < len(copy.splitlines()) - len(level.splitlines()) < 60


def test_a_level_source_whose_cluster_barrier_moved_is_refused_naming_that_text(quad, tmp_path):
    level = quad.LEVEL_SOURCE.read_text()
    moved = level.replace("(WREL == 2 ? 8 : 2) * CL);", "(WREL == 2 ? 8 : 2) * CL );")
    with pytest.raises(SystemExit, match=r"found 0 times: 'gs_mbar_init\(&empty"):
        quad.write(tmp_path, source=moved)
    assert not (tmp_path / "quad").exists()


@needs_nvrtc
def test_the_copy_builds_four_cta_clusters_that_the_level_refuses(quad, tmp_path):
    from gemmscope.kernels.toolchain import cubin, nvrtc

    path = quad.write(tmp_path)
    lv = registry.get("fp8_deep").for_shape(*QUAD_SHAPE, 132).with_params({"CL": 4})
    with pytest.raises(nvrtc.CompileError, match="clusters of one or two CTAs"):
        nvrtc.compile_offline(lv)
    built = nvrtc.compile_offline(dataclasses.replace(lv, source_dir=str(path.parent)))
    resources = cubin.kernels(built.cubin).values()
    assert resources and all(k.local_bytes == 0 for k in resources)

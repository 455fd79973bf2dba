"""benchmarks/attempts/fp8_deep_noscale.py: the diagnostic copies of fp8_deep that say what
its block scales cost (issue 42) are made from the level's source as it is, each with only
its own change, and compile for sm_90a to the kernel they claim (no promotion FFMA, no
scale copies), or the script stops and names the text it missed."""

from __future__ import annotations

import collections
import dataclasses
import importlib.util

import places
import pytest

from gemmscope.kernels.ladder import registry

needs_nvrtc = pytest.mark.skipif(importlib.util.find_spec("cuda") is None,
                                 reason="the nvrtc extra is missing")


@pytest.fixture(scope="module")
def noscale():
    path = places.BENCHMARKS / "attempts" / "fp8_deep_noscale.py"
    spec = importlib.util.spec_from_file_location("fp8_deep_noscale", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_copies_change_the_consumers_k_block_and_the_producers_scales_only(noscale,
                                                                                 tmp_path):
    paths = noscale.write(tmp_path)
    level = noscale.without_pp(noscale.LEVEL_SOURCE.read_text())
    np_, ns = paths["np"].read_text(), paths["ns"].read_text()
    assert "acc[w][4 * g + 0] += tmp[4 * g + 0] * r0;" in level  # the promotion
    assert "+= tmp[" not in np_ and "gs_dp_lds(sc +" not in np_
    assert "(gs_k > 0 || kk > 0) ? 1 : 0" in np_
    assert "kblock_pp" not in np_ and "kblock_pp" not in ns  # PP's K block is out too
    # the producer and the epilogue as the level has them
    assert np_[np_.index("auto pass = [&](int s) {  // a stage past K: passed on"):] == \
        level[level.index("auto pass = [&](int s) {  // a stage past K: passed on"):]
    assert "&tmS, &full[s], bm * BM, ks)" in np_ and "&tmS, &full[s], bm * BM, ks)" not in ns
    assert "A_BYTES + B_BYTES + (SCT ? 1024 : 0)" not in ns
    assert len(level.splitlines()) - len(np_.splitlines()) > 10


def test_a_level_source_without_the_replaced_text_is_refused_by_name(noscale, tmp_path):
    with pytest.raises(SystemExit, match="expected once, found 0 times"):
        noscale.write(tmp_path, source="// not fp8_deep\n")


@needs_nvrtc
def test_the_no_promotion_copy_compiles_without_ffma_or_spill(noscale, tmp_path):
    from gemmscope.kernels.toolchain import cubin, nvrtc, sass

    paths = noscale.write(tmp_path)
    counts = {}
    for label in ("level", "np", "ns"):
        lv = registry.get("fp8_deep").for_shape(4096, 4096, 4096, 132)
        if label != "level":
            lv = dataclasses.replace(lv, source_dir=str(paths[label].parent))
        built = nvrtc.compile_offline(lv)
        assert all(k.local_bytes == 0 for k in cubin.kernels(built.cubin).values()), label
        mix: collections.Counter[str] = collections.Counter()
        for text in sass.disassemble(built.cubin).values():
            mix.update(ln.op_class for ln in sass.parse(text) if ln.counted)
        counts[label] = mix
    assert counts["level"]["FFMA"] > 0 and counts["np"]["FFMA"] == counts["ns"]["FFMA"] == 0
    assert counts["np"]["HGMMA"] == counts["level"]["HGMMA"] > 0
    assert counts["ns"]["LDGSTS"] == 0 < counts["np"]["LDGSTS"]

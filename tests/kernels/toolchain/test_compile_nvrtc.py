"""Every level compiles for sm_90a with NVRTC from PyPI, on a machine without a GPU."""

from __future__ import annotations

import level_checks
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import nvrtc as build

pytest.importorskip("cuda.bindings.nvrtc", reason="the nvrtc extra is not installed")


@pytest.mark.parametrize("level", registry.ladder(), ids=lambda lv: lv.id)
def test_level_compiles_for_sm90a(level: registry.Level):
    level_checks.compiles_for_sm90a(level)


def test_assembled_source_inlines_the_common_header():
    src = build.assemble(registry.get("cp_async"))
    assert '#include "common.cuh"' not in src
    assert "gs_cp_async16" in src


def test_compile_error_carries_the_log(tmp_path):
    import dataclasses

    bad = tmp_path / "bad.cu"
    bad.write_text('#include "common.cuh"\n'
                   "template <int X, bool VEC> __global__ void k() { nope; }\n")
    lv = dataclasses.replace(registry.get("naive"), id="bad", source="bad.cu",
                             source_dir=str(tmp_path), kernel="k", params={"X": 1})
    with pytest.raises(build.CompileError, match="nope"):
        build.compile_offline(lv)


@pytest.mark.parametrize("level_id", ["fp8_block_scaled", "fp8_stream_k"])
def test_fp8_levels_compile_with_the_192_wide_tiles_they_pick_per_shape(level_id):
    from gemmscope.kernels.toolchain import cubin

    level = registry.get(level_id)
    fitted = level.for_shape(4096, 2112, 7168, 132)
    assert fitted.params["BN"] == 192
    out = build.compile_offline(fitted, arch="sm_90a", params=fitted.params)
    (res,) = cubin.kernels(out.cubin).values()
    assert res.local_bytes == 0  # 96 accumulators and 96 temporaries in registers
    assert "warning" not in out.log.lower(), out.log

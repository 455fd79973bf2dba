"""fp8_deep's PP K block (tiles of at most 88 columns keep a wgmma group queued while the
warpgroup promotes the other), as NVRTC compiles it; no GPU needed."""

from __future__ import annotations

import importlib.util

import pytest

from gemmscope.kernels.ladder import registry

needs_nvrtc = pytest.mark.skipif(importlib.util.find_spec("cuda") is None,
                                 reason="the nvrtc extra is missing")


def _build(shape):
    from gemmscope.kernels.toolchain import cubin, nvrtc, sass

    level = registry.get("fp8_deep").for_shape(*shape, 132)
    built = nvrtc.compile_offline(level)
    (name, text), = sass.disassemble(built.cubin).items()
    lines = sass.parse(text)
    loop = sass.in_span(lines, sass.main_loop(text))
    return level, built.log, cubin.kernels(built.cubin)[name], lines, loop


@needs_nvrtc
def test_88_column_tiles_wait_for_all_but_one_wgmma_group_and_ptxas_keeps_them_async():
    level, log, _, lines, loop = _build((4096, 2112, 7168))
    assert level.params["BN"] == 88
    waits = {ln.text.split("gsb0,")[1].strip(" ;") for ln in lines
             if ln.mnemonic.startswith("WARPGROUP.DEPBAR")}
    assert "0x1" in waits  # one group left in flight while a sub-tile is promoted
    assert "C7514" not in log  # "wgmma.mma_async instructions are serialized"
    assert loop and not any(ln.mnemonic.startswith(("LDL", "STL")) for ln in loop)


@needs_nvrtc
def test_128_column_tiles_keep_the_plain_k_block():
    level, log, res, lines, _ = _build((4096, 4096, 4096))
    assert level.params["BN"] == 128
    waits = {ln.text.split("gsb0,")[1].strip(" ;") for ln in lines
             if ln.mnemonic.startswith("WARPGROUP.DEPBAR")}
    assert waits == {"0x0"} and "C7514" not in log and res.local_bytes == 0

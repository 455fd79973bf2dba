"""mma_tma's epilogue as compiled (NVRTC for sm_90a and nvdisasm here, no GPU): each math
warp stages its FP16 C with 16 stmatrix.x4 and stores it with two TMA stores where a C map
exists, its lanes' FP16 pairs where none does; neither the plain nor the trace build
spills (the staging added no register pressure to the K loop)."""

from __future__ import annotations

import collections

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import build_event, cubin, nvrtc, sass

MISSING = build_event.nvrtc_missing() or sass.nvdisasm_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


@pytest.mark.parametrize("trace", [False, True], ids=["plain", "trace"])
def test_mma_tma_stages_c_by_stmatrix_and_stores_it_by_tma_without_spilling(trace):
    level = registry.get("mma_tma")
    built = nvrtc.compile_offline(level, trace=trace)
    ((name, res),) = cubin.kernels(built.cubin).items()  # one instantiation (no edge one)
    assert res.local_bytes == 0, f"{res.local_bytes} bytes spilled"
    ops = collections.Counter(ln.mnemonic for ln in sass.parse(sass.disassemble(built.cubin)[name])
                              if ln.counted)
    assert not any(op.startswith(("LDL", "STL")) for op in ops)
    assert ops["STSM.16.M88.4"] == 16  # 64 x 64 halves: 16 blocks of 16 x 16
    assert ops["UTMASTG.2D"] == 2  # two boxes of 32 x 64
    assert not any(op.split(".")[0] == "STS" for op in ops)  # no other shared store
    if not trace:  # (the trace build's records are global stores too)
        # without a C map: 64 FP16 pairs a lane where N is even, 128 halves where N is odd
        assert {op: n for op, n in ops.items() if op.startswith("STG")} == {
            "STG.E": 64, "STG.E.U16": 128}

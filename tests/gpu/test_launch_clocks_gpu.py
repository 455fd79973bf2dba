"""`record --launch-clocks` on the GPU (kernels/profile/launch_clocks.py): Nsight Compute
reads the SM clock and GPU time inside launches of a level and of its reference."""

from __future__ import annotations

import io
import json

import pytest

from gemmscope.kernels.profile import launch_clocks as lc
from gemmscope.kernels.profile.ncu import find_ncu
from gemmscope.kernels.protocol.decoding import decode

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def ncu_exe() -> str:
    exe = find_ncu("ncu")
    if exe is None:
        pytest.skip("ncu is not on PATH")
    return exe


@pytest.mark.timeout(300)
def test_the_clocks_inside_a_tensor_core_level_and_its_reference_are_read(ncu_exe):
    err = io.StringIO()
    step = lc.LaunchClocksStep(["wgmma_tma"], ncu_exe, (2048, 2048, 2048), 5, 240.0, err)
    events: list[dict] = []
    step(lambda: 1.0, events.append)
    clocks = [decode(json.dumps(e)) for e in events if e["type"] == "launch_clocks"]
    assert len(clocks) == 1, err.getvalue()
    ev = clocks[0]
    assert ev.complete, ev.reason
    assert ev.reference == "cublas_bf16" and ev.launches == 5
    # an H200's SM clock is at most 1980 MHz; a 2048^3 BF16 GEMM takes tens of microseconds
    assert 300 < ev.level_mhz <= 2000 and 300 < ev.ref_mhz <= 2000
    assert 5 < ev.level_us < 5000 and 5 < ev.ref_us < 5000
    assert ev.level_kernel and "wgmma" in ev.level_kernel.lower() and ev.ref_kernel
    assert 0.5 < ev.cycles_ratio < 1.5
    print(f"\nwgmma_tma {ev.level_mhz:.0f} MHz {ev.level_us:.1f} us; {ev.ref_kernel} "
          f"{ev.ref_mhz:.0f} MHz {ev.ref_us:.1f} us; cycles ratio {ev.cycles_ratio:.3f}")

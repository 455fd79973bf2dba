"""On the H200 with Nsight Compute: the shared-memory access model against the hardware.

Measured on the H200 (2026-11-29, 1024^3, benchmarks/ncu_residue.py): launched as the
runner launches them, the levels that run several blocks per SM show l1tex bank conflicts
their access patterns do not have (co-resident blocks contend for the banks; the count
varies from run to run); launched with one block per SM (unused dynamic shared memory),
l1tex's bank conflicts and wavefronts equal the model's exactly, and so do the wavefronts
ncu attributes to the kernel's own shared-memory instructions in either launch. This test
checks the issue's criterion (l1tex conflicts within 5%, or both zero) on the one-block
launch that gemmscope.kernels.profile.ncu makes, for every SIMT level with shared memory.
Skipped without a GPU or ncu.
"""

from __future__ import annotations

import shutil

import pytest

from gemmscope.kernels.models import SIMT_LEVELS, totals
from gemmscope.kernels.models.level_model import NCU_METRICS
from gemmscope.kernels.profile import ncu

pytestmark = pytest.mark.gpu

SIZE = 1024
SHARED_LEVELS = [lid for lid in SIMT_LEVELS if lid not in ("naive", "coalesced")]


@pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not on PATH")
@pytest.mark.parametrize("level_id", [
    pytest.param(lid, marks=[pytest.mark.smoke] if lid == "smem_tiled" else [])
    for lid in SHARED_LEVELS])
def test_l1tex_bank_conflicts_match_the_model(level_id):
    prof = ncu.profile("ncu", level_id, SIZE, SIZE, SIZE, extra=False)
    assert prof.problem() is None, prof.problem()
    got = prof.metrics()
    model = totals(level_id, SIZE, SIZE, SIZE)
    for op, counts in (("ld", model.ld), ("st", model.st)):
        measured = got[NCU_METRICS[f"{op}_conflicts"]]
        if counts.conflicts == 0:
            assert measured == 0, f"{op}: ncu counted {measured} conflicts, the model none"
        else:
            assert measured == pytest.approx(counts.conflicts, rel=0.05), op
        assert got[NCU_METRICS[f"{op}_wavefronts"]] == counts.wavefronts, op

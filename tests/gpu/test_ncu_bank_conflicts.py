"""On the H200 with Nsight Compute: the shared-memory access model against the hardware.

Measured on the H200 (2026-11-29, 1024^3): the wavefronts that ncu attributes to the
kernel's own shared-memory instructions (smsp__sass_l1tex_data_pipe_lsu_wavefronts_...)
equal the model's count exactly for every SIMT level, while the l1tex bank-conflict
counters also count a residue of wavefronts no instruction issued (l1tex wavefronts
minus SASS wavefronts equals the reported "conflicts" for levels whose accesses are
conflict-free). So this test checks the model against the instruction-attributed
wavefronts exactly, and against the l1tex load conflicts where the pattern has them
(register_2d's 2-way B reads). Skipped without a GPU or ncu.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys

import pytest

from gemmscope.kernels import registry
from gemmscope.kernels.models import totals

pytestmark = pytest.mark.gpu

SASS_LD = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SASS_ST = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


def ncu_metrics(level_id: str, size: int, metrics: list[str]) -> dict[str, float]:
    kernel = registry.get(level_id).kernel
    out = subprocess.run(
        ["ncu", "--clock-control", "none", "--metrics", ",".join(metrics), "--csv",
         "--page", "raw", "-k", f"regex:{kernel}", "-c", "1", sys.executable, "-m",
         "gemmscope.kernels.launch", level_id, str(size), str(size), str(size)],
        capture_output=True, text=True, timeout=600)
    lines = [x for x in out.stdout.splitlines() if x.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    assert len(rows) >= 3, out.stdout[-2000:] + out.stderr[-2000:]
    header, values = rows[0], rows[2]  # rows[1] holds the units
    return {k: float(v.replace(",", "")) for k, v in zip(header, values, strict=True)
            if k in metrics}


@pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not on PATH")
@pytest.mark.parametrize("level_id", ["smem_tiled", "smem_padded", "register_2d", "vectorized"])
def test_instruction_wavefronts_match_the_model(level_id):
    size = 512
    got = ncu_metrics(level_id, size, [SASS_LD, SASS_ST, LD_CONFLICTS])
    model = totals(level_id, size, size, size)
    assert got[SASS_LD] == model.ld.wavefronts
    assert got[SASS_ST] == model.st.wavefronts
    if model.ld.conflicts:  # a conflict the pattern has is counted as such
        assert got[LD_CONFLICTS] == pytest.approx(model.ld.conflicts, rel=0.05)

"""On the H200 with Nsight Compute: the bank-conflict model against ncu's counters.

Skipped without a GPU (the gpu marker) or without ncu on PATH. It runs the comparison
script on a small shape and checks the cases the model is sure of: smem_tiled has no
bank conflicts, and register_2d's conflicts (its B reads, 2-way per phase) are the
hand-computed count.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gemmscope.kernels.models import totals

pytestmark = pytest.mark.gpu

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "bank_conflicts_ncu.py"
LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


@pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not on PATH")
def test_model_against_ncu(tmp_path):
    out = tmp_path / "ncu.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--size", "512", "--levels",
                           "smem_tiled,register_2d", "--json", str(out)],
                          capture_output=True, text=True, timeout=900)
    print(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    levels = json.loads(out.read_text())["levels"]
    for level_id, entry in levels.items():
        assert "error" not in entry, (level_id, entry.get("error"), entry.get("stderr_tail"))
    measured = {lid: e["measured"][LD_CONFLICTS] for lid, e in levels.items()}
    assert measured["smem_tiled"] == 0
    model = totals("register_2d", 512, 512, 512).ld.conflicts
    assert measured["register_2d"] == pytest.approx(model, rel=0.05)

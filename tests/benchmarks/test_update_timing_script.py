"""benchmarks/update_timing.sh in its small mode (DRY_ONLY=1, no GPU): on a scratch copy of
the tree, an edit to one level's .cu makes `record --update --dry-run` of the bundled
recording plan that level (and the levels sharing its file) and estimate the GPU time;
the tree itself is left as it was."""

from __future__ import annotations

import os
import subprocess

import places

SCRIPT = places.BENCHMARKS / "update_timing.sh"


def test_update_timing_dry_run_plans_the_edited_level_on_a_scratch_copy(tmp_path):
    source = places.REPO / "kernels" / "cuda" / "mma_sync.cu"
    before = source.read_bytes()
    env = dict(os.environ, DRY_ONLY="1", SCRATCH=str(tmp_path / "scratch"))
    proc = subprocess.run(["bash", str(SCRIPT), "mma_sync"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=places.REPO)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    planned = [line for line in lines if line.startswith("mma_sync: code key")]
    assert len(planned) == 1 and "(kernels/cuda/mma_sync.cu changed)" in planned[0]
    assert any(line.startswith("estimated GPU time: ~") for line in lines)
    assert source.read_bytes() == before

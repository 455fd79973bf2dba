"""On the H200 with Nsight Compute (issue 32 item 1): `record --kernel ... --ncu-source`
gives both example user kernels, the CUDA one (NVRTC) and the Triton one, a
source_counters event with per-SASS-line counters, whose instructions are those of the
build event the same recording holds for the kernel (so the Code view's heat map is
placed on it), and whose lines name the kernel's own source file. Skipped without a GPU,
ncu, or Triton."""

from __future__ import annotations

import importlib.util
import io
import shutil
from pathlib import Path

import pytest

from gemmscope.app.core.source_heat import agreement_problem
from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import recording

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not on PATH"),
              pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                 reason="Triton is not installed")]

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "kernels"
KERNELS = {"regblock_float4": ("regblock_float4.toml", "regblock_float4.cu"),
           "triton_matmul": ("triton_matmul.toml", "triton_matmul.py")}


def test_both_examples_get_per_line_counters_on_their_builds(tmp_path):
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    argv = ["record", "-o", str(out), "-s", "1024", "-r", "5", "--telemetry-hz", "0",
            "--ncu-source"]
    for spec, _source in KERNELS.values():
        argv += ["--kernel", str(EXAMPLES / spec)]
    code = cli.main(argv, stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()[-3000:]
    session = recording.read_session(out)
    assert session.problem is None
    events = {e.level: e for e in session.events if e.type == "source_counters"}
    assert set(events) == set(KERNELS), err.getvalue()[-3000:]
    for level_id, (_spec, source) in KERNELS.items():
        ev = events[level_id]
        assert ev.status == "ok", f"{level_id}: {ev.status}: {ev.reason}"
        assert ev.lines and ev.lines_total >= len(ev.lines)
        assert ev.totals["inst_executed"] > 0 and ev.totals["stall_samples"] > 0
        assert ev.params  # the variant profiled
        files = {row.source[0] for row in ev.lines if row.source}
        assert source in files, (level_id, files)  # the cuda,sass page named its lines
        builds = [e for e in session.events if e.type == "build" and e.level == level_id
                  and e.variant == ev.variant]
        assert builds, f"{level_id}: no {ev.variant} build in the recording"
        assert agreement_problem(ev.lines, builds[-1]) is None

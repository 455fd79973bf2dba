"""On the H200 with Nsight Compute: a recording made in two calls, the timed runs first and
then `record --append --profile-only --ncu-source` (benchmarks/record_bundled.sh's burst
and source parts), keeps what the first call wrote and adds one source_counters event per
level, profiled from this machine's runner, and no timed result. Skipped without a GPU or
ncu."""

from __future__ import annotations

import io
import shutil

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol import source_counters as sc

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not on PATH")]

LEVELS = ["register_2d", "wgmma_tma"]


def test_profile_only_adds_real_per_line_counters_and_no_result(tmp_path):
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "-l", ",".join(LEVELS), "-s", "512", "-r", "3",
                     "--no-compare", "--telemetry-hz", "0"], stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    before = recording.read_session(out).events
    assert sorted(e.level for e in before if e.type == "result") == sorted(LEVELS)

    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "--append", "--profile-only",
                     "-l", ",".join(LEVELS), "--telemetry-hz", "0",
                     "--ncu-source", "--ncu-source-size", "512"],
                    stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    after = recording.read_session(out)
    assert after.problem is None
    assert after.events[:len(before)] == before
    added = after.events[len(before):]
    assert not [e for e in added if e.type == "result"]
    counters = [e for e in added if e.type == "source_counters"]
    assert [e.level for e in counters] == LEVELS
    for ev in counters:
        assert ev.status == sc.Status.OK.value, ev.reason
        assert ev.lines and ev.totals["stall_samples"] > 0

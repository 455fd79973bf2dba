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

    # the profile at the size record_bundled.sh and test_ncu_source_gpu.py profile at
    # (1024^3): at 512^3 wgmma_tma's launch is 16 blocks for a few microseconds, and the
    # warp sampler's count over it is a handful, at times none (once failed, once passed)
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "--append", "--profile-only",
                     "-l", ",".join(LEVELS), "--telemetry-hz", "0",
                     "--ncu-source", "--ncu-source-size", "1024"],
                    stdout=io.StringIO(), stderr=err)
    said = err.getvalue()[-3000:]
    assert code == 0, said
    after = recording.read_session(out)
    assert after.problem is None
    assert after.events[:len(before)] == before
    added = after.events[len(before):]
    assert not [e for e in added if e.type == "result"]
    counters = [e for e in added if e.type == "source_counters"]
    assert [e.level for e in counters] == LEVELS, said
    for ev in counters:
        assert ev.status == sc.Status.OK.value, (ev.level, ev.reason, ev.seconds, said)
        # the executed instructions are counted, not sampled: real counters, every time;
        # the stall samples are a sampler's, checked present (test_ncu_source_gpu.py
        # checks their count at the same size)
        assert ev.lines and ev.totals["inst_executed"] > 0, (ev.level, ev.totals)
        assert ev.totals["stall_samples"] is not None, (ev.level, ev.totals)

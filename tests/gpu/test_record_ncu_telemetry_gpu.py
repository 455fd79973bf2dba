"""On the H200 with Nsight Compute: `gemmscope record --ncu` keeps sampling NVML while ncu
profiles (the runner and its sampler have exited by then), so the recording's telemetry
lasts as long as its events; the step's samples carry no GPM metrics (ncu needs the
performance monitor). Skipped without a GPU or ncu."""

from __future__ import annotations

import io
import shutil

import numpy as np
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import recording

pytestmark = pytest.mark.gpu


@pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not on PATH")
def test_the_ncu_step_is_sampled_to_the_end(tmp_path):
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "-l", "naive,register_2d", "-s", "512",
                     "-r", "3", "--no-compare", "--ncu", "--ncu-size", "256",
                     "--telemetry-hz", "50"], stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    session = recording.read_session(out)
    assert [c.level for c in session.counters] == ["naive", "register_2d"]
    # the step begins with its first profile's info event; the runner's own samples (with
    # GPM) may still arrive after the last result, until the runner has exited
    said = [e for e in session.events if e.type == "info" and "Nsight" in e.message]
    assert [e.level for e in said] == ["naive", "register_2d"]
    samples = session.telemetry[0]  # the recording's NVML samples, in columns
    step = samples.t[:len(samples)] >= said[0].t
    assert step.sum() >= 5, "the ncu step was not sampled"
    assert samples.t[:len(samples)][step].max() >= max(c.t for c in session.counters)
    assert np.isfinite(samples.column("sm_clock_mhz")[step]).all()
    assert np.isnan(samples.column("sm_occupancy_pct")[step]).all()  # no GPM during ncu

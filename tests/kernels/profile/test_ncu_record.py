"""`gemmscope record --ncu` with a stand-in runner and a stand-in ncu (tests/support/fake_ncu.py):
the counters events it writes, and what it does when ncu is missing or fails."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path
from typing import ClassVar

import places
import pytest
import synthetic_session as syn
from fake_ncu import VERSION as NCU_VERSION
from fake_ncu import logged_commands, write_fake_ncu

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import SIMT_LEVELS
from gemmscope.kernels.models.level_model import NCU_EXTRA_METRICS, NCU_METRICS
from gemmscope.kernels.models.ncu_compare import parse_number
from gemmscope.kernels.profile.ncu import (
    NcuProfile,
    counters_event,
    launch_mode,
    ncu_command,
    profile,
)
from gemmscope.kernels.protocol import recording

FAKE_RUNNER = str(places.FAKE_RUNNER)
# made-up cells, as ncu prints them (thousands separators, one n/a)
CELLS = {name: f"{1000 * (i + 1):,}" for i, name in
         enumerate([*NCU_METRICS.values(), *NCU_EXTRA_METRICS.values()])}
CELLS[NCU_EXTRA_METRICS["cp_conflicts"]] = "n/a"


STAND_IN_RUNNER = shlex.join([sys.executable, FAKE_RUNNER, "--mode", "ok"])


@pytest.fixture
def stand_in_runner():
    return STAND_IN_RUNNER


def record(tmp_path: Path, *extra: str) -> tuple[int, recording.Session, str]:
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "-l", "naive,register_2d,wmma", "-s", "16",
                     "-r", "2", "--no-compare", "--telemetry-hz", "0",
                     "--runner", STAND_IN_RUNNER, *extra],
                    stdout=io.StringIO(), stderr=err)
    return code, recording.read_session(out), err.getvalue()


def test_record_appends_one_counters_event_per_simt_level(tmp_path, stand_in_runner):
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", values=CELLS, log=log)
    code, session, err = record(tmp_path, "--ncu", str(fake), "--ncu-size", "64x32x16")
    assert code == 0, err
    counters = session.counters
    # wmma is FP16: the ncu comparison covers the SIMT levels only
    assert [c.level for c in counters] == ["naive", "register_2d"]
    assert "wmma" not in SIMT_LEVELS
    for ev in counters:
        level = registry.get(ev.level)
        assert (ev.M, ev.N, ev.K, ev.tool) == (64, 32, 16, "ncu")
        assert ev.metrics == {name: parse_number(cell) for name, cell in CELLS.items()}
        assert ev.metrics[NCU_EXTRA_METRICS["cp_conflicts"]] is None  # n/a stays n/a
        assert level.kernel in ev.kernel
        assert ev.params == level.params
        assert ev.command[-6:] == ["gemmscope.kernels.engine.launch", ev.level, "64", "32",
                                      "16", "--one-block-per-sm"]
        assert ev.launch == "one_block_per_sm"
        assert ev.tool_version == NCU_VERSION  # the profiler that read it (issue 41 item 6)
    # after every timed run, on the session's clock
    last_result = max(e.t for e in session.results)
    assert all(c.t >= last_result for c in counters)
    assert session.events.index(counters[0]) > session.events.index(session.results[-1])
    # ncu said its version once, then ran once per level, on the level's kernel
    ran = logged_commands(log)
    assert ran.pop(0) == ["--version"]
    assert [a[a.index("-k") + 1] for a in ran] == ["regex:sgemm_naive",
                                                  "regex:sgemm_register_2d"]
    assert "counters of 2 level(s) recorded" in err


def test_record_without_ncu_says_so_and_writes_no_counters(tmp_path, stand_in_runner):
    code, session, err = record(tmp_path, "--ncu", str(tmp_path / "no-such-ncu"))
    assert code == 1
    assert "not found" in err and "no counters" in err
    assert session.counters == []
    assert [r.level for r in session.results] == ["naive", "register_2d", "wmma"]


def test_record_when_ncu_fails_says_why_and_writes_no_counters(tmp_path, stand_in_runner):
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", mode="fail", log=log)
    code, session, err = record(tmp_path, "--ncu", str(fake))
    assert code == 1
    assert session.counters == []
    assert "ERR_NVGPUCTRPERM" in err  # ncu's own reason, passed on
    assert "ncu on naive:" in err and "no counters recorded for it" in err
    assert "none for naive, register_2d" in err
    # its version once, then per level: with the extra metrics, then without
    assert len(logged_commands(log)) == 5


def test_an_ncu_that_refuses_the_extra_metrics_gives_the_core_four(tmp_path, stand_in_runner):
    fake = write_fake_ncu(tmp_path / "ncu", mode="reject_extra", values=CELLS)
    code, session, err = record(tmp_path, "--ncu", str(fake))
    assert code == 0, err
    for ev in session.counters:
        assert set(ev.metrics) == set(NCU_METRICS.values())  # asked for, not null
        assert (ev.M, ev.N, ev.K) == (1024, 1024, 1024)  # the default size


def test_record_without_ncu_option_runs_no_profiler(tmp_path, stand_in_runner):
    code, session, err = record(tmp_path)
    assert code == 0 and session.counters == [] and "counters" not in err


def test_a_row_of_another_kernel_or_all_na_is_no_measurement(tmp_path):
    # the format sample's row is register_2d's kernel: not naive's
    wrong = profile(str(write_fake_ncu(tmp_path / "ncu")), "naive", 64, 64, 64, extra=False)
    assert "not sgemm_naive" in wrong.problem()
    with pytest.raises(ValueError, match="no counters for naive"):
        counters_event(wrong, 1.0)
    na = write_fake_ncu(tmp_path / "ncu_na", values={})
    empty = profile(str(na), "naive", 64, 64, 64, extra=False)
    assert "all n/a" in empty.problem()
    assert NcuProfile("naive", 1, 1, 1, error="ncu ran past 5 s").problem() == "ncu ran past 5 s"


def test_the_ncu_command_launches_through_the_package():
    cmd = ncu_command("ncu", "vectorized", 7, 8, 9, extra=True)
    assert cmd[cmd.index("-k") + 1] == "regex:" + registry.get("vectorized").kernel
    assert cmd[-7:] == ["-m", "gemmscope.kernels.engine.launch", "vectorized", "7", "8", "9",
                        "--one-block-per-sm"]
    as_launched = ncu_command("ncu", "vectorized", 7, 8, 9, one_block_per_sm=False)
    assert as_launched[-1] == "9" and launch_mode(as_launched) == "as_launched"
    asked = cmd[cmd.index("--metrics") + 1].split(",")
    assert asked == [*NCU_METRICS.values(), *NCU_EXTRA_METRICS.values()]
    with pytest.raises(ValueError, match="reference"):
        ncu_command("ncu", "cublas_fp32", 8, 8, 8)


class FakeNvml:
    """NVML as the sampler sees it, without a GPU: one reading per call."""

    made: ClassVar[list[FakeNvml]] = []

    def __init__(self, index: int = 0, gpm: bool = True):
        self.gpm = gpm
        self.available = True
        self.reads = 0
        FakeNvml.made.append(self)

    def sample(self) -> dict:
        self.reads += 1
        return {"sm_clock_mhz": 1980, "power_w": 300.0 + self.reads, "reasons": []}


def test_record_keeps_sampling_nvml_while_ncu_profiles(tmp_path, stand_in_runner,
                                                        monkeypatch):
    monkeypatch.setattr(FakeNvml, "made", [])
    monkeypatch.setattr("gemmscope.kernels.profile.ncu.Nvml", FakeNvml)
    fake = write_fake_ncu(tmp_path / "ncu", values=CELLS)
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "-l", "naive,register_2d", "-s", "16",
                     "-r", "2", "--no-compare", "--telemetry-hz", "200",
                     "--runner", STAND_IN_RUNNER, "--ncu", str(fake)],
                    stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    session = recording.read_session(out)
    events = syn.file_events(out)
    step = [e for e in events if e["type"] == "telemetry" and e.get("power_w") is not None
            and e["power_w"] > 300.0]
    assert step, "no NVML samples from the ncu step"
    # the telemetry lasts as long as the recording: its last sample is the last event
    assert step[-1] is events[-1]
    assert step[-1]["t"] >= max(c.t for c in session.counters)
    assert all(s["t"] >= session.results[-1].t for s in step)
    # ncu takes the performance monitor: the step samples without GPM
    assert [n.gpm for n in FakeNvml.made] == [False]
    # each profile is said on the timeline, before its counters
    said = [e for e in session.events if e.type == "info" and "Nsight" in e.message]
    assert [e.level for e in said] == ["naive", "register_2d"]
    for note, counters in zip(said, session.counters, strict=True):
        assert note.t <= counters.t
        assert session.events.index(note) < session.events.index(counters)


def test_record_with_telemetry_off_samples_nothing_during_ncu(tmp_path, stand_in_runner,
                                                             monkeypatch):
    monkeypatch.setattr(FakeNvml, "made", [])
    monkeypatch.setattr("gemmscope.kernels.profile.ncu.Nvml", FakeNvml)
    fake = write_fake_ncu(tmp_path / "ncu", values=CELLS)
    code, session, err = record(tmp_path, "--ncu", str(fake))  # --telemetry-hz 0
    assert code == 0, err
    assert FakeNvml.made == []
    assert not [e for e in session.events if e.type == "telemetry"] and not session.samples

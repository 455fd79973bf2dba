"""`gemmscope record --ncu-source` with a stand-in runner and a stand-in ncu
(tests/support/fake_ncu.py, which prints the H200's source page of register_2d): one
source_counters event per level with a kernel, and what the events say when ncu is
missing, refused, too slow, or prints something else."""

from __future__ import annotations

import io
from pathlib import Path

from fake_ncu import CUDA_PAGE, SOURCE_PAGE, VERSION, logged_commands, write_fake_ncu
from test_ncu_record import STAND_IN_RUNNER

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.profile import ncu_source_step as step
from gemmscope.kernels.profile.ncu_source import parse_cuda_sass_page, parse_sass_page
from gemmscope.kernels.protocol import recording


def record(tmp_path: Path, *extra: str) -> tuple[int, list, str]:
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "-l", "naive,register_2d,wmma,cublas_fp32",
                     "-s", "16", "-r", "2", "--no-compare", "--telemetry-hz", "0",
                     "--runner", STAND_IN_RUNNER, *extra], stdout=io.StringIO(), stderr=err)
    session = recording.read_session(out)
    assert session.problem is None
    return code, [e for e in session.events if e.type == "source_counters"], err.getvalue()


def test_one_event_per_level_with_a_kernel_tensor_core_ones_included(tmp_path):
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", log=log)
    code, events, err = record(tmp_path, "--ncu-source", str(fake), "--ncu-source-size",
                               "64x32x16")
    assert code == 0, err
    assert [e.level for e in events] == ["naive", "register_2d", "wmma"]  # no cuBLAS
    page = parse_sass_page(SOURCE_PAGE.read_text())
    where = parse_cuda_sass_page(CUDA_PAGE.read_text())
    for ev in events:
        assert (ev.M, ev.N, ev.K, ev.tool) == (64, 32, 16, "ncu")
        assert ev.status == "ok" and ev.reason is None
        assert ev.tool_version == VERSION and ev.variant == "vector"
        assert isinstance(ev.seconds, float) and ev.seconds >= 0
        assert ev.kernel == page.kernel and ev.lines_total == len(page.lines)
        lds = next(r for r in ev.lines if r.smem_excess_wavefronts)
        line = next(ln for ln in page.lines if ln.offset == lds.offset)
        assert lds.smem_excess_wavefronts == line.values["smem_excess_wavefronts"]
        assert lds.source[1] == where[line.offset][1]
        assert "--section" in ev.command and "SourceCounters" in ev.command
        assert ev.command[-4:] == [ev.level, "64", "32", "16"]  # as launched
    ran = logged_commands(log)
    profiles = [a for a in ran if "-o" in a]
    assert [a[a.index("-k") + 1] for a in profiles] == [
        "regex:sgemm_naive", "regex:sgemm_register_2d", "regex:hgemm_wmma"]
    pages = [a[-1] for a in ran if "-i" in a]
    assert pages == ["sass", "cuda,sass"] * 3
    assert "source counters of 3 level(s) recorded" in err


def test_without_ncu_each_level_gets_an_event_saying_so(tmp_path):
    code, events, err = record(tmp_path, "--ncu-source", str(tmp_path / "no-such-ncu"))
    assert code == 1
    assert "not found" in err
    assert [e.status for e in events] == ["missing"] * 3
    assert all(e.lines is None and "not found" in e.reason for e in events)
    assert all(e.tool_version is None for e in events)


def test_when_ncu_is_refused_the_events_carry_its_error(tmp_path):
    fake = write_fake_ncu(tmp_path / "ncu", mode="fail")
    code, events, err = record(tmp_path, "--ncu-source", str(fake))
    assert code == 1
    assert [e.status for e in events] == ["refused"] * 3
    assert all(e.lines is None and "ERR_NVGPUCTRPERM" in e.reason for e in events)
    assert "none for naive, register_2d, wmma" in err


def test_a_page_in_an_unknown_format_is_unreadable_not_guessed(tmp_path):
    fake = write_fake_ncu(tmp_path / "ncu", mode="garbled")
    code, events, _ = record(tmp_path, "--ncu-source", str(fake))
    assert code == 1
    assert {e.status for e in events} == {"unreadable"}
    assert all(e.lines is None and "not a SASS source page" in e.reason
               for e in events)


def test_no_profiled_kernel_is_a_failure_with_the_reason(tmp_path):
    fake = write_fake_ncu(tmp_path / "ncu", mode="no_report")
    out = step.profile(str(fake), "naive", 8, 8, 8)
    assert out.status is step.Status.FAILED and "no report" in out.reason
    assert "No kernels were profiled" in out.reason


def test_a_run_past_its_time_is_a_timeout(tmp_path):
    fake = write_fake_ncu(tmp_path / "ncu", mode="timeout")
    out = step.profile(str(fake), "naive", 8, 8, 8, timeout_s=0.5)
    assert out.status is step.Status.TIMEOUT and "0.5 s" in out.reason
    assert out.page is None


def test_printing_the_page_gets_what_is_left_of_the_time(tmp_path, monkeypatch):
    monkeypatch.setattr(step, "EXPORT_MIN_S", 0.5)
    fake = write_fake_ncu(tmp_path / "ncu", mode="slow_page")
    out = step.profile(str(fake), "naive", 8, 8, 8, timeout_s=0.5)
    assert out.status is step.Status.TIMEOUT and "printing the source page" in out.reason


def test_levels_past_the_step_budget_say_the_time_ran_out(tmp_path):
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", log=log)
    code, events, _ = record(tmp_path, "--ncu-source", str(fake), "--ncu-source-budget", "0")
    assert code == 1
    assert all(e.status == "failed" and "ran out" in e.reason for e in events)
    assert not any("-o" in a for a in logged_commands(log))  # nothing was profiled


def test_ncu_source_cannot_go_with_remote(tmp_path):
    err = io.StringIO()
    code = cli.main(["record", "-o", str(tmp_path / "r.jsonl"), "--remote", "gpu-box",
                     "--ncu-source"], stdout=io.StringIO(), stderr=err)
    assert code == 2 and "--ncu-source profiles on this machine" in err.getvalue()


def test_profile_only_appends_the_steps_to_a_recording_without_timing_again(tmp_path):
    """A long recording in two calls (a device call is at most ten minutes): the timed
    runs first, then --append --profile-only adds the per-line counters of the same
    levels and no result."""
    fake = write_fake_ncu(tmp_path / "ncu")
    code, events, err = record(tmp_path)
    assert code == 0 and events == [], err
    out = tmp_path / "rec.jsonl"
    before = recording.read_session(out).events
    results = [e for e in before if e.type == "result"]
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "--append", "--profile-only",
                     "-l", "naive,register_2d,wmma,cublas_fp32", "-s", "16",
                     "--telemetry-hz", "0", "--runner", STAND_IN_RUNNER,
                     "--ncu-source", str(fake)], stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    after = recording.read_session(out)
    assert after.problem is None
    assert after.events[:len(before)] == before  # what it held is kept
    added = after.events[len(before):]
    assert [e for e in added if e.type == "result"] == [] and results
    assert [e.level for e in added if e.type == "source_counters"] == [
        "naive", "register_2d", "wmma"]


def test_profile_only_needs_a_recording_to_add_to_and_a_step(tmp_path):
    for extra in (["--ncu-source", "ncu"], ["--append"]):
        err = io.StringIO()
        code = cli.main(["record", "-o", str(tmp_path / "x.jsonl"), "--profile-only",
                         "--runner", STAND_IN_RUNNER, *extra],
                        stdout=io.StringIO(), stderr=err)
        assert code != 0 and "--profile-only" in err.getvalue()

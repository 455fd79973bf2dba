"""``record --update FILE`` and the profiles a recording holds (ncu counters, per-line
counters, launch clocks, traces): made again where their level's code changed, where a
newer build of it ran other code, or, for a trace, where only its trace build changed;
never where they are of the newest build. No GPU: the runner is refused."""

from __future__ import annotations

import io

from update_recordings import (
    ARCH,
    COMPILER,
    SMS,
    code_key_of,
    counters_event,
    forbid_runner,
    run_update,
    session_events,
    write_recording,
)

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import nvrtc


def _source_counters(level: str, t: float) -> dict:
    return {"type": "source_counters", "t": t, "level": level, "M": 512, "N": 512,
            "K": 512, "tool": "ncu", "status": "timeout", "reason": "(test)", "seconds": 7.5}


def _trace_of_a_level_without_a_trace_build(t: float) -> dict:
    """A trace event of naive (a file's own word: where naive has no trace build to make it
    again with, an update leaves it out rather than fail its step's check)."""
    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.models import trace_schedule

    model = trace_schedule.schedule(registry.get("wgmma_tma"), 256, 256, 256, SMS)
    event = trace_schedule.synthetic_trace(model, SMS, seed=1)
    shape = Shape(256, 256, 256)
    return {**event, "t": t, "level": "naive", "M": shape.M, "N": shape.N, "K": shape.K}


def _launch_clocks(level: str, t: float) -> dict:
    return {"type": "launch_clocks", "t": t, "level": level, "M": 1024, "N": 1024,
            "K": 1024, "tool": "ncu", "reference": registry.get(level).reference,
            "launches": 20, "level_mhz": 1980.0, "level_us": 900.0, "ref_mhz": 1975.0,
            "ref_us": 60.0}


def _build(level: str, t: float, code_key: str) -> dict:
    return {"type": "build", "t": t, "level": level, "variant": "vector",
            "code_key": code_key, "compiler": COMPILER}


def test_a_stale_levels_profiles_in_the_file_are_planned_again_at_their_shapes(
        tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    events = session_events()
    t = events[-1]["t"]
    events += [counters_event("naive", t + 1), _source_counters("naive", t + 2),
               counters_event("coalesced", t + 3), _trace_of_a_level_without_a_trace_build(t + 4),
               _launch_clocks("naive", t + 5)]
    path = tmp_path / "rec.jsonl"
    write_recording(path, events)
    # naive as it was before its trace build (its plain text), then edited: a level the
    # file holds a trace of that has no trace build now
    naive = cuda / "naive.cu"
    naive.write_text(nvrtc.plain_text(naive.read_text(encoding="utf-8")) + "// an edit\n",
                     encoding="utf-8")
    assert not nvrtc.traceable(registry.BY_ID["naive"])
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0
    again = [line for line in out.splitlines() if "profiled again" in line]
    # naive's counters at 256^3, per-line counters at 512^3 and the clocks inside its
    # launches at 1024^3; coalesced is unchanged
    assert again == ["naive: profiled again (as the file holds them of its old code): ncu "
                     "counters at 256×256×256, per-line counters at 512×512×512, launch "
                     "clocks at 1024×1024×1024, ~38 s"]
    assert "3 profiles" in out.splitlines()[-1]


def test_profiles_made_before_a_newer_build_of_other_code_are_planned_alone(
        tmp_path, cuda, monkeypatch):
    # an earlier update re-ran naive (its newest result and build are of this checkout)
    # but left the profiles of its old code: they are made again, with no run
    forbid_runner(monkeypatch)
    events = session_events()
    t = events[-1]["t"]
    events += [_build("naive", t + 1, "0" * 16), counters_event("naive", t + 2),
               _build("naive", t + 3, code_key_of("naive"))]
    path = tmp_path / "rec.jsonl"
    before = write_recording(path, events)
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0 and path.read_bytes() == before
    lines = out.splitlines()
    assert lines[0] == ("naive: profiled again (the file's are of a build before its "
                        "newest: other code or parameters): ncu counters at 256×256×256, "
                        "~15 s")
    assert lines[-1].startswith("estimated GPU time: ~") and " for 1 profile (" in lines[-1]


def test_profiles_of_the_newest_build_are_not_planned(tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    events = session_events()
    t = events[-1]["t"]
    events += [_build("naive", t + 1, code_key_of("naive")), counters_event("naive", t + 2)]
    path = tmp_path / "rec.jsonl"
    write_recording(path, events)
    code, out, _ = run_update(path)
    assert code == 0 and "nothing changed" in out and "profiled again" not in out


def _trace_of(level: str, t: float, code_key: str) -> dict:
    """A measured trace event of ``level`` at 256^3 made by the trace build ``code_key``
    (its timeline from the model: only its keys matter to an update)."""
    event = _trace_of_a_level_without_a_trace_build(t)
    return {**event, "level": level, "synthetic": False, "code_key": code_key,
            "plain_code_key": code_key_of(level), "params": registry.BY_ID[level].params}


def _trace_key(level: str) -> str:
    return nvrtc.expected_key(registry.BY_ID[level], ARCH, COMPILER, trace=True)


def test_a_trace_of_this_checkouts_trace_build_is_not_planned(tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    events = session_events()
    events.append(_trace_of("naive", events[-1]["t"] + 1, _trace_key("naive")))
    path = tmp_path / "rec.jsonl"
    write_recording(path, events)
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out and "profiled again" not in out


def test_a_trace_whose_trace_lines_changed_is_made_again_without_its_results(
        tmp_path, cuda, monkeypatch):
    # a change to a level's trace lines alone: its plain build, results and code keys
    # stand, its trace was measured with another trace build
    forbid_runner(monkeypatch)
    events = session_events()
    events.append(_trace_of("naive", events[-1]["t"] + 1, _trace_key("naive")))
    path = tmp_path / "rec.jsonl"
    write_recording(path, events)
    naive = cuda / "naive.cu"
    before = naive.read_text(encoding="utf-8")
    naive.write_text(before + "GS_TRACE_DO(static_assert(true, \"a trace line\");)\n",
                     encoding="utf-8")
    assert nvrtc.plain_text(naive.read_text(encoding="utf-8")) == nvrtc.plain_text(before)
    assert code_key_of("naive") == events[-1]["plain_code_key"]
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == ("naive: profiled again (its trace build is other code now: the "
                        "trace lines changed): trace at 256×256×256, ~10 s")
    assert not any(line.startswith("    ") for line in lines)  # no run: the results stand
    assert lines[-1].startswith("estimated GPU time: ~") and " for 1 profile (" in lines[-1]


def test_the_steps_of_an_update_are_the_profiles_planned_by_kind_and_shape():
    from gemmscope.kernels.cli import update_plan as up
    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.profile.launch_clocks import LaunchClocksStep
    from gemmscope.kernels.profile.ncu import CountersStep
    from gemmscope.kernels.profile.ncu_source_step import SourceCountersStep

    a, b = Shape(256, 256, 256), Shape(512, 512, 512)
    plan = up.UpdatePlan([], [], 1.0, [
        up.ProfileAgain("counters", "naive", a, 1.0),
        up.ProfileAgain("counters", "coalesced", a, 1.0),
        up.ProfileAgain("source_counters", "naive", b, 1.0),
        up.ProfileAgain("launch_clocks", "wmma", b, 1.0)])
    steps = cli.update_steps(plan, "no-such-ncu", io.StringIO())
    assert [type(s) for s in steps] == [CountersStep, SourceCountersStep, LaunchClocksStep]
    assert steps[0].levels == ["naive", "coalesced"] and steps[0].size == (256, 256, 256)
    assert steps[1].levels == ["naive"] and steps[1].size == (512, 512, 512)
    assert steps[2].levels == ["wmma"] and steps[2].size == (512, 512, 512)

"""``record --update FILE`` without a GPU: it re-measures exactly the levels whose code or
parameters changed since the file's newest result of them, in the file's own shapes and
modes; lists and estimates them with ``--dry-run`` (no runner, no CuPy); refuses a file of
an older protocol; appends to a plain or gzip file so that a crash leaves it as it was.
The runner is the stand-in of tests/support/fake_runner.py."""

from __future__ import annotations

import gzip
import io
import shutil
import sys

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.cli import update_plan
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.results.rows import newest
from gemmscope.kernels.toolchain import nvrtc

COMPILER = "NVRTC 13.0 through CuPy 14.2.0"
ARCH, SMS = "sm_90", 132


@pytest.fixture
def cuda(tmp_path, monkeypatch):
    """A copy of kernels/cuda the registry and the build read, so a test can edit a level."""
    folder = tmp_path / "cuda"
    shutil.copytree(registry.cuda_dir(), folder)
    monkeypatch.setattr(registry, "cuda_dir", lambda: folder)
    monkeypatch.setattr(nvrtc, "cuda_dir", lambda: folder)
    return folder


def _key(level_id: str) -> str:
    return nvrtc.expected_key(registry.BY_ID[level_id], ARCH, COMPILER)


def _events(protocol_version: int = protocol.PROTOCOL_VERSION, params: dict | None = None):
    """A recording as the H200 runner writes one: naive and coalesced at 64³ burst and
    naive sustained, each with its run_start; cuBLAS FP32 beside them; a user's kernel;
    naive's build with its sources. ``params``: the catalog's, by level."""
    catalog = [{"id": lv, "params": (params or {}).get(lv, registry.BY_ID[lv].params)}
               for lv in ("naive", "coalesced")]
    header = {"type": "session", "t": 1.25, "protocol": protocol_version,
              "created": "2026-12-01T00:00:00+00:00", "levels": {}, "catalog": catalog,
              "device": {"name": "NVIDIA H200", "arch": ARCH, "sm_count": SMS}}
    out = [header, {"type": "ready", "t": 1.3}]
    t = 2.0

    def run(n: int, level: str, mode: str = "burst", seconds: float = 3.0, after: float = 0.0,
            **extra):
        nonlocal t
        code = {"code_key": _key(level), "compiler": COMPILER} if level in (
            "naive", "coalesced") else {}
        sustained = ({"window_s": 1.5, "trials": 2, "cooldown_s": 1.0}
                     if mode == "sustained" else {})
        out.append({"type": "run_start", "t": t, "id": f"run-{n}", "level": level, "M": 64,
                    "N": 64, "K": 64, "repeats": 5, "warmup": 2, "mode": mode, **sustained})
        t += seconds
        out.append({"type": "result", "t": t, "id": f"run-{n}", "level": level, "M": 64,
                    "N": 64, "K": 64, "dtype": "fp32", "precision": "fp32",
                    "median_ms": 0.01, "tflops": 1.0, "verified": True, "rel_err": 1e-7,
                    "repeats": 5 if mode == "burst" else 2, "warmup": 2, "mode": mode,
                    **sustained, **code, **extra})
        out.append({"type": "done", "t": t, "id": f"run-{n}"})
        t += after  # its build event, before the next run starts

    run(1, "cublas_fp32", seconds=1.0)
    run(1, "naive", after=0.5, reference="cublas_fp32", reference_tflops=2.0)
    out.append({"type": "build", "t": t, "id": "run-1", "level": "naive", "variant": "vector",
                "code_key": _key("naive"), "compiler": COMPILER,
                "sources": nvrtc.source_files(registry.BY_ID["naive"])})
    run(2, "coalesced", reference="cublas_fp32", reference_tflops=2.0)
    run(3, "cublas_fp32", mode="sustained", seconds=6.0)
    run(3, "naive", mode="sustained", seconds=7.0)
    out.append({"type": "kernel", "t": t, "id": "run-4", "level": "my_kernel",
                "file": "my_kernel.cu", "catalog": {"id": "my_kernel", "user": "my_kernel.cu"}})
    run(4, "my_kernel")
    return out


def _write(path, events) -> bytes:
    data = "".join(protocol.dumps(e) + "\n" for e in events).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    return path.read_bytes()


def _update(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["record", "--update", *map(str, argv)], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _no_runner(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a runner was started")

    monkeypatch.setattr(cli, "open_session", refuse)


def _fake_runner(monkeypatch, sent: list):
    monkeypatch.setattr(cli, "runner_command",
                        lambda args: [sys.executable, str(places.FAKE_RUNNER)])
    real = cli.run_plan

    def run_plan(args, runs, *rest, **kwargs):
        sent.extend(runs)
        return real(args, runs, *rest, **kwargs)

    monkeypatch.setattr(cli, "run_plan", run_plan)


# ------------------------------------------------------------------ what runs, and why
def test_an_unchanged_recording_runs_nothing_and_says_so(tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    before = _write(path, _events())
    code, out, err = _update(path)
    assert code == 0 and "nothing changed" in out and err == ""
    assert "left out: my_kernel: a user's kernel" in out
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "cuda", "rec.jsonl"]


def test_an_edited_level_is_the_only_one_planned_in_each_of_its_shapes_and_modes(
        tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    _write(path, _events())
    old = _key("naive")
    with (cuda / "naive.cu").open("a") as fh:
        fh.write("// an edit\n")
    code, out, _ = _update(path, "--dry-run")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(f"naive: code key {old[:8]}… → {_key('naive')[:8]}… "
                            "(kernels/cuda/naive.cu changed); 1 shape × burst/sustained, "
                            "reference cublas_fp32")
    assert "coalesced" not in out.replace("left out", "")


def test_changed_parameters_plan_the_level_and_name_the_change(tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    own = registry.BY_ID["coalesced"].params
    _write(path, _events(params={"coalesced": {**own, "BLOCK": 16}}))
    code, out, _ = _update(path, "--dry-run")
    assert code == 0 and out.startswith(f"coalesced: params BLOCK 16 → {own['BLOCK']}; ")
    assert not any(line.startswith("naive") for line in out.splitlines())


def test_dry_run_estimates_from_the_files_own_timings_without_cupy_or_a_gpu(
        tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    monkeypatch.setitem(sys.modules, "cupy", None)  # an import of CuPy fails
    path = tmp_path / "rec.jsonl"
    before = _write(path, _events())
    (cuda / "naive.cu").write_text((cuda / "naive.cu").read_text() + "// edit\n")
    code, out, _ = _update(path, "--dry-run")
    assert code == 0 and path.read_bytes() == before
    # burst: 3 s for naive and 0.5 s to the next run's start (its build event) + 1 s for
    # its reference; sustained: 7 s + 6 s; a 1.25 s start
    assert "    naive at 64×64×64: ~4.5 s (as timed in the file)" in out
    assert "    naive at 64×64×64 (sustained): ~13.0 s (as timed in the file)" in out
    assert "estimated GPU time: ~19 s for 2 runs" in out and "an estimate" in out


def test_a_recording_of_an_older_protocol_is_refused_with_the_reason(
        tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    before = _write(path, _events(protocol_version=protocol.PROTOCOL_VERSION - 1))
    code, _, err = _update(path)
    assert code == 2
    assert f"is a protocol {protocol.PROTOCOL_VERSION - 1} recording" in err
    assert path.read_bytes() == before


def test_a_compressed_recording_cut_inside_a_member_is_refused(tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl.gz"
    whole = _write(path, _events())
    path.write_bytes(whole[:-12])  # its CRC and length gone: a crash while compressing
    code, _, err = _update(path)
    assert code == 2 and "ends inside a gzip member" in err
    assert path.read_bytes() == whole[:-12]


def test_results_of_a_second_gpu_are_left_out_and_said(tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    events = _events()
    naive = next(e for e in events if e["type"] == "result" and e["level"] == "naive")
    _write(path, [*events, {**naive, "device": 1, "code_key": "0" * 16}])
    code, out, _ = _update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out  # GPU 0's results are up to date
    assert "left out: results on GPU 1: left as recorded" in out


@pytest.mark.parametrize("flags", [["-l", "naive"], ["-o", "x.jsonl"], ["--sustained"],
                                   ["--append"]])
def test_update_refuses_options_that_say_what_to_run(tmp_path, monkeypatch, flags):
    _no_runner(monkeypatch)
    code, _, err = _update(tmp_path / "rec.jsonl", *flags)
    assert code == 2 and "--update runs what FILE's own results say" in err


# ------------------------------------------------------------------ the runs, appended
@pytest.mark.parametrize("name", ["rec.jsonl", "rec.jsonl.gz"])
def test_update_appends_the_new_runs_and_readers_show_the_newest(
        tmp_path, cuda, monkeypatch, name):
    sent: list = []
    _fake_runner(monkeypatch, sent)
    path = tmp_path / name
    before = _write(path, _events())
    (cuda / "naive.cu").write_text((cuda / "naive.cu").read_text() + "// edit\n")
    code, out, err = _update(path)
    assert code == 0, err
    assert out.startswith("naive: code key")  # said before the runs, then their table
    assert [(r.level, r.shape.M, str(r.mode), r.repeats, r.warmup, r.compare) for r in sent] == [
        ("naive", 64, "burst", 5, 2, True), ("naive", 64, "sustained", 2, 2, True)]
    assert sent[1].sustained is not None and sent[1].sustained.window_s == 1.5
    assert path.read_bytes().startswith(before)  # the old bytes (gzip: members) kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cuda", name]
    session = recording.read_session(path)
    assert session.problem is None
    assert len(session.results) == 6 + 2
    shown = {(r.level, str(r.mode)): r for r in newest(session.results)}
    assert len(shown) == 6 and shown[("naive", "burst")].tflops == 10.0  # the fake's
    assert "appended 2 results" in err


@pytest.mark.parametrize("name", ["rec.jsonl", "rec.jsonl.gz"])
def test_a_crash_during_the_update_leaves_the_file_as_it_was(
        tmp_path, cuda, monkeypatch, name):
    path = tmp_path / name
    before = _write(path, _events())
    (cuda / "naive.cu").write_text((cuda / "naive.cu").read_text() + "// edit\n")

    naive = next(e for e in _events() if e["type"] == "result" and e["level"] == "naive")

    def crash(args, runs, out_path, stderr, *rest, **kwargs):
        with open(out_path, "a") as fh:  # one result recorded, then gemmscope fails
            fh.write(protocol.dumps(_events()[0]) + "\n")
            fh.write(protocol.dumps(naive) + "\n")
        raise OSError(5, "the disk went away")

    monkeypatch.setattr(cli, "run_plan", crash)
    code, _, err = _update(path)
    assert code == 1 and "the disk went away" in err
    assert path.read_bytes() == before
    assert len(recording.read_session(path).results) == 6
    kept = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert len(kept) == 1 and str(kept[0]) in err  # what was measured, said where
    assert recording.read_session(kept[0]).results[-1].level == "naive"


def test_an_update_measures_again_on_the_files_own_operands(tmp_path, cuda):
    from gemmscope.kernels.cli.update_plan import READ, plan_update
    from gemmscope.kernels.protocol.events import Distribution

    evs = _events(params={"coalesced": {**registry.BY_ID["coalesced"].params, "BLOCK": 16}})
    for ev in evs:
        if ev["type"] == "result" and ev["level"] in ("coalesced", "cublas_fp32"):
            ev["operands"] = "zeros"
    path = tmp_path / "rec.jsonl"
    _write(path, evs)
    runs = plan_update(recording.read_session(path, only=READ)).runs
    assert [(r.level, r.operands) for r in runs] == [("coalesced", Distribution.ZEROS)]
    assert runs[0].command("r")["operands"] == "zeros"


# ------------------------------------------------------------------ profiles made again
def _counters(level: str, t: float) -> dict:
    return {"type": "counters", "t": t, "level": level, "M": 256, "N": 256, "K": 256,
            "tool": "ncu", "metrics": {"smsp__inst_executed.sum": 1.0},
            "command": ["ncu", "(test)"]}


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
    _no_runner(monkeypatch)
    events = _events()
    t = events[-1]["t"]
    events += [_counters("naive", t + 1), _source_counters("naive", t + 2),
               _counters("coalesced", t + 3), _trace_of_a_level_without_a_trace_build(t + 4),
               _launch_clocks("naive", t + 5)]
    path = tmp_path / "rec.jsonl"
    _write(path, events)
    # naive as it was before its trace build (its plain text), then edited: a level the
    # file holds a trace of that has no trace build now
    naive = cuda / "naive.cu"
    naive.write_text(nvrtc.plain_text(naive.read_text(encoding="utf-8")) + "// an edit\n",
                     encoding="utf-8")
    assert not nvrtc.traceable(registry.BY_ID["naive"])
    code, out, _ = _update(path, "--dry-run")
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
    _no_runner(monkeypatch)
    events = _events()
    t = events[-1]["t"]
    events += [_build("naive", t + 1, "0" * 16), _counters("naive", t + 2),
               _build("naive", t + 3, _key("naive"))]
    path = tmp_path / "rec.jsonl"
    before = _write(path, events)
    code, out, _ = _update(path, "--dry-run")
    assert code == 0 and path.read_bytes() == before
    lines = out.splitlines()
    assert lines[0] == ("naive: profiled again (the file's are of a build before its "
                        "newest: other code or parameters): ncu counters at 256×256×256, "
                        "~15 s")
    assert lines[-1].startswith("estimated GPU time: ~") and " for 1 profile (" in lines[-1]


def test_profiles_of_the_newest_build_are_not_planned(tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    events = _events()
    t = events[-1]["t"]
    events += [_build("naive", t + 1, _key("naive")), _counters("naive", t + 2)]
    path = tmp_path / "rec.jsonl"
    _write(path, events)
    code, out, _ = _update(path)
    assert code == 0 and "nothing changed" in out and "profiled again" not in out


def _trace_of(level: str, t: float, code_key: str) -> dict:
    """A measured trace event of ``level`` at 256^3 made by the trace build ``code_key``
    (its timeline from the model: only its keys matter to an update)."""
    event = _trace_of_a_level_without_a_trace_build(t)
    return {**event, "level": level, "synthetic": False, "code_key": code_key,
            "plain_code_key": _key(level), "params": registry.BY_ID[level].params}


def _trace_key(level: str) -> str:
    return nvrtc.expected_key(registry.BY_ID[level], ARCH, COMPILER, trace=True)


def test_a_trace_of_this_checkouts_trace_build_is_not_planned(tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    events = _events()
    events.append(_trace_of("naive", events[-1]["t"] + 1, _trace_key("naive")))
    path = tmp_path / "rec.jsonl"
    _write(path, events)
    code, out, _ = _update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out and "profiled again" not in out


def test_a_trace_whose_trace_lines_changed_is_made_again_without_its_results(
        tmp_path, cuda, monkeypatch):
    # a change to a level's trace lines alone: its plain build, results and code keys
    # stand, its trace was measured with another trace build
    _no_runner(monkeypatch)
    events = _events()
    events.append(_trace_of("naive", events[-1]["t"] + 1, _trace_key("naive")))
    path = tmp_path / "rec.jsonl"
    _write(path, events)
    naive = cuda / "naive.cu"
    before = naive.read_text(encoding="utf-8")
    naive.write_text(before + "GS_TRACE_DO(static_assert(true, \"a trace line\");)\n",
                     encoding="utf-8")
    assert nvrtc.plain_text(naive.read_text(encoding="utf-8")) == nvrtc.plain_text(before)
    assert _key("naive") == events[-1]["plain_code_key"]
    code, out, _ = _update(path, "--dry-run")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == ("naive: profiled again (its trace build is other code now: the "
                        "trace lines changed): trace at 256×256×256, ~10 s")
    assert not any(line.startswith("    ") for line in lines)  # no run: the results stand
    assert lines[-1].startswith("estimated GPU time: ~") and " for 1 profile (" in lines[-1]


def test_a_later_runners_header_says_the_params_its_results_ran(tmp_path, cuda, monkeypatch):
    # a file updated once: the first header's catalog has the old parameters, the
    # appended runner's (a restart in the file) the new; its results are current
    _no_runner(monkeypatch)
    own = registry.BY_ID["coalesced"].params
    first = _events(params={"coalesced": {**own, "BLOCK": 16}})
    again = _events()
    t = first[-1]["t"] + 10
    for e in again:
        e["t"] = e["t"] + t
    path = tmp_path / "rec.jsonl"
    _write(path, first + again)
    code, out, _ = _update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out, out


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


# ------------------------------------------------------------------ --unpaired, --max-gpu-s
def _paired(events: list[dict], level: str) -> list[dict]:
    """The events with ``level``'s burst result marked as timed in pairs."""
    return [{**e, "paired": True} if e["type"] == "result" and e["level"] == level
            and e["mode"] == "burst" else e for e in events]


def test_unpaired_measures_again_only_ratios_not_timed_in_pairs_and_keeps_their_profiles(
        tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    events = _paired(_events(), "coalesced")  # naive's ratio unpaired, coalesced's paired
    t = events[-1]["t"]
    path = tmp_path / "rec.jsonl"
    _write(path, [*events, _counters("naive", t + 1)])
    code, out, _ = _update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out  # without --unpaired: as before
    code, out, _ = _update(path, "--unpaired", "--dry-run")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"naive: {update_plan.UNPAIRED}; 1 shape × burst,")
    # coalesced was paired, naive's sustained run has no reference: neither runs; the code
    # is the file's, so naive's counters stand
    assert not any(line.startswith("coalesced") or "profiled again" in line for line in lines)
    assert "    naive at 64×64×64: ~4.5 s (as timed in the file)" in out
    assert "estimated GPU time: ~6 s for 1 run and their references" in out


def test_unpaired_with_every_ratio_paired_says_so(tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    _write(path, _paired(_paired(_events(), "coalesced"), "naive"))
    code, out, _ = _update(path, "--unpaired")
    assert code == 0 and "nothing changed" in out and "every ratio was timed in pairs" in out


def test_max_gpu_s_takes_the_runs_in_order_up_to_the_budget_and_says_the_rest(
        tmp_path, cuda, monkeypatch):
    _no_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    _write(path, _events())
    for name in ("naive.cu", "coalesced.cu"):
        with (cuda / name).open("a") as fh:
            fh.write("// an edit\n")
    # in plan order: naive burst ~4.5 s, naive sustained ~13 s, coalesced burst ~3 s
    code, out, _ = _update(path, "--dry-run", "--max-gpu-s", "10")
    assert code == 0
    assert "    naive at 64×64×64: ~4.5 s" in out and "(sustained)" not in out
    assert "coalesced at" not in out
    assert "left out: 2 runs past --max-gpu-s 10: left for the next update" in out
    # a budget below the first run still runs it: an update always moves on
    code, out, _ = _update(path, "--dry-run", "--max-gpu-s", "2")
    assert "    naive at 64×64×64: ~4.5 s" in out and "left out: 2 runs past" in out
    code, out, _ = _update(path, "--dry-run", "--max-gpu-s", "100")
    assert "past --max-gpu-s" not in out and "3 runs" in out.splitlines()[-1]


@pytest.mark.parametrize(("flags", "said"), [
    (["--unpaired"], "--unpaired goes with --update FILE"),
    (["--max-gpu-s", "60"], "--max-gpu-s goes with --update FILE"),
])
def test_update_options_without_update_are_refused(tmp_path, monkeypatch, flags, said):
    _no_runner(monkeypatch)
    err = io.StringIO()
    code = cli.main(["record", "-l", "naive", "-s", "16", "-o", str(tmp_path / "x.jsonl"),
                     *flags], io.StringIO(), err)
    assert code == 2 and said in err.getvalue()


@pytest.mark.parametrize("value", ["0", "-5", "nan", "1e9"])
def test_max_gpu_s_outside_its_range_is_refused(tmp_path, monkeypatch, value):
    _no_runner(monkeypatch)
    code, _, err = _update(tmp_path / "rec.jsonl", "--max-gpu-s", value)
    assert code == 2 and "--max-gpu-s" in err and "give seconds from 1 to 86,400" in err

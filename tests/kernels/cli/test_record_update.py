"""``record --update FILE`` without a GPU: it re-measures exactly the levels whose code or
parameters changed since the file's newest result of them, in the file's own shapes and
modes; lists and estimates them with ``--dry-run`` (no runner, no CuPy); refuses a file of
an older protocol; appends to a plain or gzip file so that a crash leaves it as it was.
The runner is the stand-in of tests/support/fake_runner.py."""

from __future__ import annotations

import io
import sys

import places
import pytest
from update_recordings import (
    code_key_of,
    counters_event,
    forbid_runner,
    run_update,
    session_events,
    write_recording,
)

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.cli import update_plan
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.results.rows import newest


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
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    before = write_recording(path, session_events())
    code, out, err = run_update(path)
    assert code == 0 and "nothing changed" in out and err == ""
    assert "left out: my_kernel: a user's kernel" in out
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "cuda", "rec.jsonl"]


def test_an_edited_level_is_the_only_one_planned_in_each_of_its_shapes_and_modes(
        tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    write_recording(path, session_events())
    old = code_key_of("naive")
    with (cuda / "naive.cu").open("a") as fh:
        fh.write("// an edit\n")
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(f"naive: code key {old[:8]}… → {code_key_of('naive')[:8]}… "
                            "(kernels/cuda/naive.cu changed); 1 shape × burst/sustained, "
                            "reference cublas_fp32")
    assert "coalesced" not in out.replace("left out", "")


def test_changed_parameters_plan_the_level_and_name_the_change(tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    own = registry.BY_ID["coalesced"].params
    write_recording(path, session_events(params={"coalesced": {**own, "BLOCK": 16}}))
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0 and out.startswith(f"coalesced: params BLOCK 16 → {own['BLOCK']}; ")
    assert not any(line.startswith("naive") for line in out.splitlines())


def test_dry_run_estimates_from_the_files_own_timings_without_cupy_or_a_gpu(
        tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    monkeypatch.setitem(sys.modules, "cupy", None)  # an import of CuPy fails
    path = tmp_path / "rec.jsonl"
    before = write_recording(path, session_events())
    (cuda / "naive.cu").write_text((cuda / "naive.cu").read_text() + "// edit\n")
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0 and path.read_bytes() == before
    # burst: 3 s for naive and 0.5 s to the next run's start (its build event) + 1 s for
    # its reference; sustained: 7 s + 6 s; a 1.25 s start
    assert "    naive at 64×64×64: ~4.5 s (as timed in the file)" in out
    assert "    naive at 64×64×64 (sustained): ~13.0 s (as timed in the file)" in out
    assert "estimated GPU time: ~19 s for 2 runs" in out and "an estimate" in out


def test_a_recording_of_an_older_protocol_is_refused_with_the_reason(
        tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    before = write_recording(path, session_events(protocol_version=protocol.PROTOCOL_VERSION - 1))
    code, _, err = run_update(path)
    assert code == 2
    assert f"is a protocol {protocol.PROTOCOL_VERSION - 1} recording" in err
    assert path.read_bytes() == before


def test_a_compressed_recording_cut_inside_a_member_is_refused(tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl.gz"
    whole = write_recording(path, session_events())
    path.write_bytes(whole[:-12])  # its CRC and length gone: a crash while compressing
    code, _, err = run_update(path)
    assert code == 2 and "ends inside a gzip member" in err
    assert path.read_bytes() == whole[:-12]


def test_results_of_a_second_gpu_are_left_out_and_said(tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    events = session_events()
    naive = next(e for e in events if e["type"] == "result" and e["level"] == "naive")
    write_recording(path, [*events, {**naive, "device": 1, "code_key": "0" * 16}])
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out  # GPU 0's results are up to date
    assert "left out: results on GPU 1: left as recorded" in out


@pytest.mark.parametrize("flags", [["-l", "naive"], ["-o", "x.jsonl"], ["--sustained"],
                                   ["--append"]])
def test_update_refuses_options_that_say_what_to_run(tmp_path, monkeypatch, flags):
    forbid_runner(monkeypatch)
    code, _, err = run_update(tmp_path / "rec.jsonl", *flags)
    assert code == 2 and "--update runs what FILE's own results say" in err


# ------------------------------------------------------------------ the runs, appended
@pytest.mark.parametrize("name", ["rec.jsonl", "rec.jsonl.gz"])
def test_update_appends_the_new_runs_and_readers_show_the_newest(
        tmp_path, cuda, monkeypatch, name):
    sent: list = []
    _fake_runner(monkeypatch, sent)
    path = tmp_path / name
    before = write_recording(path, session_events())
    (cuda / "naive.cu").write_text((cuda / "naive.cu").read_text() + "// edit\n")
    code, out, err = run_update(path)
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
    before = write_recording(path, session_events())
    (cuda / "naive.cu").write_text((cuda / "naive.cu").read_text() + "// edit\n")

    naive = next(e for e in session_events() if e["type"] == "result" and e["level"] == "naive")

    def crash(args, runs, out_path, stderr, *rest, **kwargs):
        with open(out_path, "a") as fh:  # one result recorded, then gemmscope fails
            fh.write(protocol.dumps(session_events()[0]) + "\n")
            fh.write(protocol.dumps(naive) + "\n")
        raise OSError(5, "the disk went away")

    monkeypatch.setattr(cli, "run_plan", crash)
    code, _, err = run_update(path)
    assert code == 1 and "the disk went away" in err
    assert path.read_bytes() == before
    assert len(recording.read_session(path).results) == 6
    kept = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert len(kept) == 1 and str(kept[0]) in err  # what was measured, said where
    assert recording.read_session(kept[0]).results[-1].level == "naive"


def test_an_update_measures_again_on_the_files_own_operands(tmp_path, cuda):
    from gemmscope.kernels.cli.update_plan import READ, plan_update
    from gemmscope.kernels.protocol.events import Distribution

    evs = session_events(params={"coalesced": {**registry.BY_ID["coalesced"].params, "BLOCK": 16}})
    for ev in evs:
        if ev["type"] == "result" and ev["level"] in ("coalesced", "cublas_fp32"):
            ev["operands"] = "zeros"
    path = tmp_path / "rec.jsonl"
    write_recording(path, evs)
    runs = plan_update(recording.read_session(path, only=READ)).runs
    assert [(r.level, r.operands) for r in runs] == [("coalesced", Distribution.ZEROS)]
    assert runs[0].command("r")["operands"] == "zeros"


# ------------------------------------------------------------------ profiles made again


def test_a_later_runners_header_says_the_params_its_results_ran(tmp_path, cuda, monkeypatch):
    # a file updated once: the first header's catalog has the old parameters, the
    # appended runner's (a restart in the file) the new; its results are current
    forbid_runner(monkeypatch)
    own = registry.BY_ID["coalesced"].params
    first = session_events(params={"coalesced": {**own, "BLOCK": 16}})
    again = session_events()
    t = first[-1]["t"] + 10
    for e in again:
        e["t"] = e["t"] + t
    path = tmp_path / "rec.jsonl"
    write_recording(path, first + again)
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out, out


# ------------------------------------------------------------------ --unpaired, --max-gpu-s
def _paired(events: list[dict], level: str) -> list[dict]:
    """The events with ``level``'s burst result marked as timed in pairs."""
    return [{**e, "paired": True} if e["type"] == "result" and e["level"] == level
            and e["mode"] == "burst" else e for e in events]


def test_unpaired_measures_again_only_ratios_not_timed_in_pairs_and_keeps_their_profiles(
        tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    events = _paired(session_events(), "coalesced")  # naive's ratio unpaired, coalesced's paired
    t = events[-1]["t"]
    path = tmp_path / "rec.jsonl"
    write_recording(path, [*events, counters_event("naive", t + 1)])
    code, out, _ = run_update(path, "--dry-run")
    assert code == 0 and "nothing changed" in out  # without --unpaired: as before
    code, out, _ = run_update(path, "--unpaired", "--dry-run")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"naive: {update_plan.UNPAIRED}; 1 shape × burst,")
    # coalesced was paired, naive's sustained run has no reference: neither runs; the code
    # is the file's, so naive's counters stand
    assert not any(line.startswith("coalesced") or "profiled again" in line for line in lines)
    assert "    naive at 64×64×64: ~4.5 s (as timed in the file)" in out
    assert "estimated GPU time: ~6 s for 1 run and their references" in out


def test_unpaired_with_every_ratio_paired_says_so(tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    write_recording(path, _paired(_paired(session_events(), "coalesced"), "naive"))
    code, out, _ = run_update(path, "--unpaired")
    assert code == 0 and "nothing changed" in out and "every ratio was timed in pairs" in out


def test_max_gpu_s_takes_the_runs_in_order_up_to_the_budget_and_says_the_rest(
        tmp_path, cuda, monkeypatch):
    forbid_runner(monkeypatch)
    path = tmp_path / "rec.jsonl"
    write_recording(path, session_events())
    for name in ("naive.cu", "coalesced.cu"):
        with (cuda / name).open("a") as fh:
            fh.write("// an edit\n")
    # in plan order: naive burst ~4.5 s, naive sustained ~13 s, coalesced burst ~3 s
    code, out, _ = run_update(path, "--dry-run", "--max-gpu-s", "10")
    assert code == 0
    assert "    naive at 64×64×64: ~4.5 s" in out and "(sustained)" not in out
    assert "coalesced at" not in out
    assert "left out: 2 runs past --max-gpu-s 10: left for the next update" in out
    # a budget below the first run still runs it: an update always moves on
    code, out, _ = run_update(path, "--dry-run", "--max-gpu-s", "2")
    assert "    naive at 64×64×64: ~4.5 s" in out and "left out: 2 runs past" in out
    code, out, _ = run_update(path, "--dry-run", "--max-gpu-s", "100")
    assert "past --max-gpu-s" not in out and "3 runs" in out.splitlines()[-1]


@pytest.mark.parametrize(("flags", "said"), [
    (["--unpaired"], "--unpaired goes with --update FILE"),
    (["--max-gpu-s", "60"], "--max-gpu-s goes with --update FILE"),
])
def test_update_options_without_update_are_refused(tmp_path, monkeypatch, flags, said):
    forbid_runner(monkeypatch)
    err = io.StringIO()
    code = cli.main(["record", "-l", "naive", "-s", "16", "-o", str(tmp_path / "x.jsonl"),
                     *flags], io.StringIO(), err)
    assert code == 2 and said in err.getvalue()


@pytest.mark.parametrize("value", ["0", "-5", "nan", "1e9"])
def test_max_gpu_s_outside_its_range_is_refused(tmp_path, monkeypatch, value):
    forbid_runner(monkeypatch)
    code, _, err = run_update(tmp_path / "rec.jsonl", "--max-gpu-s", value)
    assert code == 2 and "--max-gpu-s" in err and "give seconds from 1 to 86,400" in err

"""CLI argument handling and `report`, without a GPU."""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.cli import options
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import plan, recording
from gemmscope.kernels.protocol.commands import SustainedConfig


def parse(*argv):
    return cli.build_parser().parse_args(list(argv))


def test_parse_shape_refuses_with_a_value_error_and_the_option_with_argparses():
    """The plan says why not with a ValueError (a talk's file reads it too); the command
    line's type turns it into argparse's error, its words kept."""
    assert plan.parse_shape("4096") == (4096, 4096, 4096)
    assert plan.parse_shape("7x13x5") == (7, 13, 5)
    for bad in ("0", "7x13", "axbxc", "-4", "1x1x9999999999"):
        with pytest.raises(ValueError) as refused:
            plan.parse_shape(bad)
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(str(refused.value))):
            options.shape(bad)


def test_parse_sweep_refuses_with_a_value_error_and_the_option_with_argparses():
    assert plan.parse_sweep("256:8192") == [256, 512, 1024, 2048, 4096, 8192]
    assert plan.parse_sweep("300:1000") == [512]
    for bad in ("8192:256", "abc", "5:6"):
        with pytest.raises(ValueError) as refused:
            plan.parse_sweep(bad)
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(str(refused.value))):
            options.sweep(bad)


def test_plan_defaults_to_the_ladder_at_4096():
    runs = cli.plan(parse("bench"))
    assert [(r.level, r.shape) for r in runs] == [
        (lv.id, Shape(4096, 4096, 4096)) for lv in registry.ladder()]
    assert {(r.repeats, r.warmup, r.compare) for r in runs} == {(20, 3, True)}


def test_plan_levels_sizes_and_sweep():
    runs = cli.plan(parse("bench", "-l", "naive,wmma", "-s", "7x13x5", "--sweep", "256:512"))
    assert [(r.level, r.shape) for r in runs] == [
        ("naive", Shape(7, 13, 5)), ("wmma", Shape(7, 13, 5)), ("naive", Shape(256, 256, 256)),
        ("wmma", Shape(256, 256, 256)), ("naive", Shape(512, 512, 512)),
        ("wmma", Shape(512, 512, 512))]
    assert {r.level for r in cli.plan(parse("record", "-o", "x", "--all"))} == set(registry.BY_ID)


def test_unknown_level_is_an_error_with_exit_2():
    err = io.StringIO()
    assert cli.main(["bench", "-l", "nope"], stdout=io.StringIO(), stderr=err) == 2
    assert "unknown level(s): nope" in err.getvalue()


@pytest.mark.parametrize("argv", [["bench", "-s", "0"], ["bench", "-r", "x"],
                                  ["frobnicate"]])
def test_bad_arguments_exit_2(argv, capsys):
    """Refused in one line naming the option (no usage block, no traceback)."""
    err = io.StringIO()
    assert cli.main(argv, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().count("\n") == 1 and "--help says more" in err.getvalue()


def test_record_without_a_file_exits_2_and_names_both_ways_to_give_one():
    err = io.StringIO()
    assert cli.main(["record"], stdout=io.StringIO(), stderr=err) == 2
    assert "-o FILE (or --update FILE)" in err.getvalue()


def test_bad_repeats_and_rate():
    for argv in (["bench", "-r", "0"], ["bench", "--telemetry-hz", "500"]):
        err = io.StringIO()
        assert cli.main(argv, stdout=io.StringIO(), stderr=err) == 2, argv


def test_bench_without_gpu_says_why(monkeypatch):
    import gemmscope.kernels.device.gpu as gpu

    if gpu.get_cupy()[0] is not None:
        pytest.skip("this machine has a GPU")
    err = io.StringIO()
    assert cli.main(["bench", "-l", "naive", "-s", "8"], stdout=io.StringIO(), stderr=err) == 2
    assert "no GPU" in err.getvalue()


def _session(tmp_path):
    header = {"type": "session", "t": 0.0, "protocol": 1, "created": "now", "levels": {},
              "device": {"name": "Test GPU"}}
    rows = [
        {"type": "result", "t": 1.0, "level": "cublas_fp32", "M": 64, "N": 64, "K": 64,
         "dtype": "fp32", "precision": "fp32", "median_ms": 0.5, "tflops": 2.0,
         "verified": True, "rel_err": 1e-7, "repeats": 5},
        {"type": "result", "t": 2.0, "level": "naive", "M": 64, "N": 64, "K": 64,
         "dtype": "fp32", "precision": "fp32", "median_ms": 1.0, "tflops": 1.0,
         "verified": False, "rel_err": 0.5, "repeats": 5, "reference": "cublas_fp32",
         "reference_tflops": 2.0, "pct_of_reference": 50.0, "throttled": ["SwPowerCap"],
         "energy_j": 0.25, "gflop_per_j": 2.1},
        {"type": "error", "t": 3.0, "kind": "timeout", "message": "stopped answering",
         "level": "wmma", "M": 64, "N": 64, "K": 64},
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(protocol.dumps(e) for e in [header, *rows]) + "\n")
    return p


def test_report_prints_the_table(tmp_path):
    out = io.StringIO()
    assert cli.main(["report", str(_session(tmp_path))], stdout=out, stderr=io.StringIO()) == 0
    text = out.getvalue()
    assert "Test GPU" in text and "2 results, 1 error" in text and "1 errors" not in text
    naive = next(line for line in text.splitlines() if line.startswith("naive"))
    cells = re.split(r"\s{2,}", naive)  # (a cell has no two spaces in a row)
    assert cells[1:3] == ["64×64×64", "FP32"]
    assert "50.0%" in cells and "cublas_fp32" in cells and "NOT verified" in cells
    assert "⚠ SwPowerCap" in cells
    assert "250 mJ" in cells and "2.1" in cells  # J per GEMM and GFLOP/J
    assert "error [timeout] wmma 64 64 64: stopped answering" in text


def test_report_markdown(tmp_path):
    out = io.StringIO()
    cli.main(["report", "--markdown", str(_session(tmp_path))], stdout=out, stderr=io.StringIO())
    assert "| level | shape |" in out.getvalue()


def test_report_of_a_damaged_file_shows_what_is_readable_and_names_the_line(tmp_path):
    p = _session(tmp_path)
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0], "garbage", *lines[1:], '{"type": "res']))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["report", str(p)], stdout=out, stderr=err) == 1
    assert "2 results, 1 error" in out.getvalue()
    assert f"{p}:2: not JSON" in err.getvalue()
    assert "and 1 more unreadable line" in err.getvalue()


def test_report_of_an_unreadable_file_exits_2(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text("garbage\n" + protocol.dumps({"type": "session", "t": 0, "protocol": 1,
                                                "created": "x", "levels": {}}) + "\n")
    err = io.StringIO()
    assert cli.main(["report", str(p)], stdout=io.StringIO(), stderr=err) == 2
    assert "bad.jsonl:1: not JSON" in err.getvalue()
    err = io.StringIO()
    assert cli.main(["report", str(tmp_path / "none.jsonl")], stdout=io.StringIO(),
                    stderr=err) == 2


def test_levels_lists_everything():
    out = io.StringIO()
    cli.main(["levels"], stdout=out, stderr=io.StringIO())
    for lv in registry.LEVELS:
        assert lv.id in out.getvalue()


def test_levels_columns_stay_aligned_after_long_ids():
    out = io.StringIO()
    cli.main(["levels"], stdout=out, stderr=io.StringIO())
    lines = out.getvalue().splitlines()
    assert len(lines) == len(registry.LEVELS)
    longest = max(len(lv.id) for lv in registry.LEVELS)
    assert longest > 14  # (ids such as cublaslt_fp8_blocks: wider than the old column)
    # every row's precision and title start at the same columns
    starts = {(line.index(lv.precision, longest), line.index(lv.title, longest))
              for line, lv in zip(lines, registry.LEVELS, strict=True)}
    assert len(starts) == 1


# ------------------------------------------------------------------ output files

FAKE = places.FAKE_RUNNER


def _fake_runner(monkeypatch, mode="ok"):
    """Every runner the CLI starts is the stand-in (as ``--runner`` would make it)."""
    monkeypatch.setattr(cli, "runner_command", lambda args: [sys.executable, str(FAKE),
                                                             "--mode", mode])


def _no_runner(monkeypatch):
    """Any attempt to start a runner (or look for a GPU) fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a runner was started before the output file was checked")

    monkeypatch.setattr(cli, "RunnerSession", refuse)
    monkeypatch.setattr(cli.ncu, "find_ncu", refuse)


@pytest.mark.parametrize("command", [["record", "--ncu"], ["bench"]])
def test_an_existing_output_is_refused_before_anything_else(tmp_path, monkeypatch, command):
    _no_runner(monkeypatch)
    old = tmp_path / "old.jsonl"
    data = b"".join(b'{"type": "telemetry", "t": %d}\n' % i for i in range(50_000))
    old.write_bytes(data)
    err = io.StringIO()
    code = cli.main([*command, "-o", str(old), "-l", "naive", "-s", "16"],
                    stdout=io.StringIO(), stderr=err)
    assert code == 2
    assert f"{old} exists; pass --force to replace it" in err.getvalue()
    assert old.read_bytes() == data and [p.name for p in tmp_path.iterdir()] == ["old.jsonl"]


def test_an_unwritable_output_folder_is_said_at_once(tmp_path, monkeypatch):
    _no_runner(monkeypatch)
    err = io.StringIO()
    code = cli.main(["record", "-o", str(tmp_path / "no" / "such" / "r.jsonl")],
                    stdout=io.StringIO(), stderr=err)
    assert code == 2 and "cannot write" in err.getvalue()


def test_record_writes_a_temporary_file_and_renames_it_at_the_end(tmp_path, monkeypatch):
    _fake_runner(monkeypatch)
    out = tmp_path / "rec.jsonl"
    during: list[list[str]] = []
    progress_event = cli.Progress.event

    def watch(self, ev):
        during.append(sorted(p.name for p in tmp_path.iterdir()))
        progress_event(self, ev)

    monkeypatch.setattr(cli.Progress, "event", watch)
    code = cli.main(["record", "-o", str(out), "-l", "naive", "-s", "16", "--no-compare"],
                    stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    # during the runs only the temporary file exists, hidden, beside the output
    assert during and all(len(d) == 1 and d[0].startswith(".rec.") for d in during)
    assert [p.name for p in tmp_path.iterdir()] == ["rec.jsonl"]
    assert [r.level for r in recording.read_session(out).results] == ["naive"]


def test_force_replaces_an_existing_output(tmp_path, monkeypatch):
    _fake_runner(monkeypatch)
    out = tmp_path / "rec.jsonl"
    out.write_text("old\n")
    code = cli.main(["bench", "-o", str(out), "--force", "-l", "naive", "-s", "16",
                     "--no-compare"], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0 and recording.read_session(out).results
    assert [p.name for p in tmp_path.iterdir()] == ["rec.jsonl"]


def test_runs_that_do_not_finish_leave_the_output_alone(tmp_path, monkeypatch):
    _fake_runner(monkeypatch)
    out = tmp_path / "rec.jsonl"
    out.write_text("old\n")
    progress_event = cli.Progress.event

    def interrupt_after_the_first_result(self, ev):
        progress_event(self, ev)
        if ev.type == "result":
            raise KeyboardInterrupt

    monkeypatch.setattr(cli.Progress, "event", interrupt_after_the_first_result)
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "--force", "-l", "naive,coalesced", "-s", "16",
                     "--no-compare"], stdout=io.StringIO(), stderr=err)
    assert code == 130 and out.read_text() == "old\n"
    # what was measured is kept under the temporary name, and said where
    [kept] = [p for p in tmp_path.iterdir() if p.name != "rec.jsonl"]
    assert f"what was measured is in {kept}" in err.getvalue()
    assert [r.level for r in recording.read_session(kept).results] == ["naive"]


def test_runs_that_measured_nothing_leave_no_file(tmp_path, monkeypatch):
    import gemmscope.kernels.device.gpu as gpu

    if gpu.get_cupy()[0] is not None:
        pytest.skip("this machine has a GPU")
    err = io.StringIO()
    out = tmp_path / "rec.jsonl"
    assert cli.main(["record", "-o", str(out), "-l", "naive", "-s", "8"],
                    stdout=io.StringIO(), stderr=err) == 2
    assert "no GPU" in err.getvalue() and list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ report on damaged data

def test_report_survives_wrong_types_empty_messages_and_escapes(tmp_path):
    p = _session(tmp_path)
    lines = p.read_text().splitlines()
    extra = [
        {"type": "result", "t": 4.0, "level": "wmma", "M": 64, "N": 64, "K": 64,
         "dtype": "fp16", "precision": 16, "median_ms": 1.0, "tflops": 1e308,
         "verified": True, "rel_err": None, "repeats": 5, "pct_of_reference": "50",
         "reference": 3, "throttled": "SwPowerCap", "energy_j": "x", "pct_of_peak": [1]},
        {"type": "error", "t": 5.0, "kind": "launch", "message": ""},
        {"type": "error", "t": 6.0, "kind": "verify", "message": "bad\x1b]0;pwned\x07\nx",
         "level": "naive\ud800"},
    ]
    header = json.loads(lines[0])
    header["device"] = "not a dict"
    p.write_text("\n".join([json.dumps(header), *lines[1:], *map(json.dumps, extra)]) + "\n")
    out = io.StringIO()
    assert cli.main(["report", str(p)], stdout=out, stderr=io.StringIO()) == 0
    text = out.getvalue()
    wmma = next(line for line in text.splitlines() if line.startswith("wmma"))
    assert "FP16" in wmma and "1.000e+308" in wmma  # dtype stands in; 1e308 TFLOPS printed
    assert "no device" in text and "error [launch] : " in text
    assert "\x1b" not in text and "\x07" not in text
    assert "error [verify] naive\\ud800: bad\\x1b]0;pwned\\x07\n" in text  # first line only


def test_report_into_a_closed_pipe_stops_quietly(tmp_path):
    results = [{"type": "result", "t": float(i), "level": "naive", "M": i, "N": 64, "K": 64,
                "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0, "verified": True,
                "rel_err": 0.0, "repeats": 5} for i in range(1, 5000)]
    p = tmp_path / "big.jsonl"
    p.write_text("\n".join(protocol.dumps(e) for e in [
        {"type": "session", "t": 0.0, "protocol": 1, "created": "now", "levels": {}},
        *results]) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "gemmscope.kernels", "report", str(p)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err and err == ""


def test_report_lines_hold_no_line_break(tmp_path):
    """Each line is written alone: a short write to a pipe is whole or fails with EPIPE,
    where one write of the whole table could end part-way without an error when the
    reader went away, and unbuffered stdout (-u) drops the rest silently (the closed-pipe
    test above then saw exit 0 under load: 10 of 40 runs)."""
    from gemmscope.kernels.results.session_report import report_lines

    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(protocol.dumps(e) for e in [
        {"type": "session", "t": 0.0, "protocol": 1, "created": "now", "levels": {}},
        *({"type": "result", "t": float(i), "level": "naive", "M": i, "N": 64, "K": 64,
           "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0, "verified": True,
           "rel_err": 0.0, "repeats": 5} for i in range(1, 40))]) + "\n")
    lines, problem = report_lines(str(p))
    assert problem is None and len(lines) > 40
    assert not [line for line in lines if "\n" in line]


# ------------------------------------------------------------------ --append, --sustained-size

def test_sustained_size_adds_sustained_runs_after_the_burst_ones():
    runs = cli.plan(parse("bench", "-l", "naive,coalesced", "-s", "64", "--sustained-size",
                          "128", "--sustained-size", "32x16x8", "--window-s", "1.5",
                          "--trials", "2", "--cooldown-s", "0"))
    assert [(r.level, r.shape.M, r.shape.N, r.shape.K, r.mode) for r in runs] == [
        ("naive", 64, 64, 64, "burst"), ("coalesced", 64, 64, 64, "burst"),
        ("naive", 128, 128, 128, "sustained"), ("coalesced", 128, 128, 128, "sustained"),
        ("naive", 32, 16, 8, "sustained"), ("coalesced", 32, 16, 8, "sustained")]
    assert all(r.sustained == SustainedConfig(1.5, 2, 0.0)
               for r in runs if r.mode == "sustained")
    assert all(r.sustained is None for r in runs if r.mode == "burst")


def test_sustained_size_with_sustained_is_refused():
    with pytest.raises(cli.CliError, match="--sustained-size adds sustained runs"):
        cli.plan(parse("bench", "--sustained", "--sustained-size", "64"))


def test_append_continues_the_session_file_and_keeps_every_old_line(tmp_path, monkeypatch):
    _fake_runner(monkeypatch)
    out = tmp_path / "rec.jsonl"
    assert cli.main(["record", "-o", str(out), "-l", "naive", "-s", "16", "--no-compare"],
                    stdout=io.StringIO(), stderr=io.StringIO()) == 0
    before = out.read_bytes()
    with out.open("ab") as fh:  # a crash cut the last line
        fh.write(b'{"type":"info","t":9')
    code = cli.main(["record", "-o", str(out), "--append", "-l", "coalesced", "-s", "16",
                     "--no-compare"], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    after = out.read_bytes()
    assert after.startswith(before + b'{"type":"info","t":9\n')
    session = recording.read_session(out)
    assert [r.level for r in session.results] == ["naive", "coalesced"]
    assert session.skipped_count == 1  # the cut line, named
    assert [p.name for p in tmp_path.iterdir()] == ["rec.jsonl"]


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"), (b"", "nothing was appended"),
    (b'{"type":"info","t":1,"text":"x"}\n', "nothing was appended")])
def test_append_refuses_a_file_that_is_not_a_session(tmp_path, monkeypatch, content, message):
    _no_runner(monkeypatch)
    out = tmp_path / "rec.jsonl"
    if content is not None:
        out.write_bytes(content)
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "--append", "-l", "naive", "-s", "16"],
                    stdout=io.StringIO(), stderr=err)
    assert code == 2 and message in err.getvalue()
    assert (out.read_bytes() if content is not None else None) == content
    assert len(list(tmp_path.iterdir())) == (content is not None)


def test_append_that_measures_nothing_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    _fake_runner(monkeypatch)
    out = tmp_path / "rec.jsonl"
    assert cli.main(["record", "-o", str(out), "-l", "naive", "-s", "16", "--no-compare"],
                    stdout=io.StringIO(), stderr=io.StringIO()) == 0
    before = out.read_bytes()

    def no_gpu(*args, **kwargs):
        raise cli.CliError("no GPU: none here")

    monkeypatch.setattr(cli, "open_session", no_gpu)
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "--append", "-l", "coalesced", "-s", "16",
                     "--no-compare"], stdout=io.StringIO(), stderr=err)
    assert code == 2 and "no GPU" in err.getvalue() and out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["rec.jsonl"]


@pytest.mark.parametrize("argv", [["record", "--ncu", "ncu"], ["record"], ["bench"]])
def test_a_refused_plan_leaves_no_file_beside_the_output(tmp_path, argv):
    """The options are checked before the output file is made: an unknown level is said
    and nothing is written (not even a temporary file beside the output)."""
    err = io.StringIO()
    code = cli.main([*argv, "-o", str(tmp_path / "rec.jsonl"), "-l", "no_such_level"],
                    stdout=io.StringIO(), stderr=err)
    assert code == 2 and "unknown level(s): no_such_level" in err.getvalue()
    assert list(tmp_path.iterdir()) == []


def test_each_subcommand_reads_its_own_options_only():
    """bench and record are two functions, and no command guesses at options it may
    not have (no getattr on the parsed arguments anywhere in the command lines)."""
    assert cli.COMMANDS["bench"] is not cli.COMMANDS["record"]
    root = places.REPO
    guessed = [f"{path.relative_to(root)}:{n}"
               for folder in ("kernels", "app") for path in sorted((root / folder).rglob("*.py"))
               for n, line in enumerate(path.read_text().splitlines(), 1)
               if re.search(r"getattr\(\s*args\b", line)]
    assert guessed == []

"""CLI argument handling and `report`, without a GPU."""

from __future__ import annotations

import argparse
import io

import pytest

from gemmscope.kernels import cli, protocol, registry


def parse(*argv):
    return cli.build_parser().parse_args(list(argv))


def test_parse_shape():
    assert cli.parse_shape("4096") == (4096, 4096, 4096)
    assert cli.parse_shape("7x13x5") == (7, 13, 5)
    for bad in ("0", "7x13", "axbxc", "-4", "1x1x9999999999"):
        with pytest.raises(argparse.ArgumentTypeError):
            cli.parse_shape(bad)


def test_parse_sweep():
    assert cli.parse_sweep("256:8192") == [256, 512, 1024, 2048, 4096, 8192]
    assert cli.parse_sweep("300:1000") == [512]
    for bad in ("8192:256", "abc", "5:6"):
        with pytest.raises(argparse.ArgumentTypeError):
            cli.parse_sweep(bad)


def test_plan_defaults_to_the_ladder_at_4096():
    runs = cli.plan(parse("bench"))
    assert runs == [(lv.id, 4096, 4096, 4096) for lv in registry.ladder()]


def test_plan_levels_sizes_and_sweep():
    runs = cli.plan(parse("bench", "-l", "naive,wmma", "-s", "7x13x5", "--sweep", "256:512"))
    assert runs == [("naive", 7, 13, 5), ("wmma", 7, 13, 5), ("naive", 256, 256, 256),
                    ("wmma", 256, 256, 256), ("naive", 512, 512, 512), ("wmma", 512, 512, 512)]
    assert {r[0] for r in cli.plan(parse("record", "-o", "x", "--all"))} == set(registry.BY_ID)


def test_unknown_level_is_an_error_with_exit_2():
    err = io.StringIO()
    assert cli.main(["bench", "-l", "nope"], stdout=io.StringIO(), stderr=err) == 2
    assert "unknown level(s): nope" in err.getvalue()


@pytest.mark.parametrize("argv", [["bench", "-s", "0"], ["bench", "-r", "x"], ["record"],
                                  ["frobnicate"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2


def test_bad_repeats_and_rate():
    for argv in (["bench", "-r", "0"], ["bench", "--telemetry-hz", "500"]):
        err = io.StringIO()
        assert cli.main(argv, stdout=io.StringIO(), stderr=err) == 2, argv


def test_bench_without_gpu_says_why(monkeypatch):
    import gemmscope.kernels.gpu as gpu

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
    assert "Test GPU" in text and "2 results, 1 errors" in text
    naive = next(line for line in text.splitlines() if line.startswith("naive"))
    assert "64x64x64" in naive and "50.0 (fp32)" in naive and "NO" in naive
    assert "throttled: SwPowerCap" in naive
    assert " 0.25 " in naive and " 2 " in naive  # J per GEMM and GFLOP/J
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
    assert "2 results, 1 errors" in out.getvalue()
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

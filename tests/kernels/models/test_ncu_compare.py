"""The ncu CSV parser and the model-vs-measured table (format sample: tests/support/fake_ncu.py,
made-up values, not measured data)."""

from __future__ import annotations

import json
import subprocess
import sys

import places
import pytest
from fake_ncu import FORMAT_SAMPLE, LD_C, LD_W, ST_C, ST_W, write_fake_ncu

from gemmscope.kernels.models import model_for, totals
from gemmscope.kernels.models.level_model import NCU_METRICS
from gemmscope.kernels.models.ncu_compare import (
    NcuParseError,
    compare,
    diff_pct,
    format_table,
    parse_number,
    parse_raw_csv,
)

BRIEF_128 = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}


def test_parse_number():
    assert parse_number("126,976") == 126976
    assert parse_number(" 1.5 ") == 1.5
    assert parse_number("n/a") is None
    assert parse_number("") is None


def test_parse_raw_csv_skips_prof_lines_prints_and_units():
    rows = parse_raw_csv(FORMAT_SAMPLE)
    assert len(rows) == 1
    row = rows[0]
    assert "sgemm_register_2d" in row.kernel
    assert row.values[LD_C] == 4194304
    assert row.values[ST_C] == 12
    assert row.values[LD_W] == 12582912
    assert row.values[ST_W] is None
    assert row.units[LD_C] == ""


def test_parse_raw_csv_without_a_header_says_so():
    with pytest.raises(NcuParseError, match="Kernel Name"):
        parse_raw_csv("==PROF== No kernels were profiled.\n")
    assert parse_raw_csv(FORMAT_SAMPLE.split('"0","4242"')[0]) == []


def test_compare_and_table():
    model = model_for("register_2d", BRIEF_128).totals(1024, 1024, 1024)
    rows = compare(model, parse_raw_csv(FORMAT_SAMPLE)[0])
    by = {r.metric: r for r in rows}
    assert by[LD_C].model == 4194304 and by[LD_C].diff_pct == 0.0
    assert by[ST_C].model == 0 and by[ST_C].diff_pct == pytest.approx(-100.0)
    assert by[ST_W].measured is None and by[ST_W].diff_pct is None
    table = format_table(rows)
    assert "4,194,304" in table and "n/a" in table and "-100.0" in table
    assert diff_pct(0, 0) == 0.0 and diff_pct(5, 0) is None
    # no measurement at all: every measured cell is n/a
    assert all(r.measured is None for r in compare(model, None))


def test_script_builds_the_documented_ncu_command():
    sys.path.insert(0, str(places.BENCHMARKS))
    try:
        import bank_conflicts_ncu as script
    finally:
        sys.path.pop(0)
    cmd = script.ncu_command("ncu", "smem_tiled", 1024, 1024, 1024)
    assert cmd[:3] == ["ncu", "--clock-control", "none"]
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(NCU_METRICS.values())
    assert cmd[cmd.index("-k") + 1] == "regex:sgemm_smem_tiled"
    assert cmd[cmd.index("--page") + 1] == "raw" and "--csv" in cmd
    assert cmd[-5:] == ["smem_tiled", "1024", "1024", "1024", "--one-block-per-sm"]
    extra = script.ncu_command("ncu", "cp_async", 64, 64, 64, extra=True)
    assert "smsp__inst_executed_op_ldgsts.sum" in extra[extra.index("--metrics") + 1]


def test_script_end_to_end_with_a_fake_ncu(tmp_path):
    fake = write_fake_ncu(tmp_path / "ncu")
    out = tmp_path / "r.json"
    script = places.BENCHMARKS / "bank_conflicts_ncu.py"
    proc = subprocess.run([sys.executable, str(script), "--ncu", str(fake), "--levels",
                           "register_2d", "--json", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "ld bank conflicts" in proc.stdout
    data = json.loads(out.read_text())
    cmp = data["levels"]["register_2d"]["comparison"]
    assert cmp[0]["measured"] == 4194304
    assert cmp[0]["model"] == totals("register_2d", 1024, 1024, 1024).ld.conflicts
    entry = data["levels"]["register_2d"]
    assert data["launch"] == "one_block_per_sm" and entry["command"][-1] == "--one-block-per-sm"
    proc = subprocess.run([sys.executable, str(script), "--ncu", str(fake), "--levels",
                           "register_2d", "--json", str(out), "--as-launched"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["launch"] == "as_launched"
    assert "--one-block-per-sm" not in data["levels"]["register_2d"]["command"]


def test_extra_metrics_rows_appear_only_when_reported():
    from gemmscope.kernels.models.level_model import NCU_EXTRA_METRICS

    ld_i = NCU_EXTRA_METRICS["ld_instructions"]
    sample = FORMAT_SAMPLE.replace(f'"{ST_W}"', f'"{ST_W}","{ld_i}"').replace(
        '"","","",""\n', '"","","","",""\n').replace('"n/a"\n', '"n/a","2,097,152"\n')
    row = parse_raw_csv(sample)[0]
    assert row.values[ld_i] == 2097152
    model = model_for("register_2d", BRIEF_128).totals(1024, 1024, 1024)
    rows = compare(model, row)
    assert [r.label for r in rows][-1] == "ld instructions"
    assert rows[-1].model == model.ld.instructions == 2097152 and rows[-1].diff_pct == 0.0
    assert len(compare(model, parse_raw_csv(FORMAT_SAMPLE)[0])) == 4


def test_script_retries_without_the_extra_metrics(tmp_path):
    # a profiler that rejects the extra metric names, as an older ncu might
    fake = write_fake_ncu(tmp_path / "ncu", mode="reject_extra")
    out = tmp_path / "r.json"
    script = places.BENCHMARKS / "bank_conflicts_ncu.py"
    proc = subprocess.run([sys.executable, str(script), "--ncu", str(fake), "--levels",
                           "register_2d", "--json", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    entry = json.loads(out.read_text())["levels"]["register_2d"]
    assert entry["extra_metrics"] is False
    assert "Failed to find metric" in entry["first_try"]["stderr_tail"]
    assert entry["comparison"][0]["measured"] == 4194304


def test_script_reads_csvs_written_earlier(tmp_path):
    (tmp_path / "ncu_register_2d.csv").write_text(FORMAT_SAMPLE, encoding="utf-8")
    (tmp_path / "ncu_smem_tiled.csv").write_text("==PROF== No kernels were profiled.\n",
                                                 encoding="utf-8")
    out = tmp_path / "r.json"
    script = places.BENCHMARKS / "bank_conflicts_ncu.py"
    proc = subprocess.run([sys.executable, str(script), "--from-dir", str(tmp_path),
                           "--levels", "register_2d,smem_tiled,vectorized", "--json",
                           str(out), "--ncu", "/nonexistent/ncu"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    levels = json.loads(out.read_text())["levels"]
    assert levels["register_2d"]["comparison"][0]["measured"] == 4194304
    assert "Kernel Name" in levels["smem_tiled"]["error"]
    assert "error" in levels["vectorized"]  # no file

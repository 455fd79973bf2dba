"""One row model: the CLI table, the CSV, the Markdown report and the ladder panel show the
same text for the same result (numbers, the n/a dash, the verdict word), read back from
what each of them prints or shows."""

from __future__ import annotations

import csv
import io
import re

import pytest
import synthetic_session as syn

from gemmscope.app.core import export
from gemmscope.app.widgets.ladder_panel import COLUMNS, SUSTAINED_COLUMNS
from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.events import dumps
from gemmscope.kernels.results.rows import (
    DASH,
    NOT_RUN,
    NOT_VERIFIED,
    VERIFIED,
    Column,
    Row,
    ms_text,
    tflops_text,
)

# the panel's columns of one result (the sustained pair sets two results side by side;
# the tables list a sustained result as a row of its own, with its mode)
# (the baseline's column shows only beside a baseline: tests/app/widgets/test_ladder_baseline.py)
PANEL_COLUMNS = tuple(c for c in COLUMNS if c not in SUSTAINED_COLUMNS
                      and c != Column.BASELINE)

FAILED = "smem_tiled"  # made to fail verification
UNSAMPLED = "coalesced"  # made to have no NVML fields
NVML_FIELDS = ("energy_j", "gflop_per_j", "avg_power_w", "sm_clock_mhz_avg",
               "sm_clock_mhz_min", "throttled")


def _events() -> list[dict]:
    """The synthetic session, one result failing verification, one without NVML fields,
    and a level of the catalog that never ran."""
    out = []
    for ev in syn.events():
        if ev["type"] == "result" and ev["level"] == FAILED:
            ev = {**ev, "verified": False, "rel_err": 0.5}
        if ev["type"] == "result" and ev["level"] == UNSAMPLED:
            ev = {k: v for k, v in ev.items() if k not in NVML_FIELDS}
        out.append(ev)
    return out


def _cli_table(path, markdown: bool) -> dict[str, dict[str, str]]:
    """`gemmscope report`'s rows at the ladder shape: level -> column header -> text."""
    out = io.StringIO()
    assert cli.main(["report", str(path), *(["--markdown"] if markdown else [])],
                    stdout=out, stderr=io.StringIO()) == 0
    lines = [x for x in out.getvalue().splitlines() if x.strip()]
    if markdown:
        table = [x.strip("|").split(" | ") for x in lines if x.startswith("| ")]
        table = [[md_unescaped(cell.strip()) for cell in row] for row in table]
    else:  # columns are two or more spaces apart; no cell has two spaces in a row
        start = next(i for i, x in enumerate(lines) if x.startswith("level "))
        table = [re.split(r"\s{2,}", x) for x in lines[start:] if not x.startswith("--")]
        table = [row for row in table if not row[0].startswith("error [")]
    header, *rows = table
    shape = "×".join(map(str, syn.SHAPE))
    by_level = {}
    for row in rows:  # later rows win, as the ladder shows the latest result
        cells = dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))
        if cells["shape"] == shape:
            by_level[cells["level"]] = cells
    return by_level


def md_unescaped(cell: str) -> str:
    """A Markdown cell as a reader sees it: its backslash escapes undone."""
    return re.sub(r"\\(.)", r"\1", cell)


def _markdown_report(store) -> dict[str, dict[str, str]]:
    lines = export.ladder_markdown(store, "x.jsonl").splitlines()
    table = [[md_unescaped(c.strip()) for c in x.strip("|").split(" | ")] for x in lines
             if x.startswith("| ")]
    header, *rows = table
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def _csv(store) -> dict[str, dict[str, str]]:
    shape = "×".join(map(str, syn.SHAPE))
    rows = csv.DictReader(io.StringIO(export.results_csv(store)))
    return {r["level"]: r for r in rows if r["shape"] == shape}


def test_cli_table_csv_markdown_and_ladder_panel_show_the_same_texts(make_window, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in _events()), encoding="utf-8")
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    panel, store = window.ladder, window.store
    shown = {"ladder panel": {level: {c: panel.cell_text(level, c) for c in PANEL_COLUMNS}
                              for level in syn.LADDER_TFLOPS},
             "CLI table": _cli_table(path, markdown=False),
             "CLI Markdown": _cli_table(path, markdown=True),
             "CSV": _csv(store), "Markdown report": _markdown_report(store)}
    for level in syn.LADDER_TFLOPS:
        for column in PANEL_COLUMNS:
            want = shown["ladder panel"][level][column]
            for where, table in shown.items():
                if column in table[level]:
                    assert table[level][column] == want, (where, level, column)
    for where, table in shown.items():  # the same words where it matters
        assert table[FAILED]["verified"] == NOT_VERIFIED, where
        assert table["naive"]["verified"] == VERIFIED, where
        assert table[UNSAMPLED]["J/GEMM"] == DASH, where  # not measured
        assert table[UNSAMPLED]["clocks held back"] == DASH, where
        assert table["wmma"]["clocks held back"] == "⚠ SwPowerCap", where
        assert table["wmma"]["TFLOPS"] == "300.0", where
    # every panel column is in every table
    for where, table in shown.items():
        assert set(PANEL_COLUMNS) <= set(table["naive"]), where


def test_a_level_that_never_ran_reads_the_same_in_the_panel_and_the_report(make_window,
                                                                          tmp_path):
    # the catalog's references ran; drop cuBLAS FP16 so one level of the catalog did not
    events = [e for e in _events() if e.get("level") != "cublas_fp16"]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in events), encoding="utf-8")
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    report = _markdown_report(window.store)["cublas_fp16"]
    for column in PANEL_COLUMNS:
        assert report[column] == window.ladder.cell_text("cublas_fp16", column)
    assert report["verified"] == NOT_RUN and report["TFLOPS"] == DASH


def test_row_texts_follow_one_rule_per_column():
    ev = {"type": "result", "t": 1.0, "level": "naive", "M": 64, "N": 64, "K": 64,
          "dtype": "fp32", "precision": "fp32", "median_ms": 0.123456, "tflops": 45.678,
          "verified": True, "rel_err": None, "repeats": 5}
    ref = of({**ev, "level": "cublas_fp32", "tflops": 91.356})
    texts = Row.of(of(ev), ref, peak_tflops=67.0).texts()
    assert texts[Column.TFLOPS] == "45.68" and texts[Column.MEDIAN_MS] == "0.1235"
    assert texts[Column.PCT_OF_REFERENCE] == "50.0%" and texts[Column.REFERENCE] == "cublas_fp32"
    assert texts[Column.PCT_OF_PEAK] == "68.2%" and texts[Column.REL_ERR] == DASH
    assert texts[Column.THROTTLED] == DASH  # no NVML fields: not "no"
    assert texts[Column.SHAPE] == "64×64×64" and texts[Column.PRECISION] == "FP32"
    alone = Row.of(of(ev)).texts()
    assert alone[Column.PCT_OF_REFERENCE] == DASH and alone[Column.REFERENCE] == DASH


@pytest.mark.parametrize(("value", "tflops", "ms"), [
    (0.3, "0.3000", "0.3000"), (45.678, "45.68", "45.68"), (783.02, "783.0", "783.0"),
    (1089.75, "1090", "1090"), (9.99996, "10.00", "10.00"), (0.0, "0.000", "0.000")])
def test_numbers_have_fixed_significant_digits_and_no_exponent(value, tflops, ms):
    assert tflops_text(value) == tflops and ms_text(value) == ms


def test_a_results_parameters_are_bounded_integers_by_name():
    ev = {"type": "result", "t": 1.0, "level": "fp8_block_scaled", "M": 64, "N": 64,
          "K": 128, "dtype": "fp8", "precision": "fp8", "median_ms": 0.1, "tflops": 1.0,
          "verified": True, "rel_err": None, "repeats": 5}
    assert of(ev).params is None
    assert of({**ev, "params": {"BN": 192, "BM": 128}}).params == {"BN": 192, "BM": 128}
    # a recording is untrusted: non-integers left out, names cut, at most 32 kept
    hostile = {"x" * 1000: 1, "flag": True, "text": "<b>", **{f"P{i}": i for i in range(999)}}
    kept = of({**ev, "params": hostile}).params
    assert kept is not None and len(kept) == 32
    assert next(iter(kept.items())) == ("x" * 32, 1)
    assert all(type(v) is int for v in kept.values())
    assert "flag" not in kept and "text" not in kept
    assert of({**ev, "params": ["BN", 192]}).params is None
    # the notes name what differs from the level's own
    own = Row.of(of({**ev, "params": {"BN": 256, "BM": 128}})).notes()
    picked = Row.of(of({**ev, "params": {"BN": 192, "BM": 128}})).notes()
    assert "ran" not in own and picked.startswith("ran BN=192")


def test_a_burst_whose_launches_stepped_says_so_in_its_notes_and_which_side_its_median_is():
    ev = {"type": "result", "t": 1.0, "level": "wmma", "M": 8192, "N": 8192, "K": 8192,
          "dtype": "fp16", "precision": "fp16", "median_ms": 3.75, "tflops": 293.1,
          "verified": True, "rel_err": 1e-3, "repeats": 20,
          "launch_step": {"at": 4, "launches": 20, "before_ms": 3.405, "after_ms": 3.8,
                          "change_pct": 11.6}}
    notes = Row.of(of(ev)).notes()
    assert "launches 5–20 ran 11.6% slower than 1–4: the median is of 5–20" in notes
    assert "settled" not in notes
    assert "settled 5 s first; launches 5–20" in Row.of(of({**ev, "settle_s": 5.0})).notes()
    steady = Row.of(of({**ev, "launch_step": None})).notes()
    assert "slower" not in steady and "median" not in steady


@pytest.mark.parametrize("bad", [{"at": "4"}, {"at": 4, "launches": 20}, [4, 20], "step",
                                 {"at": 4, "launches": 20, "before_ms": 1, "after_ms": 2,
                                  "change_pct": "<b>100</b>"}])
def test_a_launch_step_that_is_not_one_is_left_out_and_the_result_kept(bad):
    ev = {"type": "result", "t": 1.0, "level": "wmma", "M": 64, "N": 64, "K": 64,
          "dtype": "fp16", "precision": "fp16", "median_ms": 0.1, "tflops": 1.0,
          "verified": True, "rel_err": None, "repeats": 5, "launch_step": bad}
    result = of(ev)
    assert result.launch_step is None and result.tflops == 1.0
    assert "slower" not in Row.of(result).notes()


def test_an_energy_window_other_than_the_documented_second_is_said_in_the_notes():
    """The app's runs measure energy over 0.5 s (issue 40 item 3): its rows say so."""
    ev = {"type": "result", "t": 1.0, "level": "wmma", "M": 2048, "N": 2048, "K": 2048,
          "dtype": "fp16", "precision": "fp16", "median_ms": 0.06, "tflops": 286.0,
          "verified": True, "rel_err": 1e-3, "repeats": 20, "energy_j": 0.05,
          "energy_window": {"pattern": "launch", "asked_s": 0.5, "gpu_s": 0.52}}
    assert "energy over 0.5 s" in Row.of(of(ev)).notes()
    second = {**ev, "energy_window": {**ev["energy_window"], "asked_s": 1.0}}
    older = {**ev, "energy_window": {"pattern": "launch", "gpu_s": 1.02}}  # before issue 40
    assert "energy over" not in Row.of(of(second)).notes()
    assert "energy over" not in Row.of(of(older)).notes()

"""J per GEMM, GFLOP/J and the throttle flag in the ladder table, the bar chart, the CSV
and the Markdown report, read back from what each shows."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
import synthetic_session as syn

from gemmscope.app.core import export
from gemmscope.kernels.protocol.events import dumps


def _result(path, level):
    return next(e for e in syn.file_events(path)
                if e["type"] == "result" and e["level"] == level)


@pytest.fixture
def window(make_window, synthetic_file):
    window = make_window()
    assert window.open_recording(synthetic_file)
    window.play_instant()
    return window


def test_ladder_shows_energy_and_marks_the_throttled_run(window, synthetic_file):
    wmma, naive = _result(synthetic_file, "wmma"), _result(synthetic_file, "naive")
    assert wmma["throttled"] == ["SwPowerCap"] and naive["throttled"] == []
    panel = window.ladder
    assert panel.cell_text("wmma", "J/GEMM") == f"{wmma['energy_j'] * 1e3:.3g} mJ"
    assert panel.cell_text("wmma", "GFLOP/J") == f"{wmma['gflop_per_j']:.0f}"
    assert panel.cell_text("wmma", "TFLOPS") == "300.0"
    assert panel.cell_text("wmma", "clocks held back") == "⚠ SwPowerCap"
    assert panel.cell_text("naive", "J/GEMM") == f"{naive['energy_j']:.3g} J"
    assert panel.cell_text("naive", "GFLOP/J") == f"{naive['gflop_per_j']:.3g}"
    assert panel.cell_text("naive", "clocks held back") == "no"
    for column in ("TFLOPS", "J/GEMM", "GFLOP/J", "clocks held back"):
        tip = panel.cell("wmma", column).toolTip()
        assert "SwPowerCap" in tip and "min 1755 MHz" in tip and "max 1980 MHz" in tip
        assert panel.cell("wmma", column).foreground().color().name() == "#d46a00"
        assert panel.cell("naive", column).toolTip() == ""
    panel.select_level("wmma")
    assert "GFLOP/J" in panel.detail.text() and "clocks held back: ⚠ SwPowerCap" in \
        panel.detail.text()


def test_bars_outline_the_throttled_run_and_show_gflop_per_j(window, synthetic_file):
    bars = window.charts()["bars"]
    levels = [row.level for row in bars.rows]
    i = levels.index("wmma")
    pens = bars.bars.opts["pens"]
    assert pens[i].style() == pens[i].style().DashLine
    assert pens[i].color().name() == "#d46a00"
    assert all(p.style() == p.style().SolidLine for j, p in enumerate(pens) if j != i)
    assert bars.label_texts[i].endswith("⚠")
    assert "⚠" not in bars.label_texts[levels.index("naive")]
    bars.hover.show_at(i, 1.0)
    assert "clocks held back: SwPowerCap" in bars.hover.text
    bars.set_metric("GFLOP/J")
    want = [_result(synthetic_file, lv)["gflop_per_j"] for lv in levels]
    np.testing.assert_allclose(bars.drawn_values(), want)


def test_csv_has_energy_and_throttle_columns(window, synthetic_file):
    rows = {r["level"]: r for r in csv.DictReader(io.StringIO(
        export.results_csv(window.store)))}
    wmma, naive = _result(synthetic_file, "wmma"), _result(synthetic_file, "naive")
    assert rows["wmma"]["J/GEMM"] == f"{wmma['energy_j'] * 1e3:.3g} mJ"
    assert rows["wmma"]["GFLOP/J"] == f"{wmma['gflop_per_j']:.0f}"
    assert rows["wmma"]["avg W"] == f"{wmma['avg_power_w']:.0f}"
    assert rows["wmma"]["min SM MHz"] == "1755"
    assert rows["wmma"]["clocks held back"] == "⚠ SwPowerCap"
    assert rows["naive"]["clocks held back"] == "no"
    assert rows["naive"]["J/GEMM"] == f"{naive['energy_j']:.3g} J"


def test_markdown_has_energy_and_the_throttle_flag(window, synthetic_file):
    md = export.ladder_markdown(window.store, "synthetic.jsonl")
    wmma = _result(synthetic_file, "wmma")
    line = next(x for x in md.splitlines() if x.startswith("| wmma |"))
    assert f"| {wmma['energy_j'] * 1e3:.3g} mJ | {wmma['gflop_per_j']:.0f} " \
           "| – | – | ⚠ SwPowerCap | verified |" in line
    naive = next(x for x in md.splitlines() if x.startswith("| naive |"))
    assert "| no | verified |" in naive
    assert ("| J/GEMM | GFLOP/J | sustained TFLOPS | power-limited | clocks held back "
            "| verified |") in md
    assert "measured at reduced clocks" in md


def test_results_without_nvml_show_dashes_and_no_mark(make_window, tmp_path):
    import synthetic_session as syn

    drop = {"energy_j", "gflop_per_j", "avg_power_w", "sm_clock_mhz_avg", "sm_clock_mhz_min",
            "throttled"}
    events = [{k: v for k, v in e.items() if e["type"] != "result" or k not in drop}
              for e in syn.events() if e["type"] != "telemetry"]
    path = tmp_path / "no-nvml.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in events), encoding="utf-8")
    window = make_window()
    window.open_recording(path)
    window.play_instant()
    assert window.ladder.cell_text("wmma", "J/GEMM") == "–"
    assert window.ladder.cell_text("wmma", "GFLOP/J") == "–"
    assert window.ladder.cell_text("wmma", "TFLOPS") == "300.0"
    assert window.ladder.cell_text("wmma", "clocks held back") == "–"  # not sampled
    assert window.ladder.cell_text("wmma", "SM MHz") == "–"
    md = export.ladder_markdown(window.store, "x")
    # (SM MHz, J/GEMM, GFLOP/J, sustained, power-limited, clocks held back: all dashes)
    assert "| 300.0 | 42.9% | cuBLAS FP16 | 30.3% | – | – | – | – | – | – | verified |" in md
    assert "⚠" not in md
    window.charts()["bars"].set_metric("GFLOP/J")  # nothing to show: zero-height bars
    np.testing.assert_array_equal(window.charts()["bars"].drawn_values(), 0.0)

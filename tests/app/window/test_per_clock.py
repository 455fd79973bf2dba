"""Issue 41 item 4 in the window: the ladder table shows a paired ratio with "±"; the bars
per GHz of SM clock are the view state's ``per_clock``, set by the C key, View ▸ Bars per
clock and the box beside the bars, each showing it; the CSV and the report carry the
interval and the per-clock figures; an older recording reads "unpaired"."""

from __future__ import annotations

import csv
import io

import synthetic_session as syn

from gemmscope.app.plots.ladder_bar_rows import TFLOPS_PER_GHZ, hover_text
from gemmscope.kernels.results.rows import UNPAIRED, Column


def _open(make_window, tmp_path, events):
    path = syn.write(tmp_path / "session.jsonl", events)
    window = make_window()
    window.open_recording(str(path))
    window.play_instant()
    window.flush_views()
    return window


def _csv(window, tmp_path) -> dict[str, dict[str, str]]:
    out = window.export_csv(tmp_path / "ladder.csv")
    return {r[Column.LEVEL]: r for r in csv.DictReader(io.StringIO(out.read_text("utf-8")))}


def test_the_ladder_table_and_csv_show_the_interval(make_window, tmp_path):
    window = _open(make_window, tmp_path, syn.with_pairs())
    paired = {e["level"]: e for e in syn.with_pairs() if e["type"] == "result"
              and e.get("paired")}
    text = window.ladder.cell_text("wmma", Column.PCT_OF_REFERENCE)
    assert text.startswith("42.9% ±")
    rows = _csv(window, tmp_path)
    wmma = rows["wmma"]
    assert wmma[Column.PCT_CI_LOW] == f"{paired['wmma']['pct_ci_low']:.2f}%"
    assert wmma[Column.PCT_CI_HIGH] == f"{paired['wmma']['pct_ci_high']:.2f}%"
    assert wmma[Column.PAIRS] == str(syn.PAIRS)
    assert wmma[Column.TFLOPS_PER_GHZ] == "170.9"  # 300 TFLOPS at 1755 MHz
    assert "3 of 40 pairs throttled" in wmma[Column.NOTES]
    assert UNPAIRED not in wmma[Column.NOTES]
    report = window.export_report(tmp_path / "report.md").read_text("utf-8")
    assert Column.PCT_EQUAL_CLOCKS in report and "| 42.9% ±" in report


def test_the_c_key_the_menu_and_the_box_set_one_per_clock_state(make_window, tmp_path):
    window = _open(make_window, tmp_path, syn.with_pairs())
    charts = window.views["charts"]
    assert charts.bars.shown_metric == "TFLOPS"
    window.shortcut_objects["C"].activated.emit()  # the C key
    window.flush_views()
    assert window.view_state.state.per_clock
    assert window.per_clock_action.isChecked() and charts.per_clock_box.isChecked()
    assert charts.bars.shown_metric == TFLOPS_PER_GHZ
    assert TFLOPS_PER_GHZ in charts.bars.axis_label()
    window.per_clock_action.trigger()  # View ▸ Bars per clock
    window.flush_views()
    assert not window.view_state.state.per_clock and not charts.per_clock_box.isChecked()
    assert charts.bars.shown_metric == "TFLOPS"
    charts.per_clock_box.setChecked(True)  # the box beside the bars
    window.flush_views()
    assert window.view_state.state.per_clock and window.per_clock_action.isChecked()
    assert charts.bars.shown_metric == TFLOPS_PER_GHZ
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert window.per_clock_action in view_menu.actions()


def test_an_old_recording_reads_unpaired(make_window, tmp_path):
    window = _open(make_window, tmp_path, syn.events())
    assert "±" not in window.ladder.cell_text("wmma", Column.PCT_OF_REFERENCE)
    rows = _csv(window, tmp_path)
    assert rows["wmma"][Column.NOTES].split("; ").count(UNPAIRED) == 1
    assert rows["wmma"][Column.PCT_CI_LOW] == "–"
    assert UNPAIRED not in rows["cublas_fp16"][Column.NOTES]  # (100% of itself)
    assert window.views["charts"].bars.drawn_intervals() == {}


def test_launch_clocks_in_a_recording_set_the_ratio_at_equal_clocks(make_window, tmp_path):
    # a launch_clocks event (record --launch-clocks) of wmma at the session's shape: the
    # clocks inside its launches and cuBLAS FP16's replace NVML's in the per-GHz figures
    M, N, K = syn.SHAPE
    clocks = {"type": "launch_clocks", "t": 500.0, "level": "wmma", "M": M, "N": N, "K": K,
              "tool": "ncu", "reference": "cublas_fp16", "launches": 20, "level_mhz": 1734.0,
              "level_us": 430.0, "ref_mhz": 1561.0, "ref_us": 185.0}
    window = _open(make_window, tmp_path, [*syn.with_pairs(), clocks])
    rows = _csv(window, tmp_path)
    wmma = rows["wmma"]
    assert (wmma[Column.LAUNCH_CLOCK], wmma[Column.REF_LAUNCH_CLOCK]) == ("1734", "1561")
    assert wmma[Column.TFLOPS_PER_GHZ] == f"{300.0 / 1.734:.1f}"  # not at NVML's 1755 MHz
    assert rows["cp_async"][Column.LAUNCH_CLOCK] == "–"  # no event of its own: NVML's
    window.view_state.set(per_clock=True)
    window.flush_views()
    bars = window.views["charts"].bars
    hover = hover_text(next(r for r in bars.rows if r.level == "wmma"))
    assert "1734 MHz in its launches" in hover and "cuBLAS at 1561 MHz in its launches" in hover

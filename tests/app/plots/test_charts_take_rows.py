"""Charts take rows (issue 44 item 2): every chart is handed what it draws (``set_rows``,
``set_data``) and draws it with no store at all; no chart module imports the store or
reads a ``store`` attribute (the views read it: app/views/chart_rows.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import gemmscope.app.plots as plots_package
from gemmscope.app.core.roofline_data import RooflineData
from gemmscope.app.plots.charts import StreamChart, StreamRows, SweepChart, SweepRows
from gemmscope.app.plots.device_bars import DeviceBars, DeviceResult, DeviceRows
from gemmscope.app.plots.ladder_bar_rows import BarRow, LadderRows
from gemmscope.app.plots.ladder_bars import LadderBars
from gemmscope.app.plots.roofline_chart import RooflineChart
from gemmscope.kernels.ladder import Shape
from gemmscope.kernels.results import Point, Roof

PLOTS = Path(plots_package.__path__[0])
SHAPE = Shape(2048, 1024, 512)


def bar(level: str, tflops: float, pct_ref: float | None = None) -> BarRow:
    return BarRow(level=level, precision="fp32", tflops=tflops, pct_ref=pct_ref,
                  pct_peak=None, shape=str(SHAPE), verified=True, gflop_per_j=None,
                  gflop_per_j_mode=None, sustained_tflops=None, burst_tflops=None, ratio=None,
                  throttled=None, color="#336699", reference=None)


def test_the_ladder_bars_draw_the_rows_they_are_handed(qtbot):
    chart = LadderBars()
    qtbot.addWidget(chart)
    chart.resize(900, 400)
    chart.set_rows(LadderRows((bar("naive", 0.5, 2.0), bar("tiled", 3.25, 13.0)), SHAPE,
                              "burst"))
    assert not chart.empty
    assert [r.level for r in chart.rows] == ["naive", "tiled"]
    assert chart.drawn_values() == pytest.approx([0.5, 3.25])
    assert chart.label_texts[1].splitlines()[1] == "13%"
    assert f"at {SHAPE.M}×{SHAPE.N}×{SHAPE.K}, burst" in chart.base_title
    # per clock is the rows' word too: the metric the bars draw follows it
    chart.set_rows(LadderRows(chart.data.rows, SHAPE, "burst", per_clock=True))
    assert chart.shown_metric == "TFLOPS/GHz"


def test_the_ladder_bars_say_the_rows_empty_text(qtbot):
    chart = LadderBars()
    qtbot.addWidget(chart)
    chart.set_rows(LadderRows((bar("naive", 0.5),), SHAPE, "burst"))
    chart.set_rows(LadderRows(empty_text="nothing at this shape: a sentence of the rows"))
    assert chart.empty and chart.rows == []
    assert chart.empty_text.toPlainText() == "nothing at this shape: a sentence of the rows"


def test_the_per_repeat_chart_draws_the_repeats_it_is_handed(qtbot):
    chart = StreamChart()
    qtbot.addWidget(chart)
    x, y = np.arange(1.0, 6.0), np.array([10.0, 11.0, 10.5, 10.75, 11.25])
    chart.set_rows(StreamRows(x, y, expected=5, level="tiled", shape=SHAPE,
                              name="Tiled (shared memory)", precision="fp32", mode="burst"))
    drawn_x, drawn_y = chart.curve.getData()
    assert list(drawn_x) == list(x) and list(drawn_y) == list(y)
    assert "Tiled (shared memory)" in chart.base_title and "FP32" in chart.base_title
    chart.set_rows(StreamRows(empty_text="select a level, says the view"))
    assert chart.empty and chart.empty_text.toPlainText() == "select a level, says the view"


def test_the_size_sweep_draws_the_curves_it_is_handed_in_their_order(qtbot):
    chart = SweepChart()
    qtbot.addWidget(chart)
    curves = {"tiled": (np.array([256.0, 512.0, 1024.0]), np.array([1.0, 2.0, 2.5])),
              "cublas_fp32": (np.array([256.0, 1024.0]), np.array([4.0, 9.0]))}
    styles = {"tiled": ("#ff0000", "s", False, 0), "cublas_fp32": ("#0000ff", "o", True, 1)}
    chart.set_rows(SweepRows(curves, styles))
    assert not chart.empty
    assert [e.text for e in chart.side_legend.entries] == ["tiled", "cublas_fp32"]
    assert chart.symbols == {"tiled": "s", "cublas_fp32": "o"}
    x, y = chart.curves["cublas_fp32"].getData()
    assert list(10 ** x) == pytest.approx([256.0, 1024.0]) and list(y) == [4.0, 9.0]


def test_the_gpu_bars_draw_the_results_they_are_handed(qtbot):
    chart = DeviceBars()
    qtbot.addWidget(chart)
    chart.set_rows(DeviceRows(
        ((0, "GPU 0 (H200)"), (1, "GPU 1 (H200)")), ("naive", "tiled"),
        (DeviceResult("naive", 0, 0.5, str(SHAPE), "fp32", None, True),
         DeviceResult("tiled", 0, 3.0, str(SHAPE), "fp32", 12.0, True),
         DeviceResult("tiled", 1, 3.5, str(SHAPE), "fp32", 14.0, False))))
    assert chart.drawn_values() == pytest.approx([0.5, 3.0, 3.5])
    assert [e.text for e in chart.side_legend.entries] == ["GPU 0 (H200)", "GPU 1 (H200)"]
    text = chart._describe(chart.rows[2]["x"], 0.0)
    assert text is not None and text.startswith("tiled on GPU 1 (H200)") and "NOT" in text


def test_the_roofline_draws_the_points_it_is_handed_and_names_them(qtbot):
    chart = RooflineChart()
    qtbot.addWidget(chart)
    point = Point("tiled", "fp32", 3.0, 40.0)
    chart.set_data(RooflineData(SHAPE, (point,), (Roof("fp32", 60.0, 4800.0),),
                                names=(("tiled", "Tiled (shared memory)"),)))
    assert chart.drawn_points == [point] and len(chart.drawn_roofs) == 1
    assert chart.describe(point).startswith("Tiled (shared memory) (FP32): 3 TFLOPS")


def store_reads(source: str) -> list[str]:
    """Where a chart module's source imports the store or reads a ``store`` attribute."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[-1] in ("store", "store_queries"):
            found.append(f"line {node.lineno}: imports {node.module}")
        elif isinstance(node, ast.ImportFrom) and \
                any(a.name in ("store", "store_queries", "SessionStore") for a in node.names):
            found.append(f"line {node.lineno}: imports {[a.name for a in node.names]}")
        elif isinstance(node, ast.Attribute) and node.attr == "store":
            found.append(f"line {node.lineno}: reads .store")
    return found


def test_no_chart_module_imports_or_reads_the_store():
    bad = {path.name: reads for path in sorted(PLOTS.glob("*.py"))
           if (reads := store_reads(path.read_text(encoding="utf-8")))}
    assert bad == {}


def test_the_store_check_sees_each_way_of_reaching_it():
    source = ("from ..core.store import Change\n"
              "from ..core import store_queries\n"
              "def f(self):\n    return self.store.levels\n"
              "from ..core.view_state import shape_text\n")
    assert store_reads(source) == ["line 1: imports core.store",
                                   "line 2: imports ['store_queries']",
                                   "line 4: reads .store"]

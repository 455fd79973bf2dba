"""The Charts tab fits every bundled recording from 1024x640 up, in normal and in stage
type: each chart shown keeps a plot tall enough to read (PLOT_MIN_PX) with a few plainly
labelled ticks, a chart with nothing to show (no sweep in the recording) takes no space,
the GPUs of a two-GPU recording stay one choice away where they have no room below the
bars, and the window keeps the size it was given."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication

from gemmscope.app.plots.chart_axes import number_text
from gemmscope.app.views.charts import GPUS, PLOT_MIN_PX
from gemmscope.app.window.main_window import bundled_session

ONE_GPU = bundled_session()
TWO_GPUS = ONE_GPU.with_name("h200x2-ladder.jsonl.gz") if ONE_GPU else None
SIZES = ((1024, 640), (1280, 720), (1920, 1080))


@pytest.fixture
def shown(qtbot, make_window):
    def show(path, size, stage):
        if path is None or not path.exists():
            pytest.skip("the bundled recordings are not in this build")
        window = make_window()
        assert window.open_recording(str(path))
        window.set_animated(False)
        window.play_instant()
        if stage:
            window.set_presentation(True, full_screen=False)
        window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        window.resize(*size)
        window.tabs.setCurrentWidget(window.views["charts"])
        settle(window)
        return window
    return show


def settle(window) -> None:
    for _ in range(3):
        QApplication.processEvents()
        window.flush_views()


def tick_labels(chart) -> list[tuple[float, str]]:
    """The left axis's labelled ticks as drawn: (pixels up from the plot's bottom, text)."""
    item = chart.getPlotItem()
    axis = item.getAxis("left")
    (_, _), (lo, hi) = item.vb.viewRange()
    size = item.vb.height()
    levels = axis.tickValues(lo, hi, size)
    if not levels:
        return []
    spacing, values = levels[0]
    texts = axis.tickStrings(values, axis.scale, spacing)
    return [((v - lo) / (hi - lo) * size, t) for v, t in zip(values, texts, strict=True)
            if lo <= v <= hi and t]


def problems(window, size) -> list[str]:
    """What does not fit: a chart shown with too short a plot, an axis with fewer than two
    labels (a log axis: more than six), a label in exponent form or over its neighbour, the window
    not at its size."""
    found = []
    view = window.views["charts"]
    if window.size().toTuple() != size:
        found.append(f"the window is {window.size().toTuple()}, not {size}")
    least = PLOT_MIN_PX["stage" if view.on_stage else "normal"]
    for name, chart in view.charts().items():
        if not chart.isVisible():
            continue
        plot_px = chart.getPlotItem().vb.height()
        if plot_px < least:
            found.append(f"{name}: a plot {plot_px:.0f} px high")
        if chart.empty:
            continue
        labels = tick_labels(chart)
        line = QFontMetricsF(chart.getPlotItem().getAxis("left").style["tickFont"]).height()
        log = chart.getPlotItem().getAxis("left").logMode
        if len(labels) < 2 or (log and len(labels) > 6):
            found.append(f"{name}: ticks {[t for _, t in labels]}")
        found += [f"{name}: tick {t!r}" for _, t in labels if "e+" in t or "e-" in t]
        found += [f"{name}: {a[1]!r} and {b[1]!r} {b[0] - a[0]:.0f} px apart"
                  for a, b in itertools.pairwise(labels) if b[0] - a[0] < line]
    return found


@pytest.mark.parametrize("stage", [False, True], ids=["normal", "stage"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("path", [ONE_GPU, TWO_GPUS], ids=["h200", "h200x2"])
def test_every_chart_shown_has_a_plot_to_read(shown, path, size, stage):
    window = shown(path, size, stage)
    assert problems(window, size) == []
    view = window.views["charts"]
    assert view.bars.isVisible()  # the ladder is never the one left out
    if path == TWO_GPUS:  # the GPUs below the bars, or one choice away, alone
        assert view.devices.isVisible() or view.metric_box.findText(GPUS) >= 0
        view.metric_box.setCurrentText(GPUS)
        settle(window)
        assert view.devices.isVisible() and not view.bars.isVisible()
        assert problems(window, size) == []
        view.metric_box.setCurrentIndex(0)
        settle(window)
        assert view.bars.isVisible()


def test_the_gpus_side_by_side_show_below_the_bars_where_there_is_room(shown):
    """1280x720, normal type: the two-GPU recording's bars and its GPUs, both readable."""
    window = shown(TWO_GPUS, (1280, 720), False)
    view = window.views["charts"]
    assert view.bars.isVisible() and view.devices.isVisible()
    assert view.devices.getPlotItem().vb.height() >= PLOT_MIN_PX["normal"]


def test_a_recording_without_a_sweep_gives_the_sweeps_room_to_the_stream(shown):
    """The two-GPU recording has no size sweep: no "No size sweep yet" panel; the
    per-repeat chart takes the row (where the row shows)."""
    window = shown(TWO_GPUS, (1920, 1080), False)
    view = window.views["charts"]
    assert view.sweep.empty and not view.sweep.isVisible()
    assert view.stream.isVisible() and view.stream.width() > 0.9 * view.bars.width()
    one = shown(ONE_GPU, (1920, 1080), False).views["charts"]
    assert one.sweep.isVisible() and not one.sweep.empty  # a recording with a sweep


def test_the_choice_of_the_gpus_is_offered_only_for_several_gpus(shown):
    view = shown(ONE_GPU, (1280, 720), False).views["charts"]
    assert view.metric_box.findText(GPUS) < 0


def test_a_power_of_ten_from_a_million_up_is_written_as_one():
    assert [number_text(v) for v in (0.5, 10.0, 1000.0, 100000.0)] == \
        ["0.5", "10", "1000", "100000"]
    assert number_text(1e7) == "10\u2077" and number_text(1e12) == "10\u00b9\u00b2"
    assert "e+" not in number_text(2.5e6)


def test_a_cublas_line_crosses_only_the_bars_of_its_precision(shown):
    """The bundled recording's FP32 kernel of the user's stands after the FP8 levels: its
    cuBLAS FP32 line is a segment over it alone, not one line across every bar between."""
    bars = shown(ONE_GPU, (1280, 720), False).views["charts"].bars
    precision = [row.precision for row in bars.rows]
    segments = bars.reference_segments()
    assert len(segments["fp32"]) >= 2  # the ladder's FP32 run and the user's kernel
    for prec, parts in segments.items():
        for lo, hi in parts:
            crossed = [precision[i] for i in range(len(precision)) if lo < i < hi]
            assert set(crossed) <= {prec}, (prec, crossed)


def test_every_bar_colour_is_in_the_legend(shown):
    """A level's bar is explained by a legend swatch of its colour: its precision's hue
    (a shade of it) or, for a kernel of the user's (own colour), its own entry."""
    from PySide6.QtGui import QColor

    from gemmscope.app.theme import precision_color

    charts = shown(ONE_GPU, (1280, 720), False).views["charts"]
    bars, store = charts.bars, charts.store  # (the chart has rows only; the view the store)
    swatches = {QColor(e.color).name() for e in bars.side_legend.entries if e.kind == "bar"}
    for row in bars.rows:
        hue = QColor(precision_color(row.precision)).name()
        own = QColor(row.color).name()
        level = store.level(row.level)
        assert (own in swatches) if level.is_user else (hue in swatches), row.level
    assert any(store.level(row.level).is_user for row in bars.rows)

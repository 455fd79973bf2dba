"""The charts tell the ladder's story: a colour per level (a hue per precision), legends
beside the data, value labels that never collide, an empty state instead of junk axes,
the selected level highlighted everywhere, TFLOPS on a log axis, every repeat shown."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import synthetic_session as syn
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFontMetricsF
from replay_seek import seek_whole

from gemmscope.app.plots.bar_label_layout import CLEAR_LINE_PX
from gemmscope.app.plots.chart_base import Chart
from gemmscope.app.theme import PRECISION_COLORS, PRESENTATION, min_text_pt
from gemmscope.app.window.main_window import bundled_session
from gemmscope.kernels.protocol.decoding import of


@pytest.fixture
def loaded(qtbot, make_window):
    """A window showing the Charts tab of a recording (the bundled H200 one by default)."""

    def load(path=None, size=(1400, 900)):
        window = make_window()
        window.resize(*size)
        window.open_recording(str(path or bundled_session()))
        window.play_instant()
        window.show()
        qtbot.waitExposed(window)
        window.tabs.setCurrentWidget(window.views["charts"])
        window.flush_views()
        return window

    return load


def test_every_level_has_its_own_colour_in_its_precisions_hue(loaded):
    window = loaded()
    bars, sweep = window.charts()["bars"], window.charts()["sweep"]
    colours = [b.color() for b in bars.bars.opts["brushes"]]
    assert len({c.name() for c in colours}) == len(bars.rows) >= 10
    for row, colour in zip(bars.rows, colours, strict=True):
        level = window.store.level(row.level)
        if level is not None and level.is_user:  # a user's kernel: a colour of its own
            continue
        turn = abs(colour.hslHue() - QColor(PRECISION_COLORS[row.precision]).hslHue())
        assert min(turn, 360 - turn) <= 2  # (hue is an angle: 359 is next to 0)
    looks = {}
    for level_id, curve in sweep.curves.items():
        pen = curve.opts["pen"]
        looks[level_id] = (pen.color().name(), sweep.symbols[level_id], pen.style())
        reference = window.store.level(level_id).is_reference
        assert (pen.style() == pen.style().DashLine) == reference, level_id
    assert len(set(looks.values())) == len(looks) >= 15  # no two curves look alike
    # the markers of the levels not selected: in one scatter item, each level's points
    marked = list(sweep.markers.data["data"])
    for level_id, curve in sweep.curves.items():
        if level_id != sweep.selected:
            assert marked.count(level_id) == len(curve.xData), level_id


@pytest.mark.parametrize("size", [(1400, 900), (1280, 720), (1920, 1080)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_legends_sit_outside_the_data_and_list_every_entry(loaded, size):
    """Beside the plot where the legend's column is narrow enough, else in rows below the
    x axis: never over the data, never cut, never half the chart's width."""
    window = loaded(size=size)
    for name in ("bars", "sweep"):
        chart = window.charts()[name]
        legend, vb = chart.side_legend, chart.getPlotItem().vb
        assert legend.isVisible() and legend.entries
        data = vb.sceneBoundingRect()
        drawn = legend.shown if legend.below else legend.entries
        if drawn != legend.entries:  # cut to its share: the rest named by the hover
            assert drawn[-1].text.endswith("more: hover a curve")
            assert len(drawn) - 1 + int(drawn[-1].text.split()[1]) == len(legend.entries)
            assert next(e for e in legend.entries if "(selected)" in e.text) in drawn
        for i in range(len(drawn)):
            entry = legend.mapRectToScene(legend.entry_rect(i))
            assert not entry.intersects(data), (name, i)  # nothing drawn over the data
            assert entry.right() <= chart.width() + 1 and entry.bottom() <= chart.height() + 1
        assert legend.sceneBoundingRect().right() <= chart.width() + 1
        last = legend.entry_rect(len(drawn) - 1)
        assert last.bottom() <= legend.size().height() + 1, name  # nothing cut off
        if legend.below:
            assert legend.size().height() <= Chart.BELOW_MOST * chart.height() + 1, name
        if not legend.below:
            assert legend.size().width() <= Chart.SIDE_SHARE * chart.width() + 1, name
        else:
            assert data.width() >= 0.6 * chart.width(), name  # the plot keeps the width
    sweep = window.charts()["sweep"]
    assert len(sweep.side_legend.entries) == len(sweep.curves)


@pytest.mark.parametrize("metric", ["TFLOPS", "% of cuBLAS (same precision)", "GFLOP/J",
                                    "burst vs sustained TFLOPS"])
@pytest.mark.parametrize("log", [True, False])
def test_value_labels_never_collide_and_stay_in_the_plot(loaded, metric, log):
    window = loaded(size=(1280, 720))
    charts = window.views["charts"]
    charts.set_log_axis(log)
    charts.metric_box.setCurrentText(metric)
    bars = charts.bars
    vb = bars.getPlotItem().vb.sceneBoundingRect()
    shown = [label_rect(bars, label) for label in bars.labels if label.isVisible()]
    assert len(shown) >= len(bars.rows) // 2
    for a, b in itertools.combinations(shown, 2):
        assert not a.intersects(b)
    for rect in shown:
        assert rect.top() >= vb.top() - 1  # the view leaves room above the bars


def test_a_value_label_is_measured_as_wide_as_it_is_laid_out_and_set_once_a_redraw(
        loaded, monkeypatch):
    """The bars choose a label's full text or its value alone by the width the full text
    would have, measured aside: as wide as the label laid out with it; placing the same
    values again sets no label's text (it set the full text, then the short one)."""
    bars = loaded(size=(1280, 720)).views["charts"].bars
    font = bars.labels[0].textItem.font()
    for label, text in zip(bars.labels, bars.label_texts, strict=True):
        label.setText(text)
        assert bars._text_width(text, font) == label.textItem.boundingRect().width()
    bars.place_labels()  # back to what the slots take
    assert any("\n" not in label.toPlainText() for label in bars.labels)  # some cut short
    sets: list[str] = []
    original = type(bars.labels[0]).setText
    monkeypatch.setattr(type(bars.labels[0]), "setText",
                        lambda self, text, *a, **k: sets.append(text) or original(
                            self, text, *a, **k))
    bars.place_labels()  # the same values: no label is laid out again
    assert sets == []


TWO_GPUS = bundled_session().with_name("h200x2-ladder.jsonl.gz")


@pytest.mark.parametrize("size", [(1920, 1080), (1400, 900), (1280, 720), (1024, 640)])
@pytest.mark.parametrize("chart", ["bars", "instruction_mix", "devices"])
def test_level_names_under_the_bars_never_overlap(loaded, size, chart):
    """Every name shown under the bars (the ladder's; the Code view's instruction mix)
    clears the names on its line (two, three or four alternating lines), lies inside the
    axis and the lines fit its height; at the smallest window some names are left out
    rather than drawn over each other, and at 1280x720 none is."""
    window = loaded(path=TWO_GPUS if chart == "devices" else None, size=size)
    view = window.views["code" if chart == "instruction_mix" else "charts"]
    window.tabs.setCurrentWidget(view)
    window.flush_views()
    plot = view.charts()[chart].getPlotItem()
    axis = plot.getAxis("bottom")
    metrics = QFontMetricsF(axis.style["tickFont"])
    (x_lo, x_hi), _ = plot.vb.viewRange()
    slot = plot.vb.width() / (x_hi - x_lo)
    [ticks] = axis._tickLevels
    lines = {i: text.count("\n") for i, text in ticks}
    names = {i: text.strip("\n") for i, text in ticks}
    # every ladder level the recording carries (a level added since it was made has none)
    assert len(names) == len(window.store.ladder_levels())
    assert (max(lines.values()) + 1) * metrics.lineSpacing() <= axis.height()
    spans = sorted((lines[i], (i - x_lo) * slot - metrics.horizontalAdvance(n) / 2,
                    (i - x_lo) * slot + metrics.horizontalAdvance(n) / 2)
                   for i, n in names.items() if n)
    for (la, _, right), (lb, left, _) in itertools.pairwise(spans):
        assert la != lb or left >= right, (size, spans)
    assert spans[0][1] >= 0 and max(r for _, _, r in spans) <= plot.vb.width() + 1
    if size >= (1280, 720):
        assert all(names.values())


def test_an_empty_charts_message_wraps_inside_the_plot(qtbot, make_window):
    """A window with nothing loaded yet: the sweep's message, longer than its plot is
    wide at 1280x720, wraps onto centred lines inside it instead of being cut. (A
    recording without a sweep shows no sweep: tests/app/views/test_charts_fit.py.)"""
    window = make_window()
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    window.flush_views()
    sweep = window.charts()["sweep"]
    assert sweep.empty and sweep.isVisible() and sweep.empty_text.isVisible()
    text = sweep.empty_text.textItem
    vb = sweep.getPlotItem().vb
    assert text.boundingRect().width() <= vb.width()
    assert text.boundingRect().height() > 1.5 * QFontMetricsF(text.font()).lineSpacing()


def label_rect(bars, label) -> QRectF:
    """Where a value label is drawn, in scene pixels: its text's size, its anchor (the
    middle of its bottom edge) at its position in the view."""
    at = bars.getPlotItem().vb.mapViewToScene(label.pos())
    size = label.textItem.boundingRect()
    return QRectF(at.x() - size.width() / 2, at.y() - size.height(), size.width(),
                  size.height())


def test_empty_charts_say_so_instead_of_drawing_axes(qtbot, make_window):
    window = make_window()
    window.show()
    window.flush_views()
    for name in ("bars", "stream", "sweep"):
        chart = window.charts()[name]
        item = chart.getPlotItem()
        assert chart.empty and chart.empty_text.isVisible(), name
        assert chart.empty_text.toPlainText().startswith("No ")
        assert not item.getAxis("left").isVisible() and not item.getAxis("bottom").isVisible()


def test_the_sweep_axis_starts_afresh_when_a_replay_restarts(loaded, synthetic_file):
    window = loaded(synthetic_file)
    window.replay.pause()
    sweep = window.charts()["sweep"]
    seek_whole(window, 0.0)
    assert sweep.empty and sweep.size_axis.sizes == []
    seek_whole(window, window.replay.clock.duration_s)
    assert not sweep.empty
    (x0, x1), (_y0, y1) = sweep.getPlotItem().vb.viewRange()
    lo, hi = np.log10(min(syn.SWEEP)), np.log10(max(syn.SWEEP))
    assert x0 < lo and x1 > hi and (x1 - x0) < 2 * (hi - lo)  # the data's range, no more
    assert sweep.size_axis.sizes == sorted(syn.SWEEP)
    assert y1 < 10 * max(syn.SWEEP.values())


def test_log_axis_is_a_toggle_and_a_preference(loaded, make_window, synthetic_file, tmp_path):
    window = loaded(synthetic_file)
    charts = window.views["charts"]
    bars = charts.bars
    assert charts.log_box.isChecked() and bars.is_log()  # the default tells the story
    np.testing.assert_allclose(bars.drawn_values(), list(syn.LADDER_TFLOPS.values()))
    axis = bars.getPlotItem().getAxis("left")
    (_, _), (y0, y1) = bars.getPlotItem().vb.viewRange()
    strings = axis.tickStrings(axis.tickValues(y0, y1, 300)[0][1], 1, 1)
    assert {"1", "10", "100"} <= set(strings)  # plain numbers, not powers or prefixes
    charts.log_box.setChecked(False)  # as the user clicks it
    assert not bars.is_log() and window.prefs.log_axis is False
    np.testing.assert_allclose(bars.drawn_values(), list(syn.LADDER_TFLOPS.values()))
    assert "(x" not in axis.labelString()  # no SI-prefix scaling such as (x0.001)
    window.prefs.sync()
    again = make_window(tmp_path / "prefs.ini")
    assert not again.views["charts"].log_box.isChecked()
    assert not again.views["charts"].bars.log_axis


def test_the_selected_level_is_highlighted_in_every_chart(loaded, synthetic_file):
    window = loaded(synthetic_file)
    window.select_level(syn.SWEEP_LEVEL)
    window.flush_views()
    bars, sweep = window.charts()["bars"], window.charts()["sweep"]
    levels = [row.level for row in bars.rows]
    assert bars.band.isVisible()
    assert bars.band.opts["x"][0] == levels.index(syn.SWEEP_LEVEL)
    curve = sweep.curves[syn.SWEEP_LEVEL]
    others = [c for k, c in sweep.curves.items() if k != syn.SWEEP_LEVEL]
    assert all(curve.opts["pen"].widthF() > c.opts["pen"].widthF() for c in others)
    assert all(curve.zValue() > c.zValue() for c in others)
    telemetry = window.views["telemetry"]  # its plots are made when its tab is first shown
    window.tabs.setCurrentWidget(telemetry)
    window.flush_views()
    colours = telemetry.bands["power"].colors
    for w, colour in zip(telemetry.windows, colours, strict=True):
        assert colour.endswith("99") == (w.level == syn.SWEEP_LEVEL)


def test_per_repeat_chart_shows_every_repeat_once_in_presentation(loaded, synthetic_file,
                                                                  qtbot):
    window = loaded(synthetic_file, size=(1280, 720))
    window.set_presentation(True, full_screen=False)
    try:
        check_every_repeat_once(window)
    finally:
        window.set_presentation(False)  # (the application's font is global)


def check_every_repeat_once(window) -> None:
    window.flush_views()
    stream = window.charts()["stream"]
    x, y = stream.shown
    assert len(x) == syn.REPEATS
    item = stream.getPlotItem()
    assert item.width() <= stream.width() + 1  # a long title no longer widens the plot
    (x0, x1), (y0, y1) = item.vb.viewRange()
    assert x0 < x.min() and x1 > x.max() and y0 < y.min() and y1 > y.max()
    axis = item.getAxis("bottom")
    ticks = [v for level in axis.tickValues(x0, x1, item.vb.width()) for v in level[1]]
    assert len(ticks) == len(set(ticks))  # each tick (and its label) once
    for i in (0, len(x) - 1):  # the hover reads the value the point sits at
        stream.hover.show_at(float(x[i]), float(y[i]))
        assert f"repeat {int(x[i])}: {y[i]:.4g} TFLOPS" == stream.hover.text
        scene = item.vb.mapViewToScene(QPointF(float(x[i]), float(y[i])))
        assert item.vb.sceneBoundingRect().contains(scene)


def test_the_sweep_redraws_a_turn_after_the_bars_and_a_picture_waits_for_it(
        make_window, synthetic_file):
    from gemmscope.kernels.protocol.recording import read_session
    from gemmscope.kernels.protocol.timeline import Timeline

    window = make_window()
    charts = window.views["charts"]
    line = Timeline()
    for event in read_session(synthetic_file).events:
        window.store.handle(line.place(of(event)))
    charts.refresh(window.store.take_changes())
    assert charts.bars.rows and not charts.sweep.curves  # the sweep: on the next turn
    window.flush_views()  # a picture settles every view first
    assert charts.sweep.curves


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_cublas_line_runs_through_a_value_labels_text(loaded, size):
    """A cuBLAS line never runs through a label's numbers (it did, dashed), also on stage:
    the label clears it, or the line passes behind the label's opaque box."""
    window = loaded(size=size)
    for presentation in (False, True):
        window.set_presentation(presentation, full_screen=False)
        window.resize(*size)
        window.flush_views()
        bars = window.charts()["bars"]
        vb = bars.getPlotItem().vb
        for prec, segments in bars.reference_segments().items():
            _xs, ys = bars.references[prec].getData()
            # each piece as drawn: a line of one precision stops at another's bars
            for x0, x1 in segments:
                a = vb.mapViewToScene(QPointF(x0, ys[0]))
                b = vb.mapViewToScene(QPointF(x1, ys[0]))
                band = QRectF(a.x(), a.y() - 1, b.x() - a.x(), 2)
                for label in bars.labels:
                    if label.isVisible() and label_rect(bars, label).intersects(band):
                        assert label.fill.color().alpha() == 255, label.toPlainText()


# (and short: a talk's caption band under the chart)
STAGE_SIZES = [(1280, 720), (1366, 768), (1920, 1080), (1366, 560), (1280, 520)]


@pytest.mark.parametrize("log", [True, False], ids=["log", "linear"])
@pytest.mark.parametrize("size", STAGE_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_value_label_is_shown_by_its_bar_on_stage(qtbot, loaded, size, log):
    """On stage each bar keeps its value label (the selected level's too), sitting on its
    bar: labels in a smaller type side by side, rather than raised over their neighbours
    or hidden (they floated far over the bars on the log axis), and a label under a
    cuBLAS line stays by its bar rather than jumping over the line (short FP32 bars had
    their labels 30-45 px over their tops, in a talk's first scene)."""
    window = loaded(size=size)
    window.set_presentation(True, full_screen=False)
    window.resize(*size)
    window.views["charts"].set_log_axis(log)
    # on stage the view gets the window (the panels hide), once the window is laid out
    qtbot.waitUntil(lambda: window.views["charts"].width() >= 0.95 * size[0])
    window.flush_views()
    bars = window.charts()["bars"]
    vb = bars.getPlotItem().vb
    lines = [(lo, hi, vb.mapViewToScene(QPointF(0, y)).y()) for lo, hi, y in bars._ref_spans]
    assert lines and len(bars.labels) == len(bars.rows) >= 10
    for i, label in enumerate(bars.labels):
        name = bars.rows[i].level
        assert label.isVisible(), name
        bottom = label_rect(bars, label).bottom()
        bar_top = vb.mapViewToScene(QPointF(i, float(bars.label_tops[i]))).y()
        assert -1 <= bar_top - bottom <= CLEAR_LINE_PX + 4, (name, bar_top - bottom)
        assert label.textItem.font().pointSizeF() >= min_text_pt(PRESENTATION) - 0.01
    # every label says the same things: its percentage on all or on none (one narrow
    # value kept "95%" under it among bars that showed their value alone)
    assert len({label.toPlainText().count("\n") for label in bars.labels}) == 1


def test_the_instruction_mix_legend_never_covers_a_bar(loaded):
    window = loaded(size=(1280, 720))
    mix = window.views["code"].mix
    window.named_widget("code")
    window.flush_views()
    legend = mix.getPlotItem().legend
    assert legend.items
    data = mix.getPlotItem().vb.sceneBoundingRect()
    assert not legend.sceneBoundingRect().intersects(data)


def test_a_title_fits_again_when_new_ticks_widen_the_axis(qtbot):
    """A chart's title is cut to its room (the chart's width less the left axis's): tick
    labels that widen the axis, with no resize of the chart, cut it again; it never
    widens the plot past the widget (the per-repeat chart lost its right side)."""
    chart = Chart("Per-repeat TFLOPS — a level with a long name at 4096³ (burst, FP32)")
    qtbot.addWidget(chart)
    chart.resize(420, 300)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_title_text(chart.base_title)
    item = chart.getPlotItem()
    item.plot([0, 1, 2], [0.1, 0.2, 0.3])
    qtbot.waitUntil(lambda: item.getAxis("left").width() > 0)
    narrow = item.getAxis("left").width()
    item.getAxis("left").setWidth(narrow + 120)  # as wide tick labels do
    qtbot.waitUntil(lambda: item.getAxis("left").width() > narrow)
    qtbot.waitUntil(lambda: item.sceneBoundingRect().width() <= chart.width() + 1)
    assert item.titleLabel.sceneBoundingRect().right() <= chart.width() + 1
    assert chart.toolTip()  # the whole title, where it is cut

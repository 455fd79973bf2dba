"""The roofline names its points (issue 43 item 6): every level of the bundled recording
has its name beside its point, no two names overlap, no name covers a point, every name
lies inside the plot, on screen and on stage at 1280x720 and 1920x1080 (the sizes of the
exports; an SVG export holds every name); the names move with a resize; the layout itself
(point_label_layout.py) keeps clear of points and fixed texts and stacks a column's names
in their points' order."""

from __future__ import annotations

import math
from itertools import combinations

import pytest
from PySide6.QtCore import QLineF, QPointF, QRectF, QSizeF
from PySide6.QtGui import QFontInfo

from gemmscope.app.core.roofline_data import RooflineData, roofline_data
from gemmscope.app.plots.point_label_layout import leader_end, lines_cross, place_labels
from gemmscope.app.plots.roofline_chart import RooflineChart
from gemmscope.app.theme import NORMAL, PRESENTATION, STAGE_TEXT_PX
from gemmscope.app.window.main_window import bundled_session

SIZES = ((1280, 720), (1920, 1080))


@pytest.fixture
def bundled_data(make_window) -> RooflineData:
    path = bundled_session()
    if path is None:
        pytest.skip("the bundled recording is not in this build")
    window = make_window()
    assert window.open_recording(path)
    window.set_animated(False)
    window.play_instant()
    data = roofline_data(window.store)
    assert len(data.points) > 10  # (the ladder and its references)
    return data


@pytest.fixture
def chart_at(qtbot):
    """A roofline chart shown at a size in a theme with the data; hidden, then closed,
    after the test (a shown pyqtgraph chart closed as it is crashes in setViewport)."""
    made: list[RooflineChart] = []

    def make(data: RooflineData, size: tuple[int, int], theme) -> RooflineChart:
        chart = RooflineChart()
        made.append(chart)
        chart.apply_theme(theme)
        chart.resize(*size)
        chart.show()
        qtbot.waitExposed(chart)
        chart.set_data(data)
        return chart

    yield make
    for chart in made:
        chart.hide()
        chart.close()


def dot_rects(chart: RooflineChart) -> dict[str, QRectF]:
    r = chart._point_px() / 2
    out = {}
    for p in chart.drawn_points:
        c = chart._to_px(math.log10(p.ai), math.log10(p.tflops))
        out[p.level] = QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r)
    return out


def layout_faults(chart: RooflineChart) -> list[str]:
    vb = chart.getPlotItem().vb
    plot = QRectF(0, 0, vb.width(), vb.height())
    faults = [f"{level}: no name" for level in chart.unlabelled]
    places = {level: where.rect for level, where in chart.label_places.items()}
    faults += [f"{level}: not named" for level in (p.level for p in chart.drawn_points)
               if level not in places and level not in chart.unlabelled]
    faults += [f"{a} and {b} overlap" for (a, ra), (b, rb) in combinations(places.items(), 2)
               if ra.intersects(rb)]
    dots = dot_rects(chart)
    faults += [f"{a}'s name covers {b}'s point" for a, ra in places.items()
               for b, rb in dots.items() if ra.intersects(rb)]
    faults += [f"{a}: outside the plot" for a, ra in places.items() if not plot.contains(ra)]
    return faults


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("theme", (NORMAL, PRESENTATION), ids=lambda t: t.name)
def test_every_point_is_named_and_no_name_overlaps(chart_at, bundled_data, size, theme):
    chart = chart_at(bundled_data, size, theme)
    assert layout_faults(chart) == []
    shown = {label.toPlainText() for label in chart.point_labels if label.isVisible()}
    assert shown == {p.level for p in bundled_data.points}  # (the ids the ladder shows)


def test_names_on_stage_are_at_least_the_stage_type(chart_at, bundled_data):
    chart = chart_at(bundled_data, (1280, 720), PRESENTATION)
    label = next(label for label in chart.point_labels if label.isVisible())
    assert QFontInfo(label.textItem.font()).pixelSize() >= STAGE_TEXT_PX


def test_names_are_placed_again_after_a_resize(qtbot, chart_at, bundled_data):
    chart = chart_at(bundled_data, (1920, 1080), NORMAL)
    before = {k: QRectF(v.rect) for k, v in chart.label_places.items()}
    chart.resize(1024, 640)
    qtbot.waitUntil(lambda: {k: v.rect for k, v in chart.label_places.items()} != before)
    assert layout_faults(chart) == []


def test_a_column_of_close_points_gets_names_in_their_order_clear_of_each_other():
    # eight points 4 px apart at one x (one precision's levels at one intensity)
    points = [QPointF(300, 200 + 4 * i) for i in range(8)]
    sizes = [QSizeF(60 + 7 * i, 14) for i in range(8)]
    fixed = [QRectF(320, 150, 80, 14)]  # a text already there
    placed = place_labels(points, sizes, 5.0, QRectF(0, 0, 800, 600), fixed)
    assert all(where is not None for where in placed)
    rects = [where.rect for where in placed if where is not None]
    assert not any(a.intersects(b) for a, b in combinations(rects, 2))
    assert not any(r.intersects(f) for r in rects for f in fixed)
    dots = [QRectF(p.x() - 5, p.y() - 5, 10, 10) for p in points]
    assert not any(r.intersects(d) for r in rects for d in dots)
    leaders = [QLineF(p, leader_end(p, where.rect))
               for p, where in zip(points, placed, strict=True)
               if where is not None and where.leader]
    assert leaders  # (eight names cannot all sit beside their points)
    assert not any(lines_cross(a, b) for a, b in combinations(leaders, 2))


def test_a_name_with_no_free_place_is_left_out():
    # the plot is one label high and the other point's name takes the only place
    points = [QPointF(50, 10), QPointF(150, 10)]
    placed = place_labels(points, [QSizeF(80, 18)] * 2, 4.0, QRectF(0, 0, 200, 20))
    assert placed[0] is not None and placed[1] is None


@pytest.mark.parametrize("theme", (NORMAL, PRESENTATION), ids=lambda t: t.name)
def test_the_svg_export_names_every_point(chart_at, bundled_data, tmp_path, theme):
    from gemmscope.app.window.exports import export_chart

    chart = chart_at(bundled_data, (1280, 720), theme)
    svg = export_chart(chart, tmp_path / "roofline.svg", size=(1280, 720)).read_text(
        encoding="utf-8")
    assert [p.level for p in bundled_data.points if f">{p.level}<" not in svg] == []


def test_two_labels_whose_leaders_cross_trade_places():
    from gemmscope.app.plots.point_label_layout import PlacedLabel, faults_of, untangle

    points = [QPointF(100, 100), QPointF(100, 140)]
    # the upper point's name below the lower one's: the two leaders cross
    placed = [PlacedLabel(QRectF(140, 150, 60, 14), True),
              PlacedLabel(QRectF(140, 86, 80, 14), True)]
    assert faults_of(points, placed) == 1
    out = untangle(points, placed, 4.0, QRectF(0, 0, 400, 300), [])
    assert faults_of(points, out) == 0
    assert [w.rect.size() for w in out if w is not None] == [QSizeF(60, 14), QSizeF(80, 14)]
    assert out[0].rect.top() < out[1].rect.top()  # each name now on its point's side


def test_a_name_a_leader_runs_through_moves_off_it():
    from gemmscope.app.plots.point_label_layout import PlacedLabel, faults_of, untangle

    points = [QPointF(100, 100), QPointF(160, 130)]
    placed = [PlacedLabel(QRectF(220, 93, 60, 14), True),  # a long leader, left to right
              PlacedLabel(QRectF(140, 94, 40, 12), True)]  # the other name across it
    assert faults_of(points, placed) == 1
    out = untangle(points, placed, 4.0, QRectF(0, 0, 400, 300), [])
    assert faults_of(points, out) == 0 and all(w is not None for w in out)
    rects = [w.rect for w in out if w is not None]
    assert not rects[0].intersects(rects[1])


@pytest.mark.parametrize("size", ((1280, 720), (1270, 330)), ids=lambda s: f"{s[0]}x{s[1]}")
def test_untangling_keeps_every_name_and_never_adds_faults(chart_at, bundled_data, size,
                                                           monkeypatch):
    from gemmscope.app.plots import point_label_layout as layout

    def faults(chart: RooflineChart) -> int:
        points = [chart._to_px(math.log10(p.ai), math.log10(p.tflops))
                  for p in chart.drawn_points]
        return layout.faults_of(points, [chart.label_places.get(p.level)
                                         for p in chart.drawn_points])

    chart = chart_at(bundled_data, size, PRESENTATION)
    after, unnamed = faults(chart), list(chart.unlabelled)
    monkeypatch.setattr(layout, "UNTANGLE_PASSES", 0)  # the greedy placement alone
    chart.place_point_labels()
    before = faults(chart)
    assert after < before and unnamed == chart.unlabelled

"""The telemetry view's labels: run labels that never overlap, keep to the plot's edges
and hide behind a pinned one, and axis tick labels far enough apart on stage. Positions
are read back from the plot items."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import synthetic_session as syn


def test_run_labels_do_not_overlap_and_show_when_zoomed_in(show_telemetry, synthetic_file):
    _, view = show_telemetry(synthetic_file)
    vb = view.plots["runs"].getViewBox()

    def shown_spans():
        px = vb.viewPixelSize()[0]
        return [(i % 2, lb.pos().x(), lb.pos().x() + lb.textItem.boundingRect().width() * px)
                for i, lb in enumerate(view.run_labels) if lb.isVisible()]

    spans = shown_spans()
    assert 0 < len(spans) < len(view.run_labels)  # short runs at this zoom: some hidden
    left, right = vb.viewRange()[0]
    assert all(left - 1e-9 <= a and b <= right + 1e-9 for _, a, b in spans)  # none cut
    for line in (0, 1):
        mine = [s for s in spans if s[0] == line]
        assert all(a[2] <= b[1] for a, b in itertools.pairwise(mine))
    # a label hidden at this zoom (which one depends on the window's width) shows up
    # once the view is zoomed in on its run
    hidden = next(i for i, lb in enumerate(view.run_labels) if not lb.isVisible())
    w = view.windows[hidden]
    vb.setXRange(w.start_s - 0.01, w.end_s + 2.0, padding=0)
    assert view.run_labels[hidden].isVisible()


def _run(run_id, t0, t1, level):
    """A verified fp32 run of ``level`` at 64³ from ``t0`` to ``t1`` s: its two events."""
    where = {"id": run_id, "level": level, "M": 64, "N": 64, "K": 64}
    return [{"type": "run_start", "t": t0, **where, "dtype": "fp32", "precision": "fp32",
             "repeats": 2, "warmup": 0},
            {"type": "result", "t": t1, **where, "dtype": "fp32", "median_ms": 1.0,
             "tflops": 1.0, "verified": True, "rel_err": 0.0, "repeats": 2}]


def test_a_long_run_keeps_its_label_at_the_left_edge(show_telemetry, tmp_path):
    events = [syn.header(), *_run(1, 1.0, 50.0, "naive"), *_run(2, 50.0, 51.0, "coalesced")]
    _, view = show_telemetry(syn.write(tmp_path / "made.jsonl", events))
    view.plots["runs"].getViewBox().setXRange(20.0, 40.0, padding=0)
    label = view.run_labels[0]
    assert label.isVisible() and label.pos().x() == 20.0  # naive began before the view
    view.plots["runs"].getViewBox().setXRange(0.0, 60.0, padding=0)
    assert label.pos().x() == 1.0


def test_labels_hide_behind_a_pinned_label(show_telemetry, tmp_path):
    events = [syn.header(), *_run(1, 1.0, 50.0, "naive"), *_run(2, 50.0, 51.0, "coalesced"),
              *_run(3, 51.0, 52.0, "smem_tiled")]
    _, view = show_telemetry(syn.write(tmp_path / "made.jsonl", events))
    # the view's left edge as pyqtgraph computes it (a numpy number) pins naive's label
    view.plots["runs"].getViewBox().setXRange(np.float64(20.0), 2000.0, padding=0)
    naive, _, smem = view.run_labels
    assert naive.isVisible() and naive.pos().x() == 20.0
    assert not smem.isVisible()  # on naive's line, under its pinned label


def test_the_run_the_view_is_on_keeps_its_label_over_a_sliver_of_the_run_before(
        show_telemetry, tmp_path):
    # naive and smem_tiled share a line of labels; the view is on smem_tiled's run (a
    # talk's scene zoomed to it) with the last 0.05 s of naive's at its left edge
    events = [syn.header(), *_run(1, 0.0, 10.0, "naive"), *_run(2, 10.0, 10.05, "coalesced"),
              *_run(3, 10.05, 20.0, "smem_tiled")]
    _, view = show_telemetry(syn.write(tmp_path / "made.jsonl", events))
    view.plots["runs"].getViewBox().setXRange(9.95, 20.5, padding=0)
    naive, _, smem = view.run_labels
    assert smem.isVisible() and smem.pos().x() == pytest.approx(10.05)
    assert not naive.isVisible()  # its sliver yields the line to the run in view


def _labels(axis):
    """The tick labels an axis draws: (text, its rectangle), as pyqtgraph lays them out."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(text, rect) for rect, _flags, text in specs[2]] if specs else []


@pytest.mark.parametrize("size", [(1280, 720), (1366, 768), (1920, 1080)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_on_stage_each_telemetry_axis_labels_several_ticks_apart(qtbot, show_telemetry,
                                                                 size):
    """On stage a telemetry strip is short: its axis labels at least two ticks (the
    clocks' three) in the stage's smallest type, each clear of the next (one label each
    was left at 1280x720: pyqtgraph dropped labels for the share of the axis they took)."""
    from PySide6.QtGui import QFontInfo

    from gemmscope.app.theme import STAGE_TEXT_PX
    from gemmscope.app.window.main_window import bundled_session

    window, view = show_telemetry(str(bundled_session()))
    window.set_presentation(True, full_screen=False)
    window.resize(*size)
    qtbot.waitUntil(lambda: view.width() >= 0.95 * size[0])
    window.flush_views()
    for name in ("clocks", "power", "temperature"):
        assert view.plots[name].isVisible(), name
        axis = view.plots[name].getPlotItem().getAxis("left")
        labels = _labels(axis)
        assert len(labels) >= (3 if name == "clocks" else 2), (name, labels)
        rects = sorted((rect for _, rect in labels), key=lambda r: r.top())
        assert all(a.bottom() <= b.top() + 1 for a, b in itertools.pairwise(rects)), name
        assert QFontInfo(axis.style["tickFont"]).pixelSize() >= STAGE_TEXT_PX - 0.5


def test_a_run_label_at_the_right_edge_moves_in_rather_than_being_cut(show_telemetry,
                                                                     synthetic_file):
    """The last run of a view had its label cut at the plot's right edge (the gallery's
    Telemetry tab: "triton_matmul 8192×8192" of 8192×8192×8192)."""
    _, view = show_telemetry(synthetic_file)
    vb = view.plots["runs"].getViewBox()
    last = len(view.windows) - 1
    w = view.windows[last]
    vb.setXRange(w.start_s - 0.5, w.start_s + 0.02, padding=0)  # its start by the edge
    label = view.run_labels[last]
    assert label.isVisible()
    px = vb.viewPixelSize()[0]
    left, right = vb.viewRange()[0]
    assert label.pos().x() + label.textItem.boundingRect().width() * px <= right + 1e-9
    assert label.pos().x() >= left

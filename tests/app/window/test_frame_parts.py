"""Redraws keep time with the window's frames (issue #12, "Fluid"): a burst of store
changes is one redraw, a costly redraw comes in parts (one a frame, right after a paint),
and the parts add up to the picture a redraw in one go gives."""

from __future__ import annotations

import numpy as np
import synthetic_session as syn
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from gemmscope.app.views.frame_clock import FRAME_TICK_MS, frame_ticks
from gemmscope.app.window.redraw import RedrawThrottle
from gemmscope.kernels.protocol.decoding import of


def _replayed(window) -> None:
    """The synthetic session into the store, as a replay's ticks would bring it."""
    for event in syn.events():
        window.handle(of(event))


def _curves(view) -> dict[str, tuple[list[float], list[float]]]:
    return {f: (list(c.xData if c.xData is not None else []),
                list(c.yData if c.yData is not None else []))
            for f, c in view.curves.items()}


def test_a_burst_of_changes_in_one_frame_is_one_redraw(qtbot, make_window):
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    window.flush_views()
    calls = []
    window.throttle.callback = lambda: calls.append(window.store.take_changes())
    for i in range(200):  # 200 repeats before the event loop turns once
        window.handle(of({"type": "repeat", "level": "naive", "M": 64, "N": 64, "K": 64,
                       "t": 1.0 + i * 1e-4, "i": i, "ms": 1.0, "tflops": 1.0}))
    qtbot.waitUntil(lambda: len(calls) >= 1)
    qtbot.wait(100)  # a few frames: nothing more came, so nothing more is drawn
    assert len(calls) == 1 and calls[0]


def _shown_widget(qtbot) -> QWidget:
    widget = QWidget()
    widget.resize(200, 100)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


class StoppedClock:
    """The throttle's clock, read as a test sets it (ms): what it decides from the time
    since the last frame does not then depend on how loaded the machine is."""

    def __init__(self) -> None:
        self.ms = 1000.0

    def nsecsElapsed(self) -> int:
        return int(self.ms * 1e6)


def test_a_due_redraw_waits_for_the_next_frame_and_follows_its_paint(qtbot):
    widget = _shown_widget(qtbot)
    order: list[str] = []

    class Paints(QObject):
        def eventFilter(self, obj, event) -> bool:
            if event.type() == QEvent.Type.UpdateRequest:
                order.append("paint")
            return False

    paints = Paints()
    widget.installEventFilter(paints)
    throttle = RedrawThrottle(lambda: order.append("redraw"), interval_ms=1000)
    clock = throttle._clock = StoppedClock()
    throttle.follow_frames(widget)
    # a frame: the frame clock ticks and the window paints (sent, not posted: no event
    # loop turns between the steps below, so no timer can run between them)
    frame_ticks().ticked.emit()
    QApplication.sendEvent(widget, QEvent(QEvent.Type.UpdateRequest))
    assert order == ["paint"]
    order.clear()
    clock.ms += 5  # within the frame
    throttle.poke()  # due at once, but frames are coming: it waits for the next one
    assert order == [] and throttle._timer.isActive()
    assert throttle._timer.interval() >= FRAME_TICK_MS  # its fallback: a frame later
    clock.ms += FRAME_TICK_MS
    frame_ticks().ticked.emit()
    QApplication.sendEvent(widget, QEvent(QEvent.Type.UpdateRequest))  # the next frame
    assert order == ["paint"]  # the redraw is queued behind the paint, not run in it
    qtbot.waitUntil(lambda: "redraw" in order)
    throttle.stop()
    assert order[:2] == ["paint", "redraw"]  # (the window may paint again after)


def test_a_paint_no_frame_tick_asked_for_is_not_a_frame(qtbot):
    # the replay's time slider and a redraw's own repaint paint the window at any moment:
    # a redraw that followed them ran into the next tick, and that frame came late
    widget = _shown_widget(qtbot)
    fired: list[int] = []
    throttle = RedrawThrottle(lambda: fired.append(1), interval_ms=1000)
    throttle.follow_frames(widget)
    frame_ticks().ticked.emit()
    QApplication.sendEvent(widget, QEvent(QEvent.Type.UpdateRequest))  # a frame
    throttle.flush()  # a part drawn after it
    throttle.poke(soon=True)  # parts left: the next one after the next frame
    QApplication.sendEvent(widget, QEvent(QEvent.Type.UpdateRequest))  # no tick before it
    QApplication.processEvents()
    assert fired == [1]
    throttle._due_ms -= 100.0  # the part is due now (its time set back, not waited for)
    QApplication.sendEvent(widget, QEvent(QEvent.Type.UpdateRequest))  # still no tick
    QApplication.processEvents()
    assert fired == [1]
    frame_ticks().ticked.emit()
    QApplication.sendEvent(widget, QEvent(QEvent.Type.UpdateRequest))  # the next frame
    QApplication.processEvents()
    assert fired == [1, 1]
    throttle.stop()


def test_the_telemetry_tab_is_drawn_a_plot_a_frame_and_ends_as_one_redraw(
        qtbot, make_window):
    parts = make_window()
    parts.show()
    view = parts.named_widget("telemetry")
    qtbot.waitExposed(view)
    _replayed(parts)
    parts.throttle.flush()  # the ladder table, then (next part) the tab
    qtbot.waitUntil(lambda: view.parts_left())
    left = []
    qtbot.waitUntil(lambda: left.append(view.parts_left()) or not parts._parts_left(),
                    timeout=5000)
    assert left.count(True) >= 2  # drawn over several frames, not in one

    whole = make_window()
    whole.show()
    other = whole.named_widget("telemetry")
    qtbot.waitExposed(other)
    _replayed(whole)
    whole.flush_views()  # everything in one go
    assert not other.parts_left()
    assert _curves(view) == _curves(other)
    assert [lb.toPlainText() for lb in view.run_labels] == \
        [lb.toPlainText() for lb in other.run_labels]
    for name in view.bands:
        np.testing.assert_array_equal(view.bands[name].spans, other.bands[name].spans)
    assert view.plots["runs"].viewRange()[0] == other.plots["runs"].viewRange()[0]


def test_the_charts_tab_draws_the_sweep_a_frame_after_the_bars(qtbot, make_window):
    window = make_window()
    window.show()
    charts = window.named_widget("charts")
    qtbot.waitExposed(charts)
    _replayed(window)
    qtbot.waitUntil(lambda: bool(charts.bars.rows) and not window._parts_left(),
                    timeout=5000)
    drawn = {k: (list(x), list(y)) for k, (x, y) in charts.sweep.shown.items()}
    window.flush_views()
    assert drawn and drawn == {k: (list(x), list(y))
                               for k, (x, y) in charts.sweep.shown.items()}


def test_telemetry_legends_sit_above_the_data_area(qtbot, make_window):
    for presentation in (False, True):
        window = make_window()
        window.show()
        if presentation:
            window.set_presentation(True, full_screen=False)
        view = window.named_widget("telemetry")
        qtbot.waitExposed(view)
        _replayed(window)
        window.flush_views()
        checked = 0
        for name in ("clocks", "power", "gpm"):
            item = view.plots[name].getPlotItem()
            if not item.legend.items or not view.plots[name].isVisible():
                continue
            legend = item.legend.sceneBoundingRect()
            data = item.vb.sceneBoundingRect()
            assert legend.height() > 0
            assert legend.bottom() <= data.top() + 0.5, (name, legend, data)  # no overlap
            assert legend.left() >= data.left() - 0.5  # starts over the data, not the axis
            checked += 1
        assert checked >= 2


def test_the_telemetry_time_axis_takes_a_step_a_plot_a_frame(qtbot, make_window):
    # the followed window's step, plot by plot with each plot's part: six plots moved at
    # once (pyqtgraph's setXLink) repainted all six in one frame
    from gemmscope.app.core.store import Change

    window = make_window()
    window.show()
    view = window.named_widget("telemetry")
    qtbot.waitExposed(view)
    window.handle(of(syn.header()))
    for i in range(1, 76):
        window.handle(of(syn.telemetry(float(i), 10.0)))
    window.flush_views()
    ranges = {tuple(p.getViewBox().viewRange()[0]) for p in view.plots.values()}
    assert ranges == {(20.0, 80.0)}
    for i in range(76, 96):
        window.handle(of(syn.telemetry(float(i), 10.0)))
    view.refresh({Change.TELEMETRY})
    view.step()  # the first part: the first plot moves, the others wait for theirs
    first, *others = view.plots.values()
    assert first.getViewBox().viewRange()[0] == [40.0, 100.0]
    assert all(p.getViewBox().viewRange()[0] == [20.0, 80.0] for p in others)
    view.settle()
    assert all(p.getViewBox().viewRange()[0] == [40.0, 100.0] for p in view.plots.values())
    # the user pans one plot: all of them follow it, at once
    vb = view.plots["gpm"].getViewBox()
    vb.setXRange(5.0, 25.0, padding=0)
    vb.sigRangeChangedManually.emit([True, False])
    assert all(p.getViewBox().viewRange()[0] == [5.0, 25.0] for p in view.plots.values())
    assert not view.follow_button.isChecked()


def test_a_bars_redraw_keeps_the_log_axis_picture_when_the_mode_is_unchanged(
        qtbot, make_window):
    # setLogMode drops the axis' picture even when the mode is the same: set only on a
    # change, a redraw of the bars does not draw the value axis again
    from gemmscope.app.core.store import Change

    window = make_window()
    window.show()
    charts = window.named_widget("charts")
    qtbot.waitExposed(charts)
    _replayed(window)
    window.flush_views()
    axis = charts.bars.getPlotItem().getAxis("left")
    calls = []
    axis.setLogMode = lambda *a, **k: calls.append((a, k))
    charts.bars._drawn = None  # the next refresh draws the bars again
    charts.refresh({Change.LADDER})
    assert calls == []
    charts.set_log_axis(not charts.bars.is_log())
    assert calls  # a change of mode still reaches the axis

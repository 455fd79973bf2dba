"""A hover readout stays inside its plot wherever the mouse is: near the top its lines
hang below the mouse, near the right edge they lie left of it (they were cut there)."""

from __future__ import annotations

import pyqtgraph as pg
import pytest

from gemmscope.app.plots.hover_readout import HoverReadout

TEXT = "3454.47 s\npower (instant): 126.6 W\npower limit: 700 W"


@pytest.fixture
def plot(qtbot):
    """A plot of 0..100 by 0..1000, shown; hidden, then closed, after the test (a shown
    pyqtgraph plot closed as it is crashes in setViewport)."""
    widget = pg.PlotWidget()
    widget.resize(600, 300)
    widget.setXRange(0, 100, padding=0)
    widget.setYRange(0, 1000, padding=0)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.hide()
    widget.close()


@pytest.mark.parametrize("fx, fy", [(0.02, 0.98), (0.98, 0.98), (0.02, 0.02), (0.98, 0.02),
                                    (0.5, 0.5)])
def test_the_readout_lies_inside_the_plot_wherever_the_mouse_is(plot, fx, fy):
    readout = HoverReadout(plot, lambda _x, _y: TEXT)
    readout.show_at(100 * fx, 1000 * fy)
    readout.label.updateTransform(force=True)  # what its next paint does: its place, in px
    box = plot.getPlotItem().vb.sceneBoundingRect()
    label = readout.label.sceneBoundingRect()
    assert readout.label.isVisible() and readout.text == TEXT
    assert box.contains(label), (fx, fy, box, label)

"""Plots made ready for their paint right after a redraw, so one redraw costs one paint.

pyqtgraph leaves two things to the paint: an axis measures its tick text while painting
and widens itself when the text got wider (a layout request: the plot is laid out and
painted again), and a view box applies its new range to its items' transform when the
scene prepares to paint (text items such as value labels then move: a second repaint).
:func:`ready_to_paint` does both right after the redraw, before the paint, and lays the
plot out at once (the layout request would otherwise come after the paint).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QPainter, QPicture
from PySide6.QtWidgets import QWidget


def draw_axis_now(axis: pg.AxisItem) -> None:
    """Make ``axis``' picture now, as its paint would (AxisItem.paint): a wider tick text
    widens the axis here, not during the paint. The paint then plays this picture, unless
    the axis is resized (a new width) first: then it draws again, at the width it needs."""
    if axis.picture is not None or not axis.isVisible():
        return
    picture = QPicture()
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        specs = axis.generateDrawSpecs(painter)
        if specs is not None:
            axis.drawPicture(painter, *specs)
    finally:
        painter.end()
    axis.picture = picture


def plot_ready(plot: pg.PlotWidget) -> None:
    """One plot: the side axes measured, the layout applied, the view's transform set."""
    item = plot.getPlotItem()
    for name in ("left", "right"):
        axis = item.getAxis(name)
        if axis.fixedWidth is None and axis.style["autoExpandTextSpace"]:
            draw_axis_now(axis)
    item.layout.activate()
    item.vb.prepareForPaint()


def ready_to_paint(widget: QWidget | None) -> None:
    """Every plot shown in ``widget`` (a tab after its redraw) ready for its paint."""
    if widget is None:
        return
    for plot in widget.findChildren(pg.PlotWidget):
        if plot.isVisible():
            plot_ready(plot)

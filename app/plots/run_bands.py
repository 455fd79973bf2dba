"""Run windows drawn as vertical bands over the whole height of a plot (pyqtgraph item).

Each band starts with a 1 px line of its colour, so back-to-back runs (a recorded ladder
runs one right after the other) stay apart.

One item per plot draws every band in one ``paint`` call (a LinearRegionItem per run and
plot would be hundreds of items with handles); only bands in the visible x range are
painted. The spans it draws are kept in ``spans`` so tests read back what is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QBrush, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem


class RunBands(pg.GraphicsObject):
    """Shaded [start, end) spans in data x, spanning the view's full height."""

    def __init__(self) -> None:
        super().__init__()
        self.spans = np.zeros((0, 2))
        self.colors: list[str] = []
        self._brushes: list[QBrush] = []
        self._edges: list[QPen] = []
        self.setZValue(-10)  # under the curves
        # repainted from a pixmap while its spans and the view are unchanged: a band is a
        # translucent fill of the plot's whole height, and a tab's repaint blended a dozen
        # of them per plot (1.1 ms a plot in presentation mode)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def set_spans(self, spans: np.ndarray, colors: Sequence[str]) -> None:
        """Spans as an (n, 2) array of data x; one ``#rrggbbaa`` colour per span."""
        spans = np.asarray(spans, dtype=np.float64).reshape(-1, 2)
        if np.array_equal(spans, self.spans) and list(colors) == self.colors:
            return  # unchanged: no repaint
        self.prepareGeometryChange()
        self.spans = spans.copy()
        self.colors = list(colors)
        self._brushes = [pg.mkBrush(c) for c in self.colors]  # #rrggbbaa, as pyqtgraph reads it
        self._edges = [pg.mkPen(c[:7] + "aa", width=1) for c in self.colors]
        self.update()

    def viewRangeChanged(self) -> None:
        self.prepareGeometryChange()  # the bands follow the view's height
        self.update()

    def boundingRect(self) -> QRectF:
        view = self.viewRect()
        if view is None or len(self.spans) == 0:
            return QRectF()
        x0, x1 = float(self.spans[:, 0].min()), float(self.spans[:, 1].max())
        px = self.pixelWidth() or 0.0
        return QRectF(x0, view.top(), max(x1 - x0, px), view.height())

    def paint(self, p: QPainter, *args: Any) -> None:
        view = self.viewRect()
        if view is None or len(self.spans) == 0:
            return
        px = self.pixelWidth() or 0.0
        shown = (self.spans[:, 1] >= view.left()) & (self.spans[:, 0] <= view.right())
        for i in np.flatnonzero(shown):
            x0, x1 = self.spans[i]
            p.fillRect(QRectF(x0, view.top(), max(x1 - x0, px), view.height()),
                       self._brushes[i])
            p.setPen(self._edges[i])
            p.drawLine(QPointF(x0, view.top()), QPointF(x0, view.bottom()))

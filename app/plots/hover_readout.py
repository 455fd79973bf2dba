"""The hover readout of a chart: the exact value of the data point nearest the mouse, shown
in a text item over the plot, hidden when the mouse leaves it and before every export."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF


class _LeaveFilter(QObject):
    def __init__(self, readout: HoverReadout, parent: QObject):
        super().__init__(parent)
        self.readout = readout

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.readout.hide()
        return False


class HoverReadout:
    """Shows the exact value of the data point nearest the mouse in a text item; hidden
    when the mouse leaves the plot, and never part of an export (:meth:`hide_all`)."""

    _all: ClassVar[weakref.WeakSet[HoverReadout]] = weakref.WeakSet()

    def __init__(self, plot: pg.PlotWidget, describe: Callable[[float, float], str | None]):
        self.plot = plot
        self.describe = describe
        self.label = pg.TextItem("", anchor=(0, 1), color="#202020", fill="#ffffffd0")
        self.label.setZValue(100)
        self.label.hide()
        plot.addItem(self.label, ignoreBounds=True)
        plot.scene().sigMouseMoved.connect(self._moved)
        self._leave = _LeaveFilter(self, plot)
        plot.installEventFilter(self._leave)
        plot.viewport().installEventFilter(self._leave)
        self.text = ""
        HoverReadout._all.add(self)

    def _moved(self, pos: QPointF) -> None:
        vb = self.plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            self.hide()
            return
        p = vb.mapSceneToView(pos)
        self.show_at(p.x(), p.y())

    def show_at(self, x: float, y: float) -> None:
        text = self.describe(x, y)
        self.text = text or ""
        if not text:
            self.label.hide()
            return
        self.label.setText(text)
        # the text on the side of the mouse that has the room: below it in the plot's
        # upper half, left of it in its right half, so that no line is cut at an edge
        (x0, x1), (y0, y1) = self.plot.getPlotItem().vb.viewRange()
        self.label.setAnchor((1 if x > (x0 + x1) / 2 else 0, 0 if y > (y0 + y1) / 2 else 1))
        self.label.setPos(x, y)
        self.label.show()

    def hide(self) -> None:
        self.text = ""
        self.label.hide()

    @classmethod
    def hide_all(cls) -> None:
        """Hide every readout (before an export: the picture is the data, not the mouse)."""
        for readout in list(cls._all):
            try:
                readout.hide()
            except RuntimeError:  # its plot is gone (Qt deleted it): nothing to hide
                cls._all.discard(readout)


def nearest(xs: np.ndarray, x: float) -> int | None:
    if len(xs) == 0:
        return None
    return int(np.argmin(np.abs(xs - x)))

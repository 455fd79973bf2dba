"""The GPUs of a session side by side: for each level, one bar per GPU (grouped), at the
shape and in the mode shown, on the TFLOPS axis the Charts tab's log box sets. Shown when
a session has several GPUs (protocol version 4)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QWidget

from ...kernels.results import pct_text, tflops_text
from ..theme import Theme, device_color, min_text_pt
from .chart_base import Chart, finite_or_zero, finite_top
from .hover_readout import HoverReadout
from .level_ticks import NameAxis
from .side_legend import LegendEntry

GROUP_WIDTH = 0.8  # of one level's slot, shared by its GPUs' bars


@dataclass(frozen=True, slots=True)
class DeviceResult:
    """One level's result on one GPU, as its bar shows it."""

    level: str
    device: int
    tflops: float
    shape: str
    precision: str
    pct_ref: float | None
    verified: bool


@dataclass(frozen=True, slots=True)
class DeviceRows:
    """What the GPU bars draw, handed to them (``DeviceBars.set_rows``): the session's GPUs
    (index and name), the levels with a result on one of them in the session's order, and
    each level's result per GPU (app/views/chart_rows.py reads them from the store)."""

    devices: tuple[tuple[int, str], ...] = ()
    levels: tuple[str, ...] = ()
    results: tuple[DeviceResult, ...] = ()


class DeviceBars(Chart):
    """Grouped bars: TFLOPS of each level on each GPU; ``rows`` keeps what is drawn."""

    level_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("GPUs side by side", parent)

    def _make_fields(self) -> None:
        self.log_axis = False
        self.floor = 0.0
        self.rows: list[dict[str, Any]] = []  # one per drawn bar: level, device, tflops, x
        self.data = DeviceRows()  # what the bars were last handed
        self.levels: list[str] = []
        self.device_ids: list[int] = []
        self.device_names: dict[int, str] = {}
        self.bars: pg.BarGraphItem | None = None
        self._y_top = 1.0
        # (4.5 type-heights, as the ladder bars': three lines of names; six left a stage's
        # plot no height under the bars)
        self.names = NameAxis(self.getPlotItem(), self.theme.font_pt, height_pts=4.5)
        self.getPlotItem().vb.sigResized.connect(self._place_names)
        self.setLabel("left", "TFLOPS")
        self.hover = HoverReadout(self, self._describe)
        self.scene().sigMouseClicked.connect(self._clicked)

    def set_log_axis(self, on: bool) -> None:
        """TFLOPS on a log axis (the Charts tab's box, as the ladder bars)."""
        if bool(on) != self.log_axis:
            self.log_axis = bool(on)
            self.setLabel("left", "TFLOPS (log)" if on else "TFLOPS")
            self.getPlotItem().getAxis("left").setLogMode(False, self.log_axis)
            self.set_rows(self.data)

    def drawn_values(self) -> np.ndarray:
        """The values the bars reach on the axis, read back from the bar item."""
        if self.bars is None or not self.rows:
            return np.zeros(0)
        top = np.asarray(self.bars.opts["y0"], float) + np.asarray(self.bars.opts["height"])
        return 10 ** top if self.log_axis else top

    def _clicked(self, event: Any) -> None:
        vb = self.getPlotItem().vb
        if event.button() != Qt.MouseButton.LeftButton or not self.levels or \
                not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        i = round(vb.mapSceneToView(event.scenePos()).x())
        if 0 <= i < len(self.levels):
            self.level_clicked.emit(self.levels[i])

    def set_rows(self, data: DeviceRows) -> None:
        """Draw ``data``: each level's group, a bar per GPU that ran it."""
        self.data = data
        self.device_ids = [d for d, _ in data.devices]
        self.device_names = dict(data.devices)
        width = GROUP_WIDTH / max(len(self.device_ids), 1)
        self.levels = list(data.levels)
        slot = {d: k for k, d in enumerate(self.device_ids)}
        self.rows = [{"level": r.level, "device": r.device, "tflops": r.tflops,
                      "shape": r.shape, "precision": r.precision, "pct_ref": r.pct_ref,
                      "verified": r.verified,
                      "x": self.levels.index(r.level) - GROUP_WIDTH / 2
                      + (slot[r.device] + 0.5) * width}
                     for r in data.results]
        self._draw(width)

    def values(self) -> np.ndarray:
        return finite_or_zero([row["tflops"] for row in self.rows])

    def _draw(self, width: float) -> None:
        plot = self.getPlotItem()
        values = self.values()
        positive = values[values > 0]
        # a log axis starts a decade-step below the smallest bar, so every bar shows
        self.floor = math.floor(math.log10(float(positive.min()))) \
            if self.log_axis and positive.size else 0.0
        tops = np.log10(np.where(values > 0, values, 10 ** self.floor)) if self.log_axis \
            else values
        heights = np.maximum(tops - self.floor, 0)
        x = np.array([row["x"] for row in self.rows], dtype=float)
        brushes = [pg.mkBrush(device_color(row["device"])) for row in self.rows]
        opts = {"x": x, "height": heights, "y0": np.full(len(x), self.floor),
                "width": width * 0.9, "brushes": brushes,
                "pen": pg.mkPen(self.theme.foreground, width=1)}
        if self.bars is None:
            self.bars = pg.BarGraphItem(**opts)
            plot.addItem(self.bars)
        else:
            self.bars.setOpts(**opts)
        # beside the plot, never over the bars
        self.side_legend.set_entries([LegendEntry(name, device_color(d))
                                      for d, name in self.data.devices])
        if self.log_axis:
            self._y_top = float(tops.max()) + 0.15 if len(tops) else self.floor + 1.0
        else:
            self._y_top = finite_top(heights, 1.15) if len(heights) else 1.0
        self._place_names()

    def _place_names(self, *_: object) -> None:
        """The level names under the groups (NameAxis) and the ranges."""
        plot = self.getPlotItem()
        x_range = self.names.place(self.levels) or (-0.6, 0.6)
        plot.setXRange(*x_range, padding=0)
        plot.setYRange(self.floor, self._y_top, padding=0)

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        self.names.set_font_pt(theme.font_pt, min_text_pt(theme))
        self._place_names()

    def _describe(self, x: float, y: float) -> str | None:
        if not self.rows:
            return None
        row = min(self.rows, key=lambda r: abs(r["x"] - x))
        if abs(row["x"] - x) > GROUP_WIDTH / 2:
            return None
        ok = "" if row["verified"] else ", NOT verified"
        return (f"{row['level']} on {self.device_names.get(row['device'], row['device'])}\n"
                f"{tflops_text(row['tflops'])} TFLOPS at {row['shape']}, "
                f"{pct_text(row['pct_ref'])} of cuBLAS {row['precision'].upper()}{ok}")

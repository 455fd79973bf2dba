"""The telemetry view: SM clock, power and temperature against session time (NVML).

Registered as the view ``telemetry``. It redraws only while it is shown (a hidden tab
costs nothing) and moves its time window in steps, so its axes are redrawn rarely.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from gemmscope.app.core.store import Change, SessionStore
from gemmscope.app.qt_compat import protect_singletons
from gemmscope.app.theme import NORMAL, Theme

protect_singletons()

SERIES = (("sm_clock_mhz", "SM clock", "MHz", "#1f77b4"),
          ("power_w", "Power", "W", "#d62728"),
          ("temp_c", "Temperature", "°C", "#ff7f0e"))
WINDOW_S = 60.0  # seconds of history shown
STEP_S = 10.0  # the window moves in steps of this much


class TelemetryView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.store: SessionStore | None = None
        self.theme = NORMAL
        self.status = QLabel("no telemetry yet")
        self.status.setWordWrap(True)
        self.plots: dict[str, pg.PlotWidget] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.shown: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._x_range = (0.0, 0.0)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        first: pg.PlotWidget | None = None
        for name, title, unit, color in SERIES:
            plot = pg.PlotWidget()
            plot.setMinimumHeight(120)
            plot.setLabel("left", title, units=None)
            plot.base_title = f"{title} ({unit})"  # exports name images after it
            plot.getPlotItem().vb.disableAutoRange(axis=pg.ViewBox.XAxis)
            for axis in ("left", "bottom"):  # as in charts.py: cached, major grid only
                item = plot.getPlotItem().getAxis(axis)
                item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
                item.setStyle(maxTickLevel=0, maxTextLevel=0)
            curve = plot.plot([], [], pen=pg.mkPen(color, width=1), connect="finite")
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            self.plots[name] = plot
            self.curves[name] = curve
            layout.addWidget(plot, 1)
        self.plots[SERIES[-1][0]].setLabel("bottom", "session time (s)")
        self.apply_theme(NORMAL)

    def charts(self) -> dict[str, pg.PlotWidget]:
        return {f"telemetry_{name}": plot for name, plot in self.plots.items()}

    def bind(self, store: SessionStore) -> None:
        self.store = store

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        for plot in self.plots.values():
            plot.setBackground(theme.background)
            plot.setTitle(plot.base_title, color=theme.foreground)
            plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
            for axis in ("left", "bottom"):
                plot.getPlotItem().getAxis(axis).setTextPen(theme.foreground)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh({Change.TELEMETRY, Change.HEADER})

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & {Change.TELEMETRY, Change.HEADER}:
            return
        if not self.isVisible():
            return  # drawn when shown
        tele = self.store.telemetry
        available, reason = self.store.telemetry_status()
        if not available and tele.count == 0:
            self.status.setText(f"telemetry unavailable: {reason or 'no samples'}")
        else:
            seen = ", ".join(f"{r} ({n} samples)" for r, n in sorted(tele.reasons_seen.items()))
            self.status.setText(f"{tele.count} NVML samples; clock-event reasons seen: "
                                f"{seen or 'none'} (GpuIdle not counted)")
        last_t = 0.0
        for name, curve in self.curves.items():
            t, values = tele.arrays(name)
            self.shown[name] = (t, values)
            curve.setData(t, values)
            if len(t):
                last_t = max(last_t, float(t[-1]))
        end = (np.floor(last_t / STEP_S) + 1) * STEP_S
        x_range = (max(0.0, end - WINDOW_S), end)
        if x_range != self._x_range:
            self._x_range = x_range
            self.plots[SERIES[0][0]].setXRange(*x_range, padding=0)

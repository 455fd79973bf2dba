"""The Charts tab: ladder bars, the per-repeat stream and the size sweep on one page."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QWidget

from ..core.store import Change, SessionStore
from ..plots.charts import LadderBars, StreamChart, SweepChart
from ..plots.device_bars import DeviceBars
from ..theme import Theme
from .base import View


class ChartsView(QWidget, View):
    """The three charts on one tab (registered as the view ``charts``)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bars = LadderBars()
        self.stream = StreamChart()
        self.sweep = SweepChart()
        self.devices = DeviceBars()  # several GPUs: the same level on each, side by side
        self.devices.setVisible(False)
        # (not "metric": that name would shadow QWidget.metric(), which Qt calls)
        self.metric_box = QComboBox()
        self.metric_box.addItems(LadderBars.METRICS)
        self.metric_box.currentTextChanged.connect(self.bars.set_metric)
        layout = QGridLayout(self)
        layout.addWidget(QLabel("Bars show:"), 0, 0)
        layout.addWidget(self.metric_box, 0, 1)
        layout.setColumnStretch(2, 1)
        layout.addWidget(self.bars, 1, 0, 1, 3)
        layout.addWidget(self.stream, 2, 0, 1, 2)
        layout.addWidget(self.sweep, 2, 2)
        layout.addWidget(self.devices, 3, 0, 1, 3)
        layout.setRowStretch(1, 3)
        layout.setRowStretch(2, 2)
        layout.setRowStretch(3, 2)

    def charts(self) -> dict[str, pg.PlotWidget]:
        return {"bars": self.bars, "stream": self.stream, "sweep": self.sweep,
                "devices": self.devices}

    def bind(self, store: SessionStore) -> None:
        for chart in self.charts().values():
            chart.bind(store)

    def refresh(self, changes: set[Change]) -> None:
        store = self.bars.store
        if store is not None and Change.HEADER in changes:
            self.devices.setVisible(store.multi_device)
        for chart in self.charts().values():
            chart.refresh(changes)

    def apply_theme(self, theme: Theme) -> None:
        for chart in self.charts().values():
            chart.apply_theme(theme)
        self.refresh(set(Change))

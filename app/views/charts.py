"""The Charts tab: ladder bars, the per-repeat stream and the size sweep on one page.

The controls sit in a row of their own above the charts (never over one): what the bars
show, and a log TFLOPS axis. The log axis is the default: the ladder spans three orders of
magnitude (naive FP32 at ~0.5 TFLOPS to FP8 at ~1000), and on a linear axis every FP32 step
is a sliver; on a log axis each step up the ladder is a visible rise.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QGridLayout, QHBoxLayout, QLabel, QWidget

from ..core.store import Change, SessionStore
from ..plots.charts import LadderBars, StreamChart, SweepChart
from ..theme import Theme
from .base import View

LOG_AXIS_DEFAULT = True


class ChartsView(QWidget, View):
    """The three charts on one tab (registered as the view ``charts``)."""

    log_axis_changed = Signal(bool)  # the user turned the log axis on or off (preferences)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bars = LadderBars()
        self.stream = StreamChart()
        self.sweep = SweepChart()
        # (not "metric": that name would shadow QWidget.metric(), which Qt calls)
        self.metric_box = QComboBox()
        self.metric_box.addItems(LadderBars.METRICS)
        self.metric_box.currentTextChanged.connect(self.bars.set_metric)
        self.log_box = QCheckBox("log TFLOPS axis")
        self.log_box.setToolTip("TFLOPS (and GFLOP/J) on a logarithmic axis: every level of "
                                "the ladder visible, from naive FP32 to FP8")
        self.log_box.toggled.connect(self._log_toggled)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Bars show:"))
        controls.addWidget(self.metric_box)
        controls.addSpacing(16)
        controls.addWidget(self.log_box)
        controls.addStretch(1)
        layout = QGridLayout(self)
        layout.addLayout(controls, 0, 0, 1, 2)
        layout.addWidget(self.bars, 1, 0, 1, 2)
        layout.addWidget(self.stream, 2, 0)
        layout.addWidget(self.sweep, 2, 1)
        layout.setRowStretch(1, 3)
        layout.setRowStretch(2, 2)
        layout.setColumnStretch(0, 1)
        layout.setColumnStretch(1, 2)  # the sweep's legend (18 levels) takes room beside it
        self.set_log_axis(LOG_AXIS_DEFAULT)

    def set_log_axis(self, on: bool) -> None:
        """The log axis on or off without telling the preferences (start, exports)."""
        self.log_box.blockSignals(True)
        self.log_box.setChecked(on)
        self.log_box.blockSignals(False)
        self._apply_log(on)

    def _log_toggled(self, on: bool) -> None:
        self._apply_log(on)
        self.log_axis_changed.emit(on)

    def _apply_log(self, on: bool) -> None:
        for chart in (self.bars, self.sweep):  # (one run's repeats differ by percents)
            chart.set_log_axis(on)

    def charts(self) -> dict[str, pg.PlotWidget]:
        return {"bars": self.bars, "stream": self.stream, "sweep": self.sweep}

    def bind(self, store: SessionStore) -> None:
        for chart in self.charts().values():
            chart.bind(store)

    def refresh(self, changes: set[Change]) -> None:
        for chart in self.charts().values():
            chart.refresh(changes)

    def set_level(self, level_id: str) -> bool:
        for chart in (self.bars, self.stream, self.sweep):
            chart.set_selected(level_id)
        return True

    def apply_theme(self, theme: Theme) -> None:
        for chart in self.charts().values():
            chart.apply_theme(theme)
        self.refresh(set(Change))

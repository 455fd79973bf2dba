"""The Charts tab: ladder bars, the per-repeat stream and the size sweep on one page.

The controls sit in a row of their own above the charts (never over one): what the bars
show, a log TFLOPS axis, and the bars per GHz of SM clock held (the view state's
``per_clock``: TFLOPS/GHz and % of cuBLAS at equal clocks). The log axis is the default:
the ladder spans three orders of magnitude (naive FP32 at ~0.5 TFLOPS to FP8 at ~1000), and
on a linear axis every FP32 step is a sliver; on a log axis each step up the ladder is a
visible rise.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..core.store import Change, SessionStore
from ..plots.charts import LadderBars, StreamChart, SweepChart
from ..plots.device_bars import DeviceBars
from ..theme import Theme
from .base import View
from .chart_rows import device_rows, ladder_rows, stream_rows, sweep_rows

STAGE_CHART_MIN_W = 520  # on stage, the stream and the sweep share a row from 2x this
STAGE_ROWS_MIN_H = 860  # on stage, the bars have the tab to themselves below this height
# (at 1366x768 two rows of charts left the bars a plot 100 px high: 1080p has room)
LOG_AXIS_DEFAULT = True
LATER_CHANGES = frozenset({Change.SWEEP, Change.LADDER, Change.HEADER})  # sweep, GPU bars


class ChartsView(QWidget, View):
    """The three charts on one tab (registered as the view ``charts``). On stage, where
    the tab is too narrow for the stream and the sweep side by side in large type, the
    sweep hides and the stream takes the row; where it is too short for two rows of
    charts, the bars take the whole tab."""

    log_axis_changed = Signal(bool)  # the user turned the log axis on or off (preferences)
    level_clicked = Signal(str)  # a bar was clicked: the window selects its level
    per_clock_changed = Signal(bool)  # the person asked for the bars per clock, or not

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.store: SessionStore | None = None
        self.bars = LadderBars()
        self.stream = StreamChart()
        self.sweep = SweepChart()
        self.devices = DeviceBars()  # several GPUs: the same level on each, side by side
        self.devices.setVisible(False)
        self.bars.level_clicked.connect(self.level_clicked)
        self.devices.level_clicked.connect(self.level_clicked)
        # (not "metric": that name would shadow QWidget.metric(), which Qt calls)
        self.metric_box = QComboBox()
        self.metric_box.addItems(LadderBars.METRICS)
        self.metric_box.currentTextChanged.connect(self.bars.set_metric)
        self.on_stage = False
        self._later: set[Change] = set()  # what the sweep and the GPU bars have yet to show
        # (short, as the per-GHz box beside it: on stage at 1024x640 the row's three
        # controls in the stage's type were 12 px wider than the window with "log TFLOPS
        # axis"; the tooltip says what the axis is)
        self.log_box = QCheckBox("log axis")
        self.log_box.setToolTip("TFLOPS (and GFLOP/J) on a logarithmic axis: every level of "
                                "the ladder visible, from naive FP32 to FP8")
        self.log_box.toggled.connect(self._log_toggled)
        # (the view state's: the window sets it, and the box shows it: show_per_clock)
        # (short: the row sets the window's least width, 800 px in tests/app/window)
        self.per_clock_box = QCheckBox("per GHz")
        self.per_clock_box.setToolTip(
            "TFLOPS per GHz of the SM clock each run held, and % of cuBLAS at equal clocks: "
            "what is left of a ratio when the clocks the two runs met are taken out (C)")
        self.per_clock_box.toggled.connect(self.per_clock_changed)
        top = QHBoxLayout()
        top.addWidget(QLabel("Bars show:"))
        top.addWidget(self.metric_box)
        top.addSpacing(16)
        top.addWidget(self.log_box)
        top.addSpacing(16)
        top.addWidget(self.per_clock_box)
        top.addStretch(1)
        below = self.below = QHBoxLayout()  # the stream and the sweep share the row evenly
        below.addWidget(self.stream, 1)
        below.addWidget(self.sweep, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.bars, 3)
        layout.addLayout(below, 2)
        layout.addWidget(self.devices, 2)  # shown only for sessions of several GPUs
        self.set_log_axis(LOG_AXIS_DEFAULT)

    def set_log_axis(self, on: bool) -> None:
        """The log axis on or off without telling the preferences (start, exports)."""
        self.log_box.blockSignals(True)
        self.log_box.setChecked(on)
        self.log_box.blockSignals(False)
        self._apply_log(on)

    def show_per_clock(self, on: bool) -> None:
        """The box as the view state says (the bars' rows carry the state)."""
        self.per_clock_box.blockSignals(True)
        self.per_clock_box.setChecked(on)
        self.per_clock_box.blockSignals(False)

    def _log_toggled(self, on: bool) -> None:
        self._apply_log(on)
        self.log_axis_changed.emit(on)

    def _apply_log(self, on: bool) -> None:
        # (one run's repeats differ by percents: the stream keeps a linear axis)
        for chart in (self.bars, self.sweep, self.devices):
            chart.set_log_axis(on)
        self._hand_rows(self.bars, self.sweep, self.devices)

    def charts(self) -> dict[str, pg.PlotWidget]:
        return {"bars": self.bars, "stream": self.stream, "sweep": self.sweep,
                "devices": self.devices}

    def bind(self, store: SessionStore) -> None:
        """The store the charts' rows are read from (chart_rows.py): the charts are handed
        the rows and never read it."""
        self.store = store

    def refresh(self, changes: set[Change]) -> None:
        """The bars and the stream now; the sweep and the GPU comparison in the next frame
        (:meth:`step`), so that a paint comes between them: both in one frame cost more
        than a 60 Hz frame has (benchmarks/gui_frame_time.py)."""
        store = self.store
        if store is None:
            return
        header = Change.HEADER in changes
        if header:
            self.devices.setVisible(store.multi_device)
        if changes & {Change.LADDER, Change.HEADER}:
            self.bars.set_rows(ladder_rows(store), header)
        if changes & {Change.STREAM, Change.HEADER}:
            self.stream.set_rows(stream_rows(store))
        self._later |= changes & LATER_CHANGES

    def parts_left(self) -> bool:
        return bool(self._later)

    def step(self) -> None:
        self.settle()

    def settle(self) -> None:
        changes, self._later = self._later, set()
        if changes and self.store is not None:
            header = Change.HEADER in changes
            if changes & {Change.SWEEP, Change.HEADER}:
                self.sweep.set_rows(sweep_rows(self.store), header)
            if changes & {Change.LADDER, Change.HEADER}:
                self.devices.set_rows(device_rows(self.store))

    def set_level(self, level_id: str) -> bool:
        for chart in (self.bars, self.stream, self.sweep):
            chart.set_selected(level_id)
        self._hand_rows(self.bars, self.stream, self.sweep)
        return True

    def _hand_rows(self, *charts: pg.PlotWidget) -> None:
        """These charts' rows read afresh: a chart redraws a new selection or axis from
        the rows it was last handed, and the view state may have moved since (a level
        chosen in the ladder panel shows that level's run and sweep)."""
        if self.store is None:
            return
        if self.bars in charts:
            self.bars.set_rows(ladder_rows(self.store))
        if self.stream in charts:
            self.stream.set_rows(stream_rows(self.store))
        if self.sweep in charts:
            self.sweep.set_rows(sweep_rows(self.store))
        if self.devices in charts:
            self.devices.set_rows(device_rows(self.store))

    def apply_theme(self, theme: Theme) -> None:
        self.on_stage = theme.name != "normal"
        for chart in self.charts().values():
            chart.apply_theme(theme)
        self.refresh(set(Change))
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        side_by_side = not self.on_stage or self.width() >= 2 * STAGE_CHART_MIN_W
        two_rows = not self.on_stage or self.height() >= STAGE_ROWS_MIN_H
        changed = False
        for chart, shown in ((self.stream, two_rows), (self.sweep, two_rows and side_by_side)):
            if chart.isHidden() == shown:
                chart.setVisible(shown)
                changed = True
        lay = self.layout()
        if changed and isinstance(lay, QVBoxLayout):
            lay.setStretchFactor(self.below, 2 if two_rows else 0)  # else the bars take it

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
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..core.store import Change, SessionStore
from ..plots.chart_base import Chart
from ..plots.charts import LadderBars, StreamChart, SweepChart
from ..plots.device_bars import DeviceBars
from ..theme import Theme
from .base import View
from .chart_rows import device_rows, ladder_rows, stream_rows, sweep_coming, sweep_rows

STAGE_CHART_MIN_W = 520  # on stage, the stream and the sweep share a row from 2x this
# the least plot height a shown chart keeps (in normal and in stage type): room for two or
# three labelled ticks; a chart that cannot have it takes no space (at 1024x640 the bars
# of the two-GPU recording were 30 px high with one tick; on stage "GPUs side by side" had
# none)
PLOT_MIN_PX = {"normal": 90, "stage": 110}
GPUS = "GPUs side by side"  # "Bars show:" on a session of several GPUs: that chart alone
LOG_AXIS_DEFAULT = True
LATER_CHANGES = frozenset({Change.SWEEP, Change.LADDER, Change.HEADER})  # sweep, GPU bars


class ChartsView(QWidget, View):
    """The charts on one tab (registered as the view ``charts``): the bars, then (a session
    of several GPUs) the GPUs side by side, then a row of the stream and the sweep, each
    shown only where the tab leaves its plot PLOT_MIN_PX high, in that order. A sweep the
    session does not have takes no space (the stream takes the row), nor does the sweep
    on a stage too narrow for both. Where the GPUs' chart has no room below the bars,
    "Bars show:" offers it, alone in the bars' place."""

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
        self.metric_box.currentTextChanged.connect(self._metric_chosen)
        self._fitting = False
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
            "TFLOPS per GHz of the SM clock, and % of cuBLAS at equal clocks: what is left "
            "of a ratio when the clocks the two runs met are taken out (C). The clocks are "
            "those inside the launches where the recording has them (record "
            "--launch-clocks: a Tensor Core launch runs well under the clock NVML reports), "
            "else NVML's held around the runs")
        self.per_clock_box.toggled.connect(self.per_clock_changed)
        self.controls_row = QWidget()  # (a widget: an exported picture leaves it out)
        top = QHBoxLayout(self.controls_row)
        top.setContentsMargins(0, 0, 0, 0)
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
        layout.addWidget(self.controls_row)
        layout.addWidget(self.bars, 3)
        layout.addLayout(below, 2)
        layout.addWidget(self.devices, 2)  # shown only for sessions of several GPUs
        self.set_log_axis(LOG_AXIS_DEFAULT)

    def picture_chrome(self) -> list[QWidget]:
        """What an exported picture leaves out: the row of what the bars show (the
        picture's titles and axes say what it shows)."""
        return [self.controls_row]

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
            self._offer_gpus(store.multi_device)
        if changes & {Change.LADDER, Change.HEADER}:
            self.bars.set_rows(ladder_rows(store), header)
        if changes & {Change.STREAM, Change.HEADER}:
            self.stream.set_rows(stream_rows(store))
        self._later |= changes & LATER_CHANGES
        self._fit()

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
            self._fit()

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
        # and again once the charts have laid out in the new type (their legends and axes
        # were the old theme's size when this fit measured them)
        QTimer.singleShot(0, self._fit)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _metric_chosen(self, metric: str) -> None:
        if metric != GPUS:
            self.bars.set_metric(metric)
        self._fit()

    def _offer_gpus(self, several: bool) -> None:
        """"GPUs side by side" in the metric box for a session of several GPUs only."""
        at = self.metric_box.findText(GPUS)
        if several and at < 0:
            self.metric_box.addItem(GPUS)
        elif not several and at >= 0:
            if self.metric_box.currentIndex() == at:
                self.metric_box.setCurrentIndex(0)
            self.metric_box.removeItem(at)

    def gpus_alone(self) -> bool:
        """The GPUs' chart chosen under "Bars show:": it takes the bars' place."""
        return self.metric_box.currentText() == GPUS

    def _sweep_wanted(self) -> bool:
        """The sweep takes space unless it has nothing to show now or later while the
        other charts have something (an empty window explains every chart)."""
        store = self.store
        if store is None or not self.sweep.empty or self.bars.empty:
            return True
        return sweep_coming(store)

    @staticmethod
    def _need_px(chart: Chart, plot_px: float) -> float:
        """The height a chart needs for a plot ``plot_px`` high: its title, its x axis, a
        legend below the plot and the margins. The legend as large as it may grow
        (Chart.BELOW_SHARE of the chart), not as laid out: a hidden chart's was laid out
        for another size or type, and a shown one's follows the height this gives it (the
        heights, and the legends' type, came out different after a stage and back)."""
        item = chart.getPlotItem()
        axis = item.getAxis("bottom")
        legend = chart.side_legend
        frame = item.titleLabel.itemRect().height() + 4 + (
            axis.height() if axis.isVisible() else 0.0) + 20
        if not legend.entries or not legend.below:
            return frame + plot_px
        return (frame + plot_px) / (1 - Chart.BELOW_SHARE)

    def _fit(self) -> None:
        """Which charts show, in order (bars or the GPUs alone, the GPUs, the stream's
        row), and the least height of each: its frame and PLOT_MIN_PX of plot."""
        if self._fitting:
            return
        self._fitting = True
        try:
            self._place_charts()
        finally:
            self._fitting = False

    def _place_charts(self) -> None:
        store = self.store
        several = store is not None and store.multi_device
        alone = several and self.gpus_alone()
        lay = self.layout()
        top = lay.itemAt(0) if isinstance(lay, QVBoxLayout) else None
        top_px = top.sizeHint().height() if top is not None else 0
        spacing = lay.spacing() if isinstance(lay, QVBoxLayout) else 6
        margins = lay.contentsMargins() if isinstance(lay, QVBoxLayout) else None
        room = self.height() - top_px - spacing - (
            margins.top() + margins.bottom() if margins is not None else 0)
        plot_px = PLOT_MIN_PX["normal" if not self.on_stage else "stage"]
        first = self.devices if alone else self.bars
        need = {chart: self._need_px(chart, plot_px)
                for chart in (self.bars, self.devices, self.stream, self.sweep)}
        if self.on_stage:  # and room above the bars for their labels' two lines
            need[self.bars] += plot_px
        left = room - need[first]
        show_devices = alone or (several and left - spacing >= need[self.devices])
        if show_devices and not alone:
            left -= need[self.devices] + spacing
        sweep = self._sweep_wanted() and (not self.on_stage
                                          or self.width() >= 2 * STAGE_CHART_MIN_W)
        row = max(need[self.stream], need[self.sweep] if sweep else 0.0)
        show_row = left - spacing >= row
        shown = {self.bars: not alone, self.devices: show_devices,
                 self.stream: show_row, self.sweep: show_row and sweep}
        for chart, on in shown.items():
            if chart.isHidden() == on:
                chart.setVisible(on)
        if not isinstance(lay, QVBoxLayout):
            return
        # each shown chart its frame and plot_px, and the rest 3:2:2 (the bars the most):
        # as stretch factors, not least heights, which would keep the window from shrinking
        parts: list[tuple[QWidget | QHBoxLayout, int, float]] = [
            (self.devices if alone else self.bars, 3, need[first])]
        if show_devices and not alone:
            parts.append((self.devices, 2, need[self.devices]))
        if show_row:
            parts.append((self.below, 2, row))
        weights = sum(w for _, w, _ in parts)
        extra = max(0.0, room - sum(px + spacing for _, _, px in parts))
        stretches: dict[QWidget | QHBoxLayout, int] = dict.fromkeys(
            (self.bars, self.devices, self.below), 0)
        for item, weight, px in parts:
            stretches[item] = max(1, round(px + extra * weight / weights))
        for item, stretch in stretches.items():
            if lay.stretch(lay.indexOf(item)) != stretch:
                lay.setStretchFactor(item, stretch)

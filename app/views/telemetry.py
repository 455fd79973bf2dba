"""The telemetry view: NVML samples and run windows on one shared session-time axis.

Registered as the view ``telemetry``. From the top: a strip of run windows labelled with
level and shape; SM and memory clocks against the device's max SM clock; power against
the power limit (a labelled line: the samples' limit, else a sustained result's);
temperature; GPM metrics in percent (only those the GPU reported); a strip of the
clock-event reasons that count as slowdowns (``kernels/protocol/throttle.py``). Every plot shades
each run's window; clocks, power and temperature also shade each trial window of a
sustained run (from its ``phase`` events). The time axis follows the newest sample unless
the user pans or zooms (then "Follow newest" turns off until it is pressed again); it
moves in steps, so axes are redrawn rarely, and each plot takes the step with its own
part of the redraw (one plot a frame). The time axes are kept together by the view, not by
pyqtgraph's setXLink: a linked step repainted all six plots in one frame (25-40 ms). The
view redraws only while it is shown and
only what changed; the main window calls ``refresh`` at most every 200 ms for telemetry.
Replay and live feed the same store, so both look the same.
"""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...kernels.ladder import Shape
from ...kernels.protocol import Mode
from ..core.plain_text import html_text
from ..core.store import Change, SessionStore
from ..core.telemetry import GPM_FIELDS, RunWindow, runs_span
from ..plots.chart_axes import plain_axes, quiet_axes
from ..plots.charts import MAX_AXIS, HoverReadout, finite_top
from ..plots.legend_row import legend_above, place_legend, restyle_legend
from ..plots.plot_style import COMPACT, style_plots
from ..plots.run_bands import RunBands
from ..plots.telemetry_strips import (
    TRIAL_BAND,
    ReasonStrip,
    RunLabels,
    band_color,
)
from ..theme import FAILED_COLOR, NORMAL, Theme
from ..widgets.fitting import ElidedLabel
from .base import DrawnInParts
from .telemetry_fit import TelemetryFitting
from .telemetry_readout import TelemetryReadout
from .telemetry_spec import (  # what the tab plots, and how it follows
    AXIS_WIDTH_PX,
    CURVES,
    LEGEND_PLOTS,
    MIN_PLOT_PX,
    PLOTS,
    POWER_KIND_TEXT,
    SHOWN_CHANGES,
    STEP_S,
    TRIAL_PLOTS,
    UNITS,
    WINDOW_S,
)
from .telemetry_status import status_text


class TelemetryView(TelemetryReadout, TelemetryFitting, QWidget, DrawnInParts):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.store: SessionStore | None = None
        self.theme = NORMAL
        self.status = ElidedLabel("no telemetry yet")  # one line; the tooltip says it all
        self.follow_button = QPushButton("Follow newest")
        self.follow_button.setCheckable(True)
        self.follow_button.setChecked(True)
        self.follow_button.toggled.connect(self._follow_toggled)
        self.whole_button = QPushButton("Whole session")
        self.whole_button.clicked.connect(self.show_whole_session)
        self.plots: dict[str, pg.PlotWidget] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.bands: dict[str, RunBands] = {}
        self.max_clock_line = pg.InfiniteLine(angle=0, movable=False,
                                              pen=pg.mkPen("#202020", width=1,
                                                           style=pg.QtCore.Qt.PenStyle.DashLine),
                                              label="", labelOpts={"position": 0.5,
                                                                      "anchors": [(0.5, 1),
                                                                                  (0.5, 1)]})
        self.limit_line = pg.InfiniteLine(angle=0, movable=False,
                                          pen=pg.mkPen(FAILED_COLOR, width=1,
                                                       style=pg.QtCore.Qt.PenStyle.DashLine),
                                          label="", labelOpts={"position": 0.02,
                                                                  "anchors": [(0, 1), (0, 1)]})
        self.trial_bands: dict[str, RunBands] = {}
        self.windows: list[RunWindow] = []
        self._generation = -1
        self._drawn_samples = -1  # samples in the store when the curves were last drawn
        self._parts: list[str] = []  # plots left for the next frames
        self._curves_owed: set[str] = set()  # plots whose curves lag the samples
        self._first_label = 0  # the first run label that changed since last drawn
        self._x_range: tuple[float, float] | None = None
        self._y_ranges: dict[str, tuple[float, float]] = {}
        self._power_label = ""
        self._gpm_legend: list[str] = []
        self.selected: str | None = None  # the level chosen in the ladder panel
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.follow_button)
        top.addWidget(self.whole_button)
        self._column = QVBoxLayout(self)
        self._column.addLayout(top)
        self._column.setSpacing(0)

    # ------------------------------------------------------------- building
    def ensure_built(self) -> None:
        """Make the plots, once: when the tab is first shown or a chart is asked for.
        Six plots are half the main window's start (~100 ms of CPU), for a tab that may
        never be opened."""
        if not self.plots:
            self._build()
            self.apply_theme(self.theme)
            style_plots(self, self.theme)  # (the window styled the view before it had plots)
            if self.isVisible():  # (being shown) children added now would show a turn late
                for plot in self.plots.values():
                    plot.show()
                self._column.activate()

    def _build(self) -> None:
        layout = self._column
        for name, title in PLOTS.items():
            plot = pg.PlotWidget(axisItems=plain_axes())
            plot.base_title = title  # exports name images after it
            plot.setProperty(COMPACT, True)  # short strips: ticks in the smallest type
            item = plot.getPlotItem()
            quiet_axes(item)
            if title:
                item.setLabel("left", title)
            item.vb.disableAutoRange(axis=pg.ViewBox.XAxis)
            item.vb.setMouseEnabled(x=True, y=False)  # pan and zoom in time only
            item.vb.sigRangeChangedManually.connect(lambda *_a, n=name: self._user_moved(n))
            item.setMenuEnabled(False)
            for axis in ("left", "bottom"):  # as in charts.py: cached, major grid only
                ax = item.getAxis(axis)
                ax.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
                ax.setStyle(maxTickLevel=0, maxTextLevel=0)
            item.getAxis("left").setWidth(AXIS_WIDTH_PX)
            if name != "reasons":
                item.getAxis("bottom").setStyle(showValues=False)
                item.getAxis("bottom").setHeight(4)
            bands = RunBands()
            plot.addItem(bands, ignoreBounds=True)
            self.bands[name] = bands
            self.plots[name] = plot
            stretch = {"runs": 0, "reasons": 0}.get(name, 2)
            layout.addWidget(plot, stretch)
        self.plots["runs"].getPlotItem().getAxis("left").setStyle(showValues=False)
        self.plots["runs"].setYRange(0.0, 1.0, padding=0)
        self.labels = RunLabels(self.plots["runs"], NORMAL.foreground)
        self.plots["runs"].getViewBox().sigXRangeChanged.connect(self._place_labels)
        self.plots["reasons"].setLabel("bottom", "session time (s)")
        self.reasons = ReasonStrip(self.plots["reasons"], self._fit_strips)
        self.plots["clocks"].addItem(self.max_clock_line, ignoreBounds=True)
        self.max_clock_line.hide()
        self.plots["power"].addItem(self.limit_line, ignoreBounds=True)
        self.limit_line.hide()
        for name in TRIAL_PLOTS:
            self.trial_bands[name] = RunBands()
            self.plots[name].addItem(self.trial_bands[name], ignoreBounds=True)
        for name, plot in self.plots.items():
            if name in ("clocks", "power", "gpm"):
                plot.getPlotItem().vb.disableAutoRange(axis=pg.ViewBox.YAxis)
            if name in LEGEND_PLOTS:  # what each curve is, never over the curves
                legend_above(plot, AXIS_WIDTH_PX, self.theme)
            plot.setMinimumHeight(44 if name in ("runs", "reasons") else MIN_PLOT_PX)
        self.plots["gpm"].setYRange(0.0, 105.0, padding=0)
        self.gpm_note = QLabel("no GPM metrics in these samples (null: not reported by this "
                               "GPU or driver)", self.plots["gpm"])
        self.gpm_note.move(AXIS_WIDTH_PX + 12, 8)
        self.gpm_note.adjustSize()
        self.gpm_note.hide()
        self.hovers = {name: HoverReadout(plot, functools.partial(self._describe_at, name))
                       for name, plot in self.plots.items()}
        for field, (plot_name, legend, color, dashed) in CURVES.items():
            style = pg.QtCore.Qt.PenStyle.DashLine if dashed else pg.QtCore.Qt.PenStyle.SolidLine
            pen = pg.mkPen(color, width=1, style=style)
            # the GPM legend lists only the metrics the GPU reported (see _draw_gpm_legend)
            shown = None if plot_name == "gpm" else legend
            curve = self.plots[plot_name].plot([], [], pen=pen, name=shown, connect="finite")
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
            self.curves[field] = curve

    def charts(self) -> dict[str, pg.PlotWidget]:
        self.ensure_built()
        return {f"telemetry_{name}": plot for name, plot in self.plots.items()}

    def picture_chrome(self) -> list[QWidget]:
        """What an exported picture leaves out: the buttons that steer the time axis."""
        return [self.follow_button, self.whole_button]

    def bind(self, store: SessionStore) -> None:
        self.store = store

    def set_level(self, level_id: str) -> bool:
        """The selected level's run windows are drawn stronger (every chart shows it)."""
        self.selected = level_id
        if self.store is not None and self.plots:  # (not built yet: drawn when built)
            for name in PLOTS:
                self._draw_bands(name)
        return True

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        if not self.plots:
            return  # applied when built
        for plot in self.plots.values():
            plot.setBackground(theme.background)
            plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
            item = plot.getPlotItem()
            for axis in ("left", "bottom"):
                item.getAxis(axis).setPen(theme.foreground)
                item.getAxis(axis).setTextPen(theme.foreground)
        self.max_clock_line.setPen(pg.mkPen(theme.foreground, width=1,
                                            style=pg.QtCore.Qt.PenStyle.DashLine))
        self.max_clock_line.label.setColor(theme.foreground)
        self.labels.set_color(theme.foreground)
        for name in LEGEND_PLOTS:  # on stage the unit alone: the legend says what it is
            self.plots[name].getPlotItem().getAxis("left").setLabel(self.axis_title(name))
        for plot in self.plots.values():  # large presentation fonts need a wider axis
            plot.getPlotItem().getAxis("left").setWidth(self.axis_px())
            if plot.getPlotItem().legend is not None:
                restyle_legend(plot, self.axis_px(), theme)
        self._fit_strips()
        self._fit_plots()

    # ------------------------------------------------------------- following
    def _user_moved(self, name: str) -> None:
        """The user panned or zoomed plot ``name``: stop following, the others with it."""
        self.follow_button.setChecked(False)  # the user looks somewhere: stop following
        lo, hi = self.plots[name].getViewBox().viewRange()[0]
        self._set_x_everywhere(lo, hi, padding=0)

    def _set_x_everywhere(self, lo: float, hi: float, padding: float) -> None:
        for plot in self.plots.values():
            plot.setXRange(lo, hi, padding=padding)

    def _follow_toggled(self, on: bool) -> None:
        if on:
            self._follow()

    def show_whole_session(self) -> None:
        self.ensure_built()
        self.follow_button.setChecked(False)
        end = self.store.last_t_s if self.store is not None else 0.0  # samples or not
        self._set_x_everywhere(0.0, max(end, 1e-3), padding=0.01)

    def show_runs(self, level: str, shape: Shape | None, mode: Mode) -> bool:
        """The time axis on the span of ``level``'s runs at ``shape`` in ``mode`` (a talk's scene:
        the runs its caption names, not wherever the session ended); following stops.
        False where the session has no such run (the axis stays where it was)."""
        if self.store is None:
            return False
        span = runs_span(self.store.run_windows(), level, shape, mode)
        if span is None:
            return False
        self.ensure_built()
        # the session is this one: a refresh must not start it afresh (following again)
        self._generation = self.store.generation
        self.follow_button.setChecked(False)
        lo, hi = span
        self._set_x_everywhere(lo, max(hi, lo + 1e-3), padding=0.05)
        return True

    def _newest(self) -> float:
        """Where following ends: the newest NVML sample, else (no samples) the latest
        event. A recording's samples may end before its events (an ncu step after the
        runner's sampler stopped): following them keeps the curves on screen."""
        if self.store is None:
            return 0.0
        tele = self.store.telemetry
        return tele.last_t if tele.count else self.store.last_t_s

    def _follow(self) -> None:
        """Every plot to the newest time now (following turned on)."""
        if self._follow_target():
            for name in self.plots:
                self._follow_plot(name)

    def _follow_target(self) -> bool:
        """Where following puts the time axis; False when not following."""
        if not self.follow_button.isChecked() or not self.plots:
            self._x_range = None
            return False
        end = (np.floor(self._newest() / STEP_S) + 1) * STEP_S
        self._x_range = (max(0.0, end - WINDOW_S), float(end))
        return True

    def _follow_plot(self, name: str) -> None:
        """One plot to where following puts the time axis (unchanged: nothing to do, so
        its axes and grid are not drawn again)."""
        if self._x_range is None or not self.follow_button.isChecked():
            return
        vb = self.plots[name].getViewBox()
        if tuple(vb.targetRange()[0]) != self._x_range:
            vb.setXRange(*self._x_range, padding=0)

    # ------------------------------------------------------------- drawing
    def showEvent(self, event: QShowEvent) -> None:
        self.ensure_built()
        super().showEvent(event)
        self._fit_plots()
        self.refresh({Change.TELEMETRY, Change.HEADER})
        self.settle()  # a tab just shown: whole at once, not a plot a frame

    def refresh(self, changes: set[Change]) -> None:
        """The status line and reference lines now; each plot in a part of its own (one a
        frame, :meth:`step`): six plots redrawn at once cost more than a 60 Hz frame has."""
        if self.store is None or not changes & SHOWN_CHANGES:
            return
        if not self.isVisible():
            return  # drawn when shown
        self.ensure_built()
        store = self.store
        if store.generation != self._generation:  # a new session: start afresh
            self._generation = store.generation
            self._drawn_samples = -1
            self.follow_button.setChecked(True)
        self._draw_status()
        self._draw_reference_lines()
        if store.telemetry.count != self._drawn_samples or Change.HEADER in changes:
            self._drawn_samples = store.telemetry.count
            self._curves_owed |= set(PLOTS)
        windows = store.run_windows()
        self._first_label = min(self._first_label, next(
            (i for i, (a, b) in enumerate(zip(windows, self.windows, strict=False)) if a != b),
            min(len(windows), len(self.windows))))
        self.windows = windows
        self._follow_target()  # each plot takes the step with its part
        self._parts += [n for n in PLOTS if n not in self._parts]

    def _draw_part(self, name: str) -> None:
        """One plot: its curves (if samples came), run and trial bands, time axis."""
        assert self.store is not None
        self._follow_plot(name)
        if name in self._curves_owed:
            self._curves_owed.discard(name)
            if name == "reasons":
                self.reasons.draw(self.store.telemetry)
            else:
                self._draw_curves(name)
        self._draw_bands(name)
        if name == "runs":
            self.labels.draw(self.windows, self._first_label)
            self._first_label = len(self.windows)

    def _draw_bands(self, name: str) -> None:
        """The run windows (the selected level's stronger) and trial windows of a plot."""
        assert self.store is not None
        spans = np.array([(w.start_s, w.end_s) for w in self.windows]).reshape(-1, 2)
        self.bands[name].set_spans(spans, [band_color(w, self.selected) for w in self.windows])
        if name in self.trial_bands:
            trials = np.array(self.store.trial_spans, dtype=np.float64).reshape(-1, 2)
            self.trial_bands[name].set_spans(trials, [TRIAL_BAND] * len(trials))

    def _draw_status(self) -> None:
        assert self.store is not None
        text = status_text(self.store)
        if self.status.text() != text:
            self.status.setText(text)

    def _draw_reference_lines(self) -> None:
        assert self.store is not None
        max_mhz = self.store.sm_clock_max_mhz()
        if max_mhz is None:
            self.max_clock_line.hide()
        else:
            if self.max_clock_line.value() != max_mhz or not self.max_clock_line.isVisible():
                self.max_clock_line.show()  # first: a hidden label does not take new text
                self.max_clock_line.setValue(max_mhz)
                self.max_clock_line.label.setFormat(f"max SM clock {max_mhz:.0f} MHz")
        limit = self.store.power_limit_w()
        if limit is None:
            self.limit_line.hide()
        elif self.limit_line.value() != limit or not self.limit_line.isVisible():
            self.limit_line.show()
            self.limit_line.setValue(limit)
            self.limit_line.label.setFormat(f"power limit {limit:.0f} W")
        kind = self.store.telemetry.power_kind
        text = "power" + (f" ({POWER_KIND_TEXT.get(kind, kind)})" if kind else "")
        if text != self._power_label:  # in the legend: the axis label has no room for it
            self._power_label = text
            self.plots["power"].base_title = f"Power (W), {text}"
            # the entries made again (LabelItem.setText on a legend entry left a resize
            # pending that crashed the interpreter when the window was torn down)
            legend = self.plots["power"].getPlotItem().legend
            legend.clear()
            legend.addItem(self.curves["power_w"], html_text(text))  # LabelItem: HTML
            legend.addItem(self.curves["power_limit_w"], CURVES["power_limit_w"][1])
            place_legend(self.plots["power"], self.axis_px())

    def axis_title(self, name: str) -> str:
        """A plot's left axis title: its quantity and unit; on stage the unit alone (the
        legend above the plot names the curves), so a plot needs no more height than
        its ticks and the tab holds clocks, power and temperature at 1280x720."""
        return UNITS[name] if self.theme.name != "normal" else PLOTS[name]

    def axis_px(self) -> int:
        """The left axes' width: room for a reason's name, or the presentation type."""
        return max(AXIS_WIDTH_PX, 10 * self.theme.font_pt)

    def power_legend_label(self) -> pg.LabelItem:
        legend = self.plots["power"].getPlotItem().legend
        return next(label for sample, label in legend.items
                    if sample.item is self.curves["power_w"])

    def _draw_curves(self, plot_name: str) -> None:
        assert self.store is not None
        tele = self.store.telemetry
        top = 0.0
        for field, curve in self.curves.items():
            if CURVES[field][0] != plot_name:
                continue
            if not tele.has_values(field):
                curve.setData([], [])  # a field the GPU does not report draws nothing
                curve.hide()
                continue
            t, values = tele.arrays(field)
            curve.setData(t, values)
            curve.show()
            top = max(top, finite_top(values))
        if plot_name == "gpm":
            self._draw_gpm_legend()
        elif plot_name == "clocks":
            self._set_y("clocks", 1.08 * max(top, self.store.sm_clock_max_mhz() or 0.0, 1.0))
        elif plot_name == "power":
            self._set_y("power", 1.08 * max(top, self.store.power_limit_w() or 0.0, 1.0))

    def _set_y(self, name: str, top: float) -> None:
        top = min(max(top, 1.0), MAX_AXIS) if np.isfinite(top) else 1.0
        step = 2 * 10 ** (np.floor(np.log10(top)) - 1)  # rounded up: the axis rarely changes
        y_range = (0.0, float(np.ceil(top / step) * step))
        if self._y_ranges.get(name) != y_range:
            self._y_ranges[name] = y_range
            self.plots[name].setYRange(*y_range, padding=0)

    def _draw_gpm_legend(self) -> None:
        shown = [f for f in GPM_FIELDS if self.curves[f].isVisible()]
        assert self.store is not None
        self.gpm_note.setVisible(not shown and self.store.telemetry.count > 0)
        if shown == self._gpm_legend:
            return
        self._gpm_legend = shown
        legend = self.plots["gpm"].getPlotItem().legend
        legend.clear()
        for field in shown:
            legend.addItem(self.curves[field], CURVES[field][1])
        place_legend(self.plots["gpm"], self.axis_px())

    def _place_labels(self, *_args: object) -> None:
        self.labels.place()

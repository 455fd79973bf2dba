"""The two strips of the telemetry view: run labels (top) and clock-event reasons (bottom).

Both draw into a pyqtgraph plot that shares the view's time axis. Labels are made once
per run and reused; the reason strip is one BarGraphItem for every interval of every
reason. What they show is kept on them (``labels``, ``rows``, :meth:`ReasonStrip.spans`)
so tests read back what is drawn.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg

from ...kernels.protocol import THROTTLE_MARK
from ...kernels.results import NOT_VERIFIED
from ..core.telemetry import RunEnd, RunWindow, TelemetryBuffer
from ..theme import FAILED_COLOR

# the slowdowns (kernels.throttle: the other reasons are not drawn); unknown ones grey
REASON_COLORS = {"SwPowerCap": FAILED_COLOR, "HwSlowdown": "#8c564b",
                 "SwThermalSlowdown": "#ff7f0e", "HwThermalSlowdown": "#e377c2",
                 "HwPowerBrakeSlowdown": "#bcbd22"}
BAND_COLORS = {RunEnd.RESULT: "#1f77b433", RunEnd.ERROR: FAILED_COLOR + "55",
               RunEnd.STOPPED: "#7f7f7f44", RunEnd.RUNNING: "#2ca02c44"}
THROTTLED_BAND = "#ff7f0e55"
TRIAL_BAND = "#9467bd40"  # a sustained run's trial window (the GPU loaded back to back)
LABEL_REACH_PX = 600  # run labels are placed from this far left of the view
BAR_HEIGHT = 0.7  # of a reason row


SELECTED_ALPHA = "99"  # the selected level's runs: the same hue, more opaque


def band_color(w: RunWindow, selected: str | None = None) -> str:
    """A run window's colour (``#rrggbbaa``); the selected level's runs stand out."""
    if not w.verified:
        color = BAND_COLORS[RunEnd.ERROR]
    else:
        color = THROTTLED_BAND if w.throttled else BAND_COLORS[w.end]
    return color[:7] + SELECTED_ALPHA if selected is not None and w.level == selected \
        else color


def window_label(w: RunWindow) -> str:
    mark = {RunEnd.ERROR: " ✗", RunEnd.STOPPED: " (stopped)", RunEnd.RUNNING: " …"}
    wrong = "" if w.verified else f" ✗ {NOT_VERIFIED}"
    return w.label() + (f" {THROTTLE_MARK}" if w.throttled else "") + mark.get(w.end, "") + wrong


class RunLabels:
    """One text label per run window (level and shape) on two alternating lines; a label
    that would run into the previous one on its line is hidden until the user zooms in."""

    def __init__(self, plot: pg.PlotWidget, color: str):
        self.plot = plot
        self.color = color
        self.labels: list[pg.TextItem] = []
        self.x = np.zeros(0)  # where each run starts (session time)
        self.end = np.zeros(0)  # where each run ends
        # (the owner widget calls place() when the time range changes: a connection to a
        # plain Python object outlives the plot at teardown and crashed the interpreter)

    def set_color(self, color: str) -> None:
        self.color = color
        for label in self.labels:
            label.setColor(color)

    def draw(self, windows: list[RunWindow], first: int) -> None:
        """Label ``windows``; those before ``first`` are unchanged since the last call."""
        self.x = np.array([w.start_s for w in windows], dtype=np.float64)
        self.end = np.array([w.end_s for w in windows], dtype=np.float64)
        while len(self.labels) < len(windows):
            label = pg.TextItem("", anchor=(0, 0), color=self.color)
            self.plot.addItem(label, ignoreBounds=True)
            self.labels.append(label)
        while len(self.labels) > len(windows):
            self.plot.removeItem(self.labels.pop())
        for i in range(first, len(windows)):
            w, label = windows[i], self.labels[i]
            text = window_label(w)
            if label.toPlainText() != text:
                label.setText(text)
            label.setPos(w.start_s, self.line_y(i))  # place() may move it to the left edge
        self.place()

    @staticmethod
    def line_y(i: int) -> float:
        return 1.0 if i % 2 == 0 else 0.5  # neighbours alternate between two lines

    def place(self, *_args: object) -> None:
        """Place and show the labels that fit, the runs most in view first: a run that
        began left of the view has its label at the view's left edge, and a sliver of a
        run at an edge must not take the place of the run the view is on (a talk's scene
        zoomed to one run). Only labels near the visible time range are placed (the
        others are not painted)."""
        if not self.labels:
            return
        vb = self.plot.getViewBox()
        px = vb.viewPixelSize()[0]
        (left, right), _ = vb.viewRange()
        reach = LABEL_REACH_PX * px  # a label starting this far left may still show
        # runs follow one another, so their ends are sorted too: from the first run that
        # ends in (or just left of) the view; labels before it lie left of the view
        lo = int(np.searchsorted(self.end, left - reach, side="left"))
        hi = int(np.searchsorted(self.x, right, side="right"))
        near = range(max(0, lo - lo % 2), hi)
        seen = {i: min(float(self.end[i]), right) - max(float(self.x[i]), left) for i in near}
        taken: list[list[tuple[float, float]]] = [[], []]  # per line: shown labels' spans
        for i in sorted(near, key=lambda i: (-seen[i], i)):
            label = self.labels[i]
            if self.end[i] <= left:  # a run wholly left of the view: no label to block others
                if label.isVisible():
                    label.setVisible(False)
                continue
            width = label.textItem.boundingRect().width() * px
            # at the view's left edge for a run begun before it; moved in from the right
            # edge where it would run past it (the last run's label was cut there)
            x = max(left, min(max(float(self.x[i]), left), right - width))
            if label.pos().x() != x:
                label.setPos(x, self.line_y(i))
            gap = 8 * px
            fits = all(x + width + gap <= a or x >= b + gap for a, b in taken[i % 2])
            if label.isVisible() != fits:
                label.setVisible(fits)
            if fits:
                taken[i % 2].append((x, x + width))


class ReasonStrip:
    """A row per clock-event reason seen (row 0 at the bottom), a bar where it was active."""

    def __init__(self, plot: pg.PlotWidget, rows_changed: Callable[[], None]):
        self.plot = plot
        self.rows: list[str] = []
        self.rows_changed = rows_changed  # the owner resizes the strip
        self.bars = pg.BarGraphItem(x0=[0.0], x1=[0.0], y0=[0.0], height=[0.0])
        plot.addItem(self.bars)
        self.bars.hide()

    def draw(self, tele: TelemetryBuffer) -> None:
        rows = list(tele.reason_bits)
        x0, x1, y0, brushes = [], [], [], []
        for row, reason in enumerate(rows):
            spans = tele.reason_intervals(reason)
            x0 += list(spans[:, 0])
            x1 += list(spans[:, 1])
            y0 += [row - BAR_HEIGHT / 2] * len(spans)
            brushes += [pg.mkBrush(REASON_COLORS.get(reason, "#7f7f7f"))] * len(spans)
        if x0:
            self.bars.setOpts(x0=np.array(x0), x1=np.array(x1), y0=np.array(y0),
                              height=np.full(len(x0), BAR_HEIGHT), brushes=brushes,
                              pens=[pg.mkPen(None)] * len(x0))
            self.bars.show()
        else:
            self.bars.hide()
        if rows != self.rows:
            self.rows = rows
            self.plot.getPlotItem().getAxis("left").setTicks([list(enumerate(rows))])
            self.plot.setYRange(-0.5, max(len(rows), 1) - 0.5, padding=0)
            self.rows_changed()

    def spans(self, reason: str) -> np.ndarray:
        """The [start, end) spans drawn in ``reason``'s row (read back from the bars)."""
        if reason not in self.rows or not self.bars.isVisible():
            return np.zeros((0, 2))
        opts = self.bars.opts
        mine = np.isclose(np.asarray(opts["y0"]), self.rows.index(reason) - BAR_HEIGHT / 2)
        return np.column_stack([np.asarray(opts["x0"])[mine], np.asarray(opts["x1"])[mine]])

    def active_at(self, t: float) -> list[str]:
        return [r for r in self.rows if any(a <= t < b for a, b in self.spans(r))]

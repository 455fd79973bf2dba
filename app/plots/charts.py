"""The charts (pyqtgraph): per-repeat stream, ladder bars, size sweep; hover readouts.

Charts read the :class:`SessionStore` and redraw from it when told what changed
(``refresh``); the main window coalesces those calls, so a chart redraws at a bounded
rate however fast events arrive. Every chart keeps the numbers it drew (``shown``) so
tests and exports read back exactly what is on screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsItem, QWidget

from ...kernels.rows import (
    DASH,
    MINUS,
    NOT_VERIFIED,
    gflop_per_j_text,
    pct_text,
    sustained_ratio,
    tflops_text,
)
from ...kernels.throttle import THROTTLE_MARK
from ..core.store import Change, SessionStore
from ..theme import NORMAL, THROTTLE_COLOR, Theme, precision_color

pg.setConfigOptions(antialias=False, useOpenGL=False)
# the largest axis value drawn: a recording's absurd number (1e308) must not overflow the
# range arithmetic (pyqtgraph refuses a range of inf or nan)
MAX_AXIS = 1e15


def finite_or_zero(values: list[float | None]) -> np.ndarray:
    """Values as floats; None, NaN, infinities and |v| > MAX_AXIS become 0."""
    out = np.array([v if isinstance(v, int | float) else 0.0 for v in values], dtype=float)
    out[~np.isfinite(out) | (np.abs(out) > MAX_AXIS)] = 0.0
    return out


def finite_top(values: np.ndarray, headroom: float = 1.0) -> float:
    """The top of an axis over ``values``: their finite maximum times ``headroom``,
    at least 1e-9 and at most MAX_AXIS."""
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 0.0
    return float(min(max(top, 1e-9) * headroom, MAX_AXIS))


class HoverReadout:
    """Shows the exact value of the data point nearest the mouse in a text item."""

    last_pointed: pg.PlotWidget | None = None  # the chart the mouse was last over (exports)

    def __init__(self, plot: pg.PlotWidget, describe: Callable[[float, float], str | None]):
        self.plot = plot
        self.describe = describe
        self.label = pg.TextItem("", anchor=(0, 1), color="#202020", fill="#ffffffd0")
        self.label.setZValue(100)
        self.label.hide()
        plot.addItem(self.label, ignoreBounds=True)
        plot.scene().sigMouseMoved.connect(self._moved)
        self.text = ""

    def _moved(self, pos: QPointF) -> None:
        vb = self.plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            self.label.hide()
            return
        HoverReadout.last_pointed = self.plot
        p = vb.mapSceneToView(pos)
        self.show_at(p.x(), p.y())

    def show_at(self, x: float, y: float) -> None:
        text = self.describe(x, y)
        self.text = text or ""
        if not text:
            self.label.hide()
            return
        self.label.setText(text)
        self.label.setPos(x, y)
        self.label.show()


def _nearest(xs: np.ndarray, x: float) -> int | None:
    if len(xs) == 0:
        return None
    return int(np.argmin(np.abs(xs - x)))


class _Chart(pg.PlotWidget):
    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(parent=parent)
        self.base_title = title
        self.theme = NORMAL
        self.store: SessionStore | None = None
        self.setMinimumSize(240, 160)
        for name in ("left", "bottom"):
            axis = self.getPlotItem().getAxis(name)
            # an axis repaints from a pixmap unless its range or ticks changed, and draws
            # major ticks and grid lines only: the minor grid costs ~5 ms per redraw here
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            axis.setStyle(maxTickLevel=0, maxTextLevel=0)
        self.apply_theme(NORMAL)

    def set_title_text(self, title: str) -> None:
        if title != self.base_title or not self.getPlotItem().titleLabel.text:
            self.base_title = title
            self.setTitle(title, color=self.theme.foreground)

    def bind(self, store: SessionStore) -> None:
        self.store = store

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.setBackground(theme.background)
        item = self.getPlotItem()
        item.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(theme.foreground)
            axis.setTextPen(theme.foreground)
        self.setTitle(self.base_title, color=theme.foreground, size=f"{theme.font_pt + 2}pt")


class StreamChart(_Chart):
    """TFLOPS of each timed repeat of the run in progress (or the last run)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Per-repeat TFLOPS", parent)
        self.setLabel("bottom", "repeat")
        self.setLabel("left", "TFLOPS")
        self.curve = self.plot([], [], pen=pg.mkPen("#1f77b4", width=1), symbol="o",
                               symbolSize=5, symbolBrush="#1f77b4")
        self.curve.setDownsampling(auto=True, method="peak")
        self.curve.setClipToView(True)
        self.shown = (np.zeros(0), np.zeros(0))
        self._color = ""
        self._symbols = True
        self._x_range = (0.0, 0.0)
        self._y_range = (0.0, 0.0)
        self._y_run: tuple[Any, Any] | None = None
        self.getPlotItem().vb.disableAutoRange()
        self.hover = HoverReadout(self, self._describe)

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        self._color = ""  # pen width follows the theme

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & {Change.STREAM, Change.HEADER}:
            return
        stream = self.store.stream
        x, y = stream.arrays()
        self.shown = (x, y)
        level = self.store.level(stream.level) if stream.level else None
        color = precision_color(level.precision) if level else "#1f77b4"
        if color != self._color:
            self._color = color
            self.curve.setPen(pg.mkPen(color, width=self.theme.line_px))
            self.curve.setSymbolBrush(color)
        few = len(x) <= 100
        if few != self._symbols:
            self._symbols = few
            self.curve.setSymbol("o" if few else None)
        self.curve.setData(x, y)
        self._fit(x, y, stream.expected)
        if stream.level:
            prec = f", {level.precision.upper()}" if level else ""
            self.set_title_text(f"Per-repeat TFLOPS — {stream.level} at {stream.shape}{prec}")
        else:
            self.set_title_text("Per-repeat TFLOPS")

    def _fit(self, x: np.ndarray, y: np.ndarray, expected: int) -> None:
        """Set the view range only when the data leaves it (axes repaint only then)."""
        keep = np.isfinite(x) & np.isfinite(y)
        x, y = x[keep], y[keep]
        if len(x) == 0:
            return
        last = float(x.max()) + 1
        width = float(expected) if expected >= last else float(1 << int(last - 1).bit_length())
        x_range = (float(x.min()) - 0.5, float(x.min()) + width - 0.5)
        lo, hi = float(y.min()), float(y.max())
        y0, y1 = self._y_range
        span = max(hi - lo, abs(hi) * 0.05, 1e-9)
        new_run = (self.store.stream.level, self.store.stream.shape) != self._y_run \
            if self.store is not None else True
        if new_run or lo < y0 or hi > y1:
            # grow within a run (new extremes), start afresh for a new run; wide margins
            # so a stream of similar values leaves the range (and the axes) alone
            if not new_run:
                lo, hi = min(lo, y0), max(hi, y1)
            self._y_range = (lo - 0.5 * span, hi + 0.5 * span)
            self._y_run = (self.store.stream.level, self.store.stream.shape) \
                if self.store is not None else None
            self.setYRange(*self._y_range, padding=0)
        if x_range != self._x_range:
            self._x_range = x_range
            self.setXRange(*x_range, padding=0)

    def _describe(self, x: float, y: float) -> str | None:
        i = _nearest(self.shown[0], x)
        if i is None:
            return None
        return f"repeat {int(self.shown[0][i])}: {self.shown[1][i]:.4g} TFLOPS"


class LadderBars(_Chart):
    """One bar per level at the ladder shape: TFLOPS or % of cuBLAS, coloured by precision."""

    PAIR = "burst vs sustained TFLOPS"
    METRICS = ("TFLOPS", "% of cuBLAS (same precision)", "GFLOP/J", PAIR)
    METRIC_KEYS: ClassVar[dict[str, str]] = {
        "TFLOPS": "tflops", "% of cuBLAS (same precision)": "pct_ref", "GFLOP/J": "gflop_per_j",
        PAIR: "tflops"}
    # the energy ladder is read from sustained runs where there are some (docs/energy.md)
    GFLOP_PER_J_AXIS = "GFLOP/J (sustained where measured, else burst)"
    THROTTLE_LEGEND = f"{THROTTLE_MARK} dashed outline: clocks held back (throttled)"
    SUSTAINED_LEGEND = "pale bar: sustained TFLOPS (back to back, same shape)"
    PAIR_OFFSET = 0.2  # burst bar left of the level's tick, sustained right

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Ladder", parent)
        # (not "metric": that name would shadow QWidget.metric(), which Qt calls)
        self.bar_metric = self.METRICS[0]
        self.bars: pg.BarGraphItem | None = None
        self.sustained_bars: pg.BarGraphItem | None = None  # burst vs sustained only
        self.legend_sustained = False
        self.labels: list[pg.TextItem] = []
        self.rows: list[dict[str, Any]] = []  # what the bars show, one dict per level
        self._axis_label = ""
        self.legend = self.addLegend(offset=(10, 5))
        self.legend_precisions: list[str] = []  # precisions listed in the legend
        self.legend_throttle = False  # the legend explains the throttle outline
        self._legend_color = ""
        self._ticks: list[tuple[int, str]] = []
        self._view: tuple[int, float] = (0, 0.0)
        self.getPlotItem().getAxis("bottom").setStyle(tickTextOffset=4)
        self.hover = HoverReadout(self, self._describe)

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        # two lines of tick labels (names alternate between lines)
        self.getPlotItem().getAxis("bottom").setHeight(int(theme.font_pt * 4.5) + 10)
        for label in getattr(self, "labels", []):
            self.getPlotItem().removeItem(label)
        self.labels = []  # made again in the new theme's colour

    def set_metric(self, metric: str) -> None:
        self.bar_metric = metric
        self.refresh({Change.LADDER})

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & {Change.LADDER, Change.HEADER}:
            return
        store = self.store
        self.rows = []
        for lv in store.ladder_levels():
            r = store.ladder_result(lv.id)
            if r is None:
                continue
            row = store.row(r)
            sustained = store.sustained_result(lv.id, r.shape)
            per_j = sustained if sustained is not None and \
                sustained.gflop_per_j is not None else r
            self.rows.append({"level": lv.id, "precision": r.precision, "tflops": r.tflops,
                              "pct_ref": row.pct_of_reference,
                              "pct_peak": row.pct_of_peak, "shape": str(r.shape),
                              "verified": r.verified, "gflop_per_j": per_j.gflop_per_j,
                              "gflop_per_j_mode": per_j.mode if per_j.gflop_per_j is not None
                              else None,
                              "sustained_tflops": sustained.tflops if sustained else None,
                              "ratio": sustained_ratio(r, sustained),
                              "throttled": r.throttled})
        self._draw()

    def values(self) -> np.ndarray:
        """Bar heights; a value that is missing or not a finite number draws no bar."""
        key = self.METRIC_KEYS[self.bar_metric]
        return finite_or_zero([row[key] for row in self.rows])

    def sustained_values(self) -> np.ndarray:
        """The sustained bars' heights (burst vs sustained); 0 where none was run."""
        return finite_or_zero([row["sustained_tflops"] for row in self.rows])

    def axis_label(self) -> str:
        return {"GFLOP/J": self.GFLOP_PER_J_AXIS, self.PAIR: "TFLOPS"}.get(
            self.bar_metric, self.bar_metric)

    def _label_text(self, row: dict[str, Any]) -> str:
        """The text over a level's bar(s): its value, then % of cuBLAS and the marks (or,
        burst vs sustained, the sustained change; GFLOP/J, the mode it is from)."""
        pct = DASH if row["pct_ref"] is None else f"{row['pct_ref']:.0f}%"
        mark = ("" if row["verified"] else " ✗") + \
            (f" {THROTTLE_MARK}" if row["throttled"] else "")
        if self.bar_metric == "GFLOP/J":
            return f"{gflop_per_j_text(row['gflop_per_j'])} GFLOP/J\n" \
                f"{row['gflop_per_j_mode'] or DASH}{mark}"
        if self.bar_metric == self.PAIR:
            change = DASH if row["ratio"] is None else \
                f"{100 * (row['ratio'] - 1):+.0f}%".replace("-", MINUS)
            return f"{tflops_text(row['tflops'])}\nsust. {change}{mark}"
        return f"{tflops_text(row['tflops'])}\n{pct}{mark}"

    def _draw_sustained(self, x: np.ndarray) -> np.ndarray:
        """The pale sustained bars beside the burst ones; their heights (0: hidden)."""
        pair = self.bar_metric == self.PAIR
        if not pair:
            if self.sustained_bars is not None:
                self.sustained_bars.hide()
            return np.zeros(len(x))
        heights = self.sustained_values()
        brushes = []
        for row in self.rows:
            color = QColor(precision_color(row["precision"]))
            color.setAlpha(110)
            brushes.append(pg.mkBrush(color))
        opts = {"x": x + self.PAIR_OFFSET, "height": heights, "width": 0.38,
                "brushes": brushes, "pen": pg.mkPen(self.theme.foreground, width=1)}
        if self.sustained_bars is None:
            self.sustained_bars = pg.BarGraphItem(**opts)
            self.getPlotItem().addItem(self.sustained_bars)
        else:
            self.sustained_bars.setOpts(**opts)
        self.sustained_bars.show()
        if not self.legend_sustained:
            self.legend_sustained = True
            sample = pg.ScatterPlotItem(symbol="s", size=10, pen=None,
                                        brush=pg.mkBrush(QColor(128, 128, 128, 110)))
            self.legend.addItem(sample, self.SUSTAINED_LEGEND)
        return heights

    def _draw(self) -> None:
        """Update the bar item and its labels in place (no items made per redraw)."""
        plot = self.getPlotItem()
        shape = self.store.ladder_shape() if self.store else None
        self.set_title_text(f"Ladder — {self.bar_metric}" + (f" at {shape}" if shape else ""))
        if self.axis_label() != self._axis_label:
            self._axis_label = self.axis_label()
            self.setLabel("left", self._axis_label)
        n = len(self.rows)
        x = np.arange(n, dtype=float)
        heights = self.values()
        pair_heights = self._draw_sustained(x)
        width = 0.38 if self.bar_metric == self.PAIR else 0.7
        bar_x = x - self.PAIR_OFFSET if self.bar_metric == self.PAIR else x
        brushes = [pg.mkBrush(precision_color(row["precision"])) for row in self.rows]
        plain = pg.mkPen(self.theme.foreground, width=1)
        # (pyqtgraph 0.14's BarGraphItem fails on an empty pens list: one pen then)
        pens = [self.throttle_pen() if row["throttled"] else plain for row in self.rows] \
            or None
        if self.bars is None:
            self.bars = pg.BarGraphItem(x=bar_x, height=heights, width=width, brushes=brushes,
                                        pens=pens, pen=plain)
            plot.addItem(self.bars)
        else:
            self.bars.setOpts(x=bar_x, height=heights, width=width, brushes=brushes,
                              pens=pens, pen=plain)
        if self._legend_color != self.theme.foreground:
            self._legend_color = self.theme.foreground
            self.legend.setLabelTextColor(self.theme.foreground)
        for prec in dict.fromkeys(row["precision"] for row in self.rows):
            if prec not in self.legend_precisions:
                sample = pg.ScatterPlotItem(symbol="s", size=10, pen=None,
                                            brush=pg.mkBrush(precision_color(prec)))
                self.legend.addItem(sample, f"{prec.upper()}: % of cuBLAS {prec.upper()}")
                self.legend_precisions.append(prec)
        if any(row["throttled"] for row in self.rows) and not self.legend_throttle:
            self.legend_throttle = True
            sample = pg.ScatterPlotItem(symbol="s", size=10, brush=None,
                                        pen=self.throttle_pen())
            self.legend.addItem(sample, self.THROTTLE_LEGEND)
        while len(self.labels) < n:
            label = pg.TextItem("", anchor=(0.5, 1), color=self.theme.foreground)
            plot.addItem(label)
            self.labels.append(label)
        while len(self.labels) > n:
            plot.removeItem(self.labels.pop())
        tops = np.maximum(heights, pair_heights)
        for i, row in enumerate(self.rows):
            # whole percents: a bar's label has little room (the hover has the table's)
            text = self._label_text(row)
            label = self.labels[i]
            if label.toPlainText() != text:
                label.setText(text, color=self.theme.foreground)
            if label.pos().x() != i or label.pos().y() != tops[i]:
                label.setPos(i, tops[i])
        # long level names alternate between two lines so neighbours do not overlap
        ticks = [(i, ("\n" if i % 2 else "") + row["level"]) for i, row in enumerate(self.rows)]
        if ticks != self._ticks:
            self._ticks = ticks
            plot.getAxis("bottom").setTicks([ticks])
        headroom = 1.2 if self.theme.font_pt < 14 else 1.4  # room for the value labels
        top = finite_top(tops, headroom) if n else 1.0
        view = (n, top)
        if view != self._view:
            self._view = view
            # the right margin leaves room for half of the last (long) name: pyqtgraph
            # drops a tick label that would reach past the axis
            plot.setXRange(-0.6, max(n, 1) - 0.1, padding=0)
            plot.setYRange(0, top, padding=0)

    def _describe(self, x: float, y: float) -> str | None:
        i = round(x)
        if not 0 <= i < len(self.rows):
            return None
        row = self.rows[i]
        pct_ref, pct_peak = pct_text(row["pct_ref"]), pct_text(row["pct_peak"])
        prec = row["precision"].upper()
        per_j = "" if row["gflop_per_j"] is None else \
            f"\n{gflop_per_j_text(row['gflop_per_j'])} GFLOP/J ({row['gflop_per_j_mode']})"
        if row["sustained_tflops"] is not None:
            per_j += f"\nsustained {tflops_text(row['sustained_tflops'])} TFLOPS"
        held = f"\n{THROTTLE_MARK} clocks held back: {', '.join(row['throttled'])}" \
            if row["throttled"] else ""
        return (f"{row['level']} ({prec}) at {row['shape']}\n{tflops_text(row['tflops'])} "
                f"TFLOPS\n{pct_ref} of cuBLAS {prec}\n{pct_peak} of {prec} peak{per_j}"
                + ("" if row["verified"] else f"\n{NOT_VERIFIED}") + held)

    def throttle_pen(self) -> QPen:
        return pg.mkPen(THROTTLE_COLOR, width=2, style=Qt.PenStyle.DashLine)


class SweepChart(_Chart):
    """TFLOPS against N (log x) for every level measured at two or more sizes."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Size sweep", parent)
        self.setLogMode(x=True, y=False)
        self.getPlotItem().vb.setDefaultPadding(0.08)  # room for the end ticks' labels
        self.setLabel("bottom", "N (M = N = K for a sweep)")
        self.setLabel("left", "TFLOPS")
        self.legend = self.addLegend(offset=(10, 10))
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.shown: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.hover = HoverReadout(self, self._describe)

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & {Change.SWEEP, Change.HEADER}:
            return
        self.shown = self.store.sweeps()
        for level_id in list(self.curves):
            if level_id not in self.shown:
                self.removeItem(self.curves.pop(level_id))
        for level_id, (n, tflops) in self.shown.items():
            level = self.store.level(level_id)
            color = precision_color(level.precision if level else "")
            curve = self.curves.get(level_id)
            if curve is None:
                curve = self.plot([], [], name=level_id, symbol="o", symbolSize=7)
                self.curves[level_id] = curve
            elif np.array_equal(curve.xData, n) and np.array_equal(curve.yData, tflops) \
                    and Change.HEADER not in changes:
                continue  # unchanged: no repaint
            curve.setData(n, tflops, pen=pg.mkPen(color, width=self.theme.line_px),
                          symbolBrush=color)
        sizes = sorted({int(v) for n, _ in self.shown.values() for v in n})
        # label the measured sizes themselves (log axis: positions are log10 N)
        ticks = [(float(np.log10(v)), str(v)) for v in sizes]
        self.getPlotItem().getAxis("bottom").setTicks([ticks] if ticks else None)

    def _describe(self, x: float, y: float) -> str | None:
        # x is log10(N) in view coordinates
        best: tuple[float, str] | None = None
        text = None
        for level_id, (n, tflops) in self.shown.items():
            d = np.hypot(np.log10(n) - x, (tflops - y) / max(float(tflops.max()), 1e-9))
            i = int(np.argmin(d))
            if best is None or d[i] < best[0]:
                best = (float(d[i]), level_id)
                text = f"{level_id} at N={int(n[i])}: {tflops[i]:.4g} TFLOPS"
        return text

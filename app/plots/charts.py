"""The charts (pyqtgraph): per-repeat stream and size sweep here, the ladder bars in
:mod:`.ladder_bars`, what they share in :mod:`.chart_base`.

Charts read the :class:`SessionStore` and redraw from it when told what changed
(``refresh``); the main window coalesces those calls, so a chart redraws at a bounded
rate however fast events arrive. Every chart keeps the numbers it drew (``shown``) so
tests and exports read back exactly what is on screen.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ..core.store import Change, SessionStore
from ..core.view_state import shape_text
from ..theme import Theme, level_colors, level_symbol, precision_color
from .chart_axes import PlainAxis, SizeAxis
from .chart_base import MAX_AXIS, Chart, finite_or_zero, finite_top
from .hover_readout import HoverReadout, nearest
from .ladder_bars import LadderBars
from .side_legend import LegendEntry

__all__ = ["MAX_AXIS", "HoverReadout", "LadderBars", "StreamChart", "SweepChart",
           "finite_or_zero", "finite_top"]


EMPTY_STREAM = "No run yet: the repeats of the next run show here"
NO_LEVEL = "Select a level: the repeats of its run at the shape shown show here"
EMPTY_SWEEP = "No size sweep yet: a level measured at two or more sizes shows here"


class RepeatAxis(PlainAxis):
    """Repeats are counted: ticks at whole numbers only (never 2.5)."""

    def tickValues(self, minVal: float, maxVal: float, size: float):
        levels = super().tickValues(minVal, maxVal, size)
        out = []
        for spacing, values in levels:
            if spacing < 1:
                continue
            out.append((spacing, [v for v in values if float(v).is_integer()]))
        if not out:  # a few repeats: every whole number that shows
            lo, hi = math.ceil(min(minVal, maxVal)), math.floor(max(minVal, maxVal))
            out = [(1.0, [float(v) for v in range(lo, hi + 1)])]
        return out


def stream_empty_text(store: SessionStore) -> str:
    """Why the per-repeat chart is empty, for the view state it shows."""
    state = store.view.state
    if state.level is None:
        return NO_LEVEL
    shape, mode = store.ladder_shape(), store.mode
    coming = store.coming()
    where = f"{state.level} at {shape_text(shape)} ({mode})"
    if coming is not None and coming.has_result(state.level, shape, mode, store.device):
        return f"{where}: not replayed yet; its repeats show when the replay reaches its run"
    return f"No run of {where} yet: its repeats show here when it runs"


class StreamChart(Chart):
    """TFLOPS of each timed repeat of the run the view state points at: the selected
    level's latest run at the shape and in the mode shown (a run in progress as its repeats
    arrive)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Per-repeat TFLOPS", parent, axes={"bottom": RepeatAxis("bottom")})
        self.set_label("bottom", "repeat")
        self.set_label("left", "TFLOPS")  # linear: the repeats of one run differ by percents
        self.curve = self.plot([], [], pen=pg.mkPen("#1f77b4", width=1), symbol="o",
                               symbolSize=5, symbolBrush="#1f77b4")
        self.curve.setDownsampling(auto=True, method="peak")
        self.curve.setClipToView(True)
        self.shown = (np.zeros(0), np.zeros(0))
        self.stream_key: tuple[Any, Any] | None = None  # (level, shape) of the run shown
        self._color: Any = ""
        self._symbols = True
        self._x_range = (0.0, 0.0)
        self._y_range = (0.0, 0.0)
        self._y_run: tuple[Any, Any] | None = None
        self.getPlotItem().vb.disableAutoRange()
        self.hover = HoverReadout(self, self._describe)
        self.show_empty(EMPTY_STREAM)

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        self._color = ""  # pen width follows the theme

    def set_selected(self, level_id: str | None) -> None:
        super().set_selected(level_id)
        self._color = ""
        self.refresh({Change.STREAM})

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & {Change.STREAM, Change.HEADER}:
            return
        stream = self.store.shown_stream()
        x, y = stream.arrays() if stream is not None else (np.zeros(0), np.zeros(0))
        self.shown = (x, y)
        self.stream_key = (stream.level, stream.shape) if stream is not None else None
        level = self.store.level(stream.level) if stream is not None and stream.level \
            else None
        key = (self.stream_key, self.selected, self.store.generation, self.theme.name)
        if key != self._color:  # (a new run or selection, not every repeat)
            self._color = key
            colors = level_colors([(lv.id, lv.precision, lv.is_reference, lv.is_user)
                                   for lv in self.store.levels])
            color = colors.get(level.id, precision_color(level.precision)) if level \
                else "#1f77b4"
            # the selected level's run is drawn heavier (the highlight every chart gives)
            width = self.theme.line_px * (2 if level and level.id == self.selected else 1)
            self.curve.setPen(pg.mkPen(color, width=width))
            self.curve.setSymbolBrush(color)
        if self.show_empty(None if len(x) else stream_empty_text(self.store)):
            self.curve.setData([], [])
            self._x_range = self._y_range = (0.0, 0.0)
            self._y_run = None
            self.set_title_text("Per-repeat TFLOPS")
            return
        assert stream is not None
        few = len(x) <= 100
        if few != self._symbols:
            self._symbols = few
            self.curve.setSymbol("o" if few else None)
        self.curve.setData(x, y)
        self._fit(x, y, stream.expected)
        if stream.level:
            prec = f", {level.precision.upper()}" if level else ""
            name = level.name if level is not None else stream.level
            self.set_title_text(f"Per-repeat TFLOPS — {name} at {shape_text(stream.shape)}"
                                f" ({self.store.mode}{prec})")
        else:
            self.set_title_text("Per-repeat TFLOPS")

    def _fit(self, x: np.ndarray, y: np.ndarray, expected: int) -> None:
        """Set the view range only when the data leaves it (axes repaint only then)."""
        keep = np.isfinite(x) & np.isfinite(y)
        x, y = x[keep], y[keep]
        if len(x) == 0:
            return
        # every repeat shows: from the first to the expected count (or the last, if more)
        last = float(x.max()) + 1
        width = max(float(expected), last - float(x.min()))
        x_range = (float(x.min()) - 0.5, float(x.min()) + width - 0.5)
        lo, hi = float(y.min()), float(y.max())
        y0, y1 = self._y_range
        span = max(hi - lo, abs(hi) * 0.05, 1e-9)
        new_run = self.stream_key != self._y_run
        if new_run or lo < y0 or hi > y1:
            # grow within a run (new extremes), start afresh for a new run; wide margins
            # so a stream of similar values leaves the range (and the axes) alone; never
            # below 0 (TFLOPS are not negative: no tick says they could be)
            if not new_run:
                lo, hi = min(lo, y0), max(hi, y1)
            self._y_range = (max(0.0, lo - 0.5 * span), hi + 0.5 * span)
            self._y_run = self.stream_key
            self.setYRange(*self._y_range, padding=0)
        if x_range != self._x_range:
            self._x_range = x_range
            self.setXRange(*x_range, padding=0)

    def _describe(self, x: float, y: float) -> str | None:
        i = nearest(self.shown[0], x)
        if i is None or self.empty:
            return None
        return f"repeat {int(self.shown[0][i])}: {self.shown[1][i]:.4g} TFLOPS"


class SweepChart(Chart):
    """TFLOPS against N (log x) for every level measured at two or more sizes: a shade of
    its precision's hue and a marker per level, cuBLAS dashed with hollow markers, the
    selected level heavier and on top; the legend in a column beside the plot."""

    def __init__(self, parent: QWidget | None = None):
        self.size_axis = SizeAxis()
        super().__init__("Size sweep", parent, axes={"bottom": self.size_axis})
        self.setLogMode(x=True, y=False)
        self.log_axis = False
        self.set_label("bottom", "N (M = N = K for a sweep)")
        self.set_label("left", "TFLOPS")
        # a line per level; the markers of every level but the selected one in one
        # scatter item above the lines (one item paints in a fraction of the time that one
        # per level takes); the selected level's markers on its own curve, on top
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.markers = pg.ScatterPlotItem(pxMode=True)
        self.markers.setZValue(2)
        self.addItem(self.markers)
        self.symbols: dict[str, str] = {}  # each level's marker
        self._marked: list[tuple[Any, ...]] = []
        self.shown: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.hover = HoverReadout(self, self._describe)
        self.show_empty(EMPTY_SWEEP)

    def set_log_axis(self, on: bool) -> None:
        if bool(on) != self.log_axis:
            self.log_axis = bool(on)
            self.setLogMode(x=True, y=self.log_axis)
            self.set_label("left", "TFLOPS (log)" if on else "TFLOPS")
            self.refresh({Change.HEADER})

    def set_selected(self, level_id: str | None) -> None:
        super().set_selected(level_id)
        self.refresh({Change.HEADER})

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        if self.store is not None:
            self.refresh({Change.HEADER})

    def _style(self, level_id: str, colors: dict[str, str]) -> tuple[str, str, bool, int]:
        """Colour, marker, dashed (a reference) and stacking order of a level's curve."""
        assert self.store is not None
        level = self.store.level(level_id)
        color = colors.get(level_id, precision_color(""))
        if level is None:
            return color, "o", False, 0
        if level.is_reference:
            return color, "o", True, 1
        same = [lv.id for lv in self.store.levels
                if lv.precision == level.precision and not lv.is_reference]
        return color, level_symbol(same.index(level_id)), False, 0

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & {Change.SWEEP, Change.HEADER}:
            return
        self.shown = self.store.sweeps()
        for level_id in list(self.curves):
            if level_id not in self.shown:
                self.removeItem(self.curves.pop(level_id))
        coming = self.store.coming()
        empty = EMPTY_SWEEP
        if coming is not None and coming.has_sweep(self.store.mode, self.store.device):
            empty = "Size sweep: not replayed yet; it draws as the replay reaches it"
        if self.show_empty(None if self.shown else empty):
            self.size_axis.set_sizes([])
            self.side_legend.set_entries([])
            self._mark([])
            self.symbols = {}
            return
        order = {lv.id: i for i, lv in enumerate(self.store.levels)}
        colors = level_colors([(lv.id, lv.precision, lv.is_reference, lv.is_user)
                               for lv in self.store.levels])
        entries = []
        marked: list[tuple[str, np.ndarray, np.ndarray, str, str, str, bool]] = []
        for level_id in sorted(self.shown, key=lambda k: order.get(k, len(order))):
            n, tflops = self.shown[level_id]
            color, symbol, dashed, z = self._style(level_id, colors)
            chosen = level_id == self.selected
            self.symbols[level_id] = symbol
            entries.append(LegendEntry(level_id + (" (selected)" if chosen else ""), color,
                                       kind="line", dashed=dashed, symbol=symbol))
            keep = tflops > 0 if self.log_axis else np.ones(len(n), bool)
            fill = self.theme.background if dashed else color
            if not chosen:
                marked.append((level_id, n[keep], tflops[keep], symbol, color, fill,
                               self.log_axis))
            curve = self.curves.get(level_id)
            if curve is None:
                curve = self.plot([], [], name=None)
                self.curves[level_id] = curve
            elif np.array_equal(curve.xData, n) and np.array_equal(curve.yData, tflops) \
                    and Change.HEADER not in changes:
                continue  # unchanged: no repaint
            width = self.theme.line_px * (3 if chosen else 1) + (1 if dashed else 0)
            pen = pg.mkPen(color, width=width,
                           style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
            if chosen:
                curve.setData(n[keep], tflops[keep], pen=pen, symbol=symbol, symbolSize=11,
                              symbolPen=pg.mkPen(color, width=1.5), symbolBrush=fill)
            else:
                curve.setData(n[keep], tflops[keep], pen=pen, symbol=None)
            curve.setZValue(10 if chosen else z)
        self._mark(marked)
        self.side_legend.set_entries(entries)
        self._fit()

    def _mark(self, marked: list[tuple[str, np.ndarray, np.ndarray, str, str, str, bool]]
              ) -> None:
        """The markers of these levels (id, N, TFLOPS, symbol, colour, fill, log axis) in
        the one scatter item, set again only when one of them changed."""
        same = len(marked) == len(self._marked) and all(
            a[0] == b[0] and a[3:] == b[3:] and np.array_equal(a[1], b[1])
            and np.array_equal(a[2], b[2]) for a, b in zip(marked, self._marked, strict=True))
        if same:
            return
        self._marked = marked
        if not marked:
            self.markers.setData([])
            return
        x = np.log10(np.concatenate([m[1] for m in marked]).astype(float))
        y = np.concatenate([m[2] for m in marked]).astype(float)
        if self.log_axis:
            y = np.log10(y)
        counts = [len(m[1]) for m in marked]
        pens = [pg.mkPen(m[4], width=1.5) for m in marked]
        brushes = [pg.mkBrush(m[5]) for m in marked]
        self.markers.setData(
            x=x, y=y, size=8,
            symbol=[m[3] for m, k in zip(marked, counts, strict=True) for _ in range(k)],
            pen=[p for p, k in zip(pens, counts, strict=True) for _ in range(k)],
            brush=[b for b, k in zip(brushes, counts, strict=True) for _ in range(k)],
            data=[m[0] for m, k in zip(marked, counts, strict=True) for _ in range(k)])

    def _fit(self) -> None:
        """The axes span the data: the measured sizes (a tick at each), 0 (or a decade
        below the lowest, on a log axis) to the highest TFLOPS."""
        sizes = sorted({int(v) for n, _ in self.shown.values() for v in n if v > 0})
        self.size_axis.set_sizes(sizes)
        values = np.concatenate([finite_or_zero(list(t)) for _, t in self.shown.values()])
        lo_x, hi_x = np.log10(sizes[0]), np.log10(sizes[-1])
        pad_x = max(0.08 * (hi_x - lo_x), 0.15)  # room for the end labels
        self.setXRange(lo_x - pad_x, hi_x + pad_x, padding=0)
        top = finite_top(values, 1.08)
        if self.log_axis:
            positive = values[values > 0]
            low = float(positive.min()) if positive.size else 1.0
            self.setYRange(np.floor(np.log10(low)), np.log10(top), padding=0)
        else:
            self.setYRange(0, top, padding=0)

    def _describe(self, x: float, y: float) -> str | None:
        # x is log10(N) in view coordinates (y is log10 too on a log axis)
        if self.empty:
            return None
        best: tuple[float, str] | None = None
        text = None
        for level_id, (n, tflops) in self.shown.items():
            ys = np.log10(np.maximum(tflops, 1e-12)) if self.log_axis else tflops
            scale = max(float(np.abs(ys).max()), 1e-9)
            d = np.hypot(np.log10(n) - x, (ys - y) / scale)
            i = int(np.argmin(d))
            if best is None or d[i] < best[0]:
                best = (float(d[i]), level_id)
                text = f"{level_id} at N={int(n[i])}: {tflops[i]:.4g} TFLOPS"
        return text

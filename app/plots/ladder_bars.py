"""The ladder bars: one bar per level at the shape and in the mode of the view state, a
shade of its precision's hue each (a click on a bar selects its level); cuBLAS of each
precision as a dashed line over that precision's bars; the selected
level on a pale band; value labels that never collide (shortened, smaller, staggered, else hidden).
What a bar shows and its texts are in :mod:`.ladder_bar_rows`; where its label goes in
:mod:`.bar_label_layout`.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QWidget

from ...kernels.protocol import THROTTLE_MARK
from ..core.view_state import shape_text
from ..theme import THROTTLE_COLOR, Theme, min_text_pt, precision_color
from .bar_label_layout import LINE_END_SLOT, TextSizes
from .chart_base import finite_or_zero, finite_top
from .hover_readout import HoverReadout
from .ladder_bar_labels import ValueLabels
from .ladder_bar_rows import (
    EMPTY_LADDER,
    METRICS,
    PAIR,
    PCT_CLOCK,
    PCT_REF,
    PERCENT_METRICS,
    TFLOPS_PER_GHZ,
    BarRow,
    LadderRows,
    hover_text,
    intervals_drawn,
    label_text,
    short_value,
    shown_metric,
)
from .level_ticks import NameAxis
from .side_legend import LegendEntry


class LadderBars(ValueLabels):
    """One bar per level at the shape shown: TFLOPS, % of cuBLAS or GFLOP/J."""

    level_clicked = Signal(str)  # a bar was clicked: select its level

    PAIR = PAIR
    METRICS = METRICS
    METRIC_KEYS: ClassVar[dict[str, str]] = {
        "TFLOPS": "tflops", PCT_REF: "pct_ref", "GFLOP/J": "gflop_per_j",
        PAIR: "burst_tflops", TFLOPS_PER_GHZ: "tflops_per_ghz", PCT_CLOCK: "pct_clock"}
    REFERENCE_KEYS: ClassVar[dict[str, str]] = {"TFLOPS": "tflops", PAIR: "tflops",
                                                "GFLOP/J": "gflop_per_j",
                                                TFLOPS_PER_GHZ: "tflops_per_ghz"}
    # ratios of rates: a log axis fits them
    LOG_METRICS = ("TFLOPS", "GFLOP/J", PAIR, TFLOPS_PER_GHZ)
    # the energy ladder is read from sustained runs where there are some (docs/energy.md);
    # the axis says the unit, the title where the numbers come from
    GFLOP_PER_J_AXIS = "GFLOP/J"
    GFLOP_PER_J_NOTE = "sustained where measured, else burst"
    THROTTLE_LEGEND = f"{THROTTLE_MARK} dashed outline: clocks held back"
    SUSTAINED_LEGEND = "pale bar: sustained TFLOPS"
    SELECTED_LEGEND = "band: the selected level"
    INTERVAL_LEGEND = "error bar: 95% interval of the paired ratio to cuBLAS"
    UNPAIRED_LEGEND = "no error bar: unpaired ratio (two runs one after the other)"
    PER_CLOCK_NOTE = "of the SM clock each run held"
    # where launch_clocks events gave the clocks inside the launches (record --launch-clocks)
    # (short: the title holds the shape and mode after it at 1280x720 on stage)
    PER_CLOCK_IN_LAUNCH_NOTE = "SM clock in the launches"
    PER_CLOCK_SOME_NOTE = "in-launch clock, else held"
    BEAM = 0.22  # an error bar's caps, in bar slots
    PAIR_OFFSET = 0.2  # burst bar left of the level's tick, sustained right

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Ladder", parent)
        self.show_empty(EMPTY_LADDER)

    def _make_fields(self) -> None:
        # (not "metric": that name would shadow QWidget.metric(), which Qt calls)
        self.bar_metric = self.METRICS[0]
        self.log_axis = False
        self.band = pg.BarGraphItem(x=[0.0], height=[1.0], y0=[0.0], width=0.98)
        self.band.setZValue(-10)
        self.band.hide()
        self.getPlotItem().addItem(self.band)
        self.bars: pg.BarGraphItem | None = None
        self.sustained_bars: pg.BarGraphItem | None = None  # burst vs sustained only
        self.references: dict[str, pg.PlotDataItem] = {}  # precision -> dashed cuBLAS line
        self.labels: list[pg.TextItem] = []
        self._interval_ends = np.zeros((0, 2))  # the error bars' (low, high), as shown
        self._text_sizes = TextSizes()  # sizes a label's text (see _text_width)
        self.label_texts: list[str] = []  # the full texts; a label may show a shorter one
        self.data = LadderRows()  # what the bars were last handed
        self.rows: list[BarRow] = []  # what the bars show, one per level
        self.floor = 0.0  # the bars' base in view coordinates (log10 of it on a log axis)
        self._axis_label = ""
        self._drawn: tuple[Any, ...] = ()  # what the last _draw showed
        # the cuBLAS lines: (first bar, last bar, y in view coordinates); labels clear them
        self._ref_spans: list[tuple[int, int, float]] = []
        # the level names: two to four alternating lines in an axis 4.5 type-heights high
        self.names = NameAxis(self.getPlotItem(), self.theme.font_pt, height_pts=4.5)
        self.getPlotItem().getAxis("bottom").setStyle(tickTextOffset=4)
        self.getPlotItem().vb.sigResized.connect(self.place_labels)
        # the baseline recording's TFLOPS of each level: a bar-wide tick (TFLOPS only)
        # the 95% interval of a paired ratio on each bar that has one (data: drawn_intervals)
        self.error_bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0),
                                          bottom=np.zeros(0), beam=self.BEAM)
        self.error_bars.setZValue(7)
        self.getPlotItem().addItem(self.error_bars)
        self.baseline_marks = pg.ScatterPlotItem(pxMode=True)
        self.baseline_marks.setZValue(8)
        self.getPlotItem().addItem(self.baseline_marks)
        self.hover = HoverReadout(self, self._describe)
        self.scene().sigMouseClicked.connect(self._clicked)

    def level_at(self, x: float) -> str | None:
        """The level whose bar (or pair of bars) spans view coordinate ``x``."""
        i = round(x)
        if not self.rows or self.empty or not 0 <= i < len(self.rows) or abs(x - i) > 0.5:
            return None
        return str(self.rows[i].level)

    def _clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        vb = self.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        level = self.level_at(vb.mapSceneToView(event.scenePos()).x())
        if level is not None:
            self.level_clicked.emit(level)

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        self.names.set_font_pt(theme.font_pt, min_text_pt(theme))
        for label in self.labels:
            self.getPlotItem().removeItem(label)
        self.labels = []  # made again in the new theme's colour and size
        if self.rows:
            self._draw()

    def set_metric(self, metric: str) -> None:
        self.bar_metric = metric
        self.redraw()

    def set_log_axis(self, on: bool) -> None:
        self.log_axis = bool(on)
        self.redraw()

    def set_selected(self, level_id: str | None) -> None:
        super().set_selected(level_id)
        self.redraw()  # the band and the legend's line for it

    @property
    def per_clock(self) -> bool:
        """The view state's: the bars per GHz of SM clock held."""
        return self.data.per_clock

    @property
    def shown_metric(self) -> str:
        """What the bars draw: the metric chosen, per GHz of clock where the view says."""
        return shown_metric(self.bar_metric, self.per_clock)

    def is_log(self) -> bool:
        return self.log_axis and self.shown_metric in self.LOG_METRICS

    def set_rows(self, data: LadderRows, header: bool = False) -> None:
        """Draw ``data`` (``header``: the session's header changed: drawn afresh)."""
        self.data = data
        self.rows = list(data.rows)
        # (a throttled result redraws only when what the bars show changed)
        key = (repr(data), self.shown_metric, self.is_log(), self.selected,
               self.theme.name, header)
        if key == self._drawn and not self.empty:
            return
        self._drawn = key
        self._draw()

    def redraw(self) -> None:
        """Again, from the rows last handed (a metric, an axis, a selection changed)."""
        self.set_rows(self.data)

    def values(self) -> np.ndarray:
        """Bar heights; a value that is missing or not a finite number draws no bar."""
        key = self.METRIC_KEYS[self.shown_metric]
        return finite_or_zero([row.value(key) for row in self.rows])

    def sustained_values(self) -> np.ndarray:
        """The sustained bars' heights (burst vs sustained); 0 where none was run."""
        return finite_or_zero([row.sustained_tflops for row in self.rows])

    def drawn_values(self) -> np.ndarray:
        """The values the bars reach on the axis, read back from the bar item."""
        if self.bars is None or not self.rows:
            return np.zeros(0)
        top = np.asarray(self.bars.opts["y0"], float) + np.asarray(self.bars.opts["height"])
        drawn = np.asarray(self.bars.opts["height"]) > 0
        return np.where(drawn, 10 ** top if self.is_log() else top, 0.0)

    def drawn_sustained_values(self) -> np.ndarray:
        """The pale sustained bars' values on the axis (burst vs sustained), read back."""
        item = self.sustained_bars
        if item is None or not item.isVisible():
            return np.zeros(0)
        top = np.asarray(item.opts["y0"], float) + np.asarray(item.opts["height"])
        drawn = np.asarray(item.opts["height"]) > 0
        return np.where(drawn, 10 ** top if self.is_log() else top, 0.0)

    def axis_label(self) -> str:
        return {"GFLOP/J": self.GFLOP_PER_J_AXIS, self.PAIR: "TFLOPS"}.get(
            self.shown_metric, self.shown_metric) + (" (log)" if self.is_log() else "")

    def _to_view(self, values: np.ndarray) -> np.ndarray:
        """Values as view coordinates (log10 on a log axis; 0 and below sit on the base)."""
        if not self.is_log():
            return values
        safe = np.where(values > 0, values, 10 ** self.floor)
        return np.log10(safe)

    def _draw_sustained(self, x: np.ndarray) -> np.ndarray:
        """The pale sustained bars beside the burst ones; their tops (view coordinates)."""
        if self.bar_metric != self.PAIR:
            if self.sustained_bars is not None:
                self.sustained_bars.hide()
            return np.full(len(x), self.floor)
        tops = self._to_view(self.sustained_values())
        brushes = []
        for row in self.rows:
            color = QColor(row.color)
            color.setAlpha(110)
            brushes.append(pg.mkBrush(color))
        opts = {"x": x + self.PAIR_OFFSET, "height": np.maximum(tops - self.floor, 0),
                "y0": np.full(len(x), self.floor), "width": 0.38, "brushes": brushes,
                "pen": pg.mkPen(self.theme.foreground, width=1)}
        if self.sustained_bars is None:
            self.sustained_bars = pg.BarGraphItem(**opts)
            self.getPlotItem().addItem(self.sustained_bars)
        else:
            self.sustained_bars.setOpts(**opts)
        self.sustained_bars.show()
        return tops

    def _draw_references(self) -> list[str]:
        """A dashed line per precision at its cuBLAS value, across that precision's bars
        (100% on the % axis); the precisions drawn."""
        metric = self.shown_metric
        key = self.REFERENCE_KEYS.get(metric)
        # per precision, its value and the runs of its bars (first, last): a bar of
        # another precision between two runs has no line across it
        spans: dict[str, tuple[float, list[list[int]]]] = {}
        for i, row in enumerate(self.rows):
            ref = row.reference
            value = 100.0 if metric in PERCENT_METRICS and \
                row.value(self.METRIC_KEYS[metric]) is not None else \
                getattr(ref, key) if ref is not None and key is not None else None
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                continue
            _, runs = spans.setdefault(row.precision, (float(value), []))
            if runs and runs[-1][1] == i - 1 and all(
                    r.precision == row.precision for r in self.rows[runs[-1][1]:i]):
                runs[-1][1] = i
            else:
                runs.append([i, i])
        for prec in list(self.references):
            if prec not in spans:
                self.getPlotItem().removeItem(self.references.pop(prec))
        self._ref_spans = []
        for prec, (value, runs) in spans.items():
            y = float(self._to_view(np.array([value]))[0])
            xs: list[float] = []
            for lo, hi in runs:
                self._ref_spans.append((lo, hi, y))
                xs += [lo - LINE_END_SLOT, hi + LINE_END_SLOT]
            pen = pg.mkPen(precision_color(prec), width=max(2, self.theme.line_px),
                           style=Qt.PenStyle.DashLine)
            line = self.references.get(prec)
            if line is None:
                line = self.references[prec] = pg.PlotDataItem()
                line.setZValue(5)
                self.getPlotItem().addItem(line)
            line.setData(xs, [y] * len(xs), pen=pen, connect="pairs")
        return list(spans)

    def reference_segments(self) -> dict[str, list[tuple[float, float]]]:
        """Each cuBLAS line as drawn, read back: per precision, its (x from, x to)."""
        out = {}
        for prec, line in self.references.items():
            xs, _ = line.getData()
            xs = [] if xs is None else list(map(float, xs))
            out[prec] = list(zip(xs[::2], xs[1::2], strict=True))
        return out

    def per_clock_note(self) -> str:
        """Which clock the per-GHz bars divide by: NVML's held around the runs, or the
        clock inside the launches (launch_clocks events) for every bar or for some."""
        clocked = [r.in_launch for r in self.rows if r.tflops_per_ghz is not None]
        if clocked and all(clocked):
            return self.PER_CLOCK_IN_LAUNCH_NOTE
        return self.PER_CLOCK_SOME_NOTE if any(clocked) else self.PER_CLOCK_NOTE

    def _draw(self) -> None:
        """Update the bar item and its labels in place (no items made per redraw)."""
        plot = self.getPlotItem()
        shape = self.data.shape
        metric = self.shown_metric
        note = f" ({self.GFLOP_PER_J_NOTE})" if metric == "GFLOP/J" else \
            f" ({self.per_clock_note()})" if metric in (TFLOPS_PER_GHZ, PCT_CLOCK) else ""
        mode = f", {self.data.mode}" if self.data.mode else ""
        self.set_title_text(f"Ladder — {metric}{note}"
                            + (f" at {shape_text(shape)}{mode}" if shape else ""))
        n = len(self.rows)
        for item in (self.bars, self.sustained_bars, *self.references.values(), *self.labels,
                     self.error_bars):
            if item is not None:
                item.setVisible(n > 0)
        if self.show_empty(None if n else self.data.empty_text):
            self.names.forget()
            self.band.hide()
            self.side_legend.set_entries([])  # nothing drawn: nothing to explain
            return
        if self.axis_label() != self._axis_label:
            self._axis_label = self.axis_label()
            self.set_label("left", self._axis_label)
        if plot.getAxis("left").logMode != self.is_log():  # (set, it draws the axis again)
            plot.getAxis("left").setLogMode(False, self.is_log())
        x = np.arange(n, dtype=float)
        values = self.values()
        peak = max(float(values.max()), float(self.sustained_values().max())
                   if self.bar_metric == self.PAIR else 0.0)
        positive = values[values > 0]
        # a log axis starts a decade-step below the smallest bar, so every bar shows
        self.floor = math.floor(math.log10(float(positive.min()))) if self.is_log() and \
            positive.size else 0.0
        tops = self._to_view(values)
        pair_tops = self._draw_sustained(x)
        refs = self._draw_references()
        width = 0.38 if self.bar_metric == self.PAIR else 0.7
        bar_x = x - self.PAIR_OFFSET if self.bar_metric == self.PAIR else x
        brushes = [pg.mkBrush(row.color) for row in self.rows]
        plain = pg.mkPen(self.theme.foreground, width=1)
        pens = [self.throttle_pen() if row.throttled else plain for row in self.rows]
        opts = {"x": bar_x, "height": np.where(values > 0, np.maximum(tops - self.floor, 0), 0),
                "y0": np.full(n, self.floor), "width": width, "brushes": brushes,
                "pens": pens, "pen": plain}
        if self.bars is None:
            self.bars = pg.BarGraphItem(**opts)
            plot.addItem(self.bars)
        else:
            self.bars.setOpts(**opts)
        self._draw_baseline(x)
        interval_tops = self._draw_intervals(bar_x, values)
        self.label_texts = [label_text(row, metric) for row in self.rows]
        # the same first lines in three significant digits, for a crowded stage (None:
        # the metric has no shorter form)
        self.short_values = [short_value(row, metric) for row in self.rows]
        # a label sits over its bar's error bar, not on it
        self.label_tops = np.maximum(np.maximum(np.where(values > 0, tops, self.floor),
                                                pair_tops), interval_tops)
        peak = max(peak, float(self._interval_ends[:, 1].max())
                   if len(self._interval_ends) else 0.0)
        top = finite_top(self._to_view(np.array([peak])) - self.floor, 1.0) + self.floor \
            if peak > 0 else self.floor + 1.0
        self._data_top = top
        # (after what the labels read: a legend that changes size lays the labels out)
        self._legend(refs)
        self._draw_band()
        self.place_labels()

    def _draw_baseline(self, x: np.ndarray) -> None:
        """A tick across each bar at the baseline's TFLOPS (the TFLOPS bars only)."""
        base = finite_or_zero([row.baseline_tflops for row in self.rows])
        shown = (base > 0) if self.shown_metric == self.METRICS[0] else \
            np.zeros(len(base), bool)
        if not shown.any():
            self.baseline_marks.setData([])
            return
        self.baseline_marks.setData(
            x=x[shown], y=self._to_view(base[shown]), symbol="_", size=34,
            pen=pg.mkPen(self.theme.foreground, width=3), brush=None)

    def _draw_intervals(self, bar_x: np.ndarray, values: np.ndarray) -> np.ndarray:
        """An error bar from each bar's interval's low end to its high end (a paired ratio's
        95% interval, in the units of what the bars show); the tops of the error bars in
        view coordinates (the base where a bar has none)."""
        tops = np.full(len(self.rows), float(self.floor))  # (an int floor: int tops)
        have, self._interval_ends = intervals_drawn(self.rows, self.shown_metric, values)
        if not have:
            self.error_bars.setData(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0),
                                    bottom=np.zeros(0))
            self.error_bars.hide()
            return tops
        view_ends = self._to_view(self._interval_ends.ravel()).reshape(-1, 2)
        mid = self._to_view(values[have])
        self.error_bars.setData(
            x=bar_x[have], y=mid, top=np.maximum(view_ends[:, 1] - mid, 0),
            bottom=np.maximum(mid - view_ends[:, 0], 0), beam=self.BEAM,
            pen=pg.mkPen(self.theme.foreground, width=max(2, self.theme.line_px)))
        self.error_bars.show()
        tops[have] = view_ends[:, 1]
        return tops

    def drawn_intervals(self) -> dict[str, tuple[float, float]]:
        """Each level's error bar as drawn, read back from the ErrorBarItem: (low, high)
        in the units of the axis."""
        opts = self.error_bars.opts
        if not self.error_bars.isVisible() or opts["x"] is None or not len(opts["x"]):
            return {}
        y, top, bottom = (np.asarray(opts[k], float) for k in ("y", "top", "bottom"))
        low, high = y - bottom, y + top
        if self.is_log():
            low, high = 10 ** low, 10 ** high
        levels = [self.level_at(float(x)) for x in opts["x"]]  # (burst vs sustained: none)
        return {str(lv): (float(lo), float(hi))
                for lv, lo, hi in zip(levels, low, high, strict=True)}

    def baseline_values(self) -> np.ndarray:
        """The baseline ticks' TFLOPS as drawn (read back), for tests."""
        _xs, ys = self.baseline_marks.getData()
        if ys is None or len(ys) == 0:
            return np.zeros(0)
        return 10 ** np.asarray(ys) if self.is_log() else np.asarray(ys)

    def _legend(self, refs: list[str]) -> None:
        entries = []
        # a kernel of the user's has a colour of its own, not its precision's hue: named
        own = [row for row in self.rows if row.is_user]
        mine = {row.level for row in own}
        for prec in dict.fromkeys(row.precision for row in self.rows if row.level not in mine):
            entries.append(LegendEntry(f"{prec.upper()} levels", precision_color(prec)))
            if prec in refs:
                entries.append(LegendEntry(f"cuBLAS {prec.upper()}", precision_color(prec),
                                           kind="line", dashed=True))
        for row in own:
            entries.append(LegendEntry(f"{row.level} ({row.precision.upper()}, your kernel)",
                                       row.color))
            if row.precision in refs and not any(e.text == f"cuBLAS {row.precision.upper()}"
                                                 for e in entries):
                entries.append(LegendEntry(f"cuBLAS {row.precision.upper()}",
                                           precision_color(row.precision), kind="line",
                                           dashed=True))
        if self.bar_metric == self.PAIR:
            entries.append(LegendEntry(self.SUSTAINED_LEGEND, "#a0a0a0"))
        if len(self._interval_ends):
            entries.append(LegendEntry(self.INTERVAL_LEGEND, self.theme.foreground,
                                       kind="line"))
        if self.shown_metric in (*PERCENT_METRICS, "TFLOPS", TFLOPS_PER_GHZ) and \
                any(row.unpaired for row in self.rows):
            entries.append(LegendEntry(self.UNPAIRED_LEGEND, self.theme.foreground,
                                       kind="note"))
        if any(row.throttled for row in self.rows):
            entries.append(LegendEntry(self.THROTTLE_LEGEND, THROTTLE_COLOR, kind="outline",
                                       dashed=True))
        if self.data.baseline_name is not None and len(self.baseline_marks.data):
            entries.append(LegendEntry(f"tick: baseline {self.data.baseline_name}",
                                       self.theme.foreground, kind="line"))
        if self.selected is not None:
            entries.append(LegendEntry(self.SELECTED_LEGEND, self._band_color().name()))
        self.side_legend.set_entries(entries)

    def _band_color(self) -> QColor:
        color = QColor(self.theme.foreground)
        color.setAlpha(40)
        return color

    def _draw_band(self) -> None:
        levels = [row.level for row in self.rows]
        if self.selected not in levels or self.empty:
            self.band.hide()
            return
        (_, _), (y0, y1) = self.getPlotItem().vb.viewRange()
        self.band.setOpts(x=[levels.index(self.selected)], y0=[y0], height=[y1 - y0],
                          width=0.98, brush=pg.mkBrush(self._band_color()), pen=pg.mkPen(None))
        self.band.show()

    def _describe(self, x: float, y: float) -> str | None:
        i = round(x)
        if not 0 <= i < len(self.rows):
            return None
        return hover_text(self.rows[i])

    def throttle_pen(self) -> QPen:
        return pg.mkPen(THROTTLE_COLOR, width=2, style=Qt.PenStyle.DashLine)


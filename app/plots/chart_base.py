"""What the charts share: the base plot (theme, empty state, a legend beside the data),
the hover readout, and axes that label what a talk needs (plain TFLOPS on a log axis, the
measured sizes of a sweep, no SI-prefix scaling).

A chart draws its legend in a column right of the plot area (:class:`SideLegend`), so no
legend covers data; with more entries than fit the height it uses more columns.
"""

from __future__ import annotations

import html
import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen, QTextOption
from PySide6.QtWidgets import QGraphicsItem, QWidget

from ..core.plain_text import plain_tooltip
from ..core.store import SessionStore
from ..theme import NORMAL, Theme, min_text_pt
from .plot_style import plot_font

pg.setConfigOptions(antialias=False, useOpenGL=False)
# the largest axis value drawn: a recording's absurd number (1e308) must not overflow the
# range arithmetic (pyqtgraph refuses a range of inf or nan)
MAX_AXIS = 1e15


def finite_or_zero(values: Sequence[float | None]) -> np.ndarray:
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


def number_text(value: float) -> str:
    """A tick's number as a person writes it: 0.5, 10, 1000 (no exponent, no prefix)."""
    return f"{value:.12g}" if abs(value) < 1e6 else f"{value:.3g}"


class _LeaveFilter(QObject):
    def __init__(self, readout: HoverReadout, parent: QObject):
        super().__init__(parent)
        self.readout = readout

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.readout.hide()
        return False


class HoverReadout:
    """Shows the exact value of the data point nearest the mouse in a text item; hidden
    when the mouse leaves the plot, and never part of an export (:meth:`hide_all`)."""

    _all: ClassVar[weakref.WeakSet[HoverReadout]] = weakref.WeakSet()

    def __init__(self, plot: pg.PlotWidget, describe: Callable[[float, float], str | None]):
        self.plot = plot
        self.describe = describe
        self.label = pg.TextItem("", anchor=(0, 1), color="#202020", fill="#ffffffd0")
        self.label.setZValue(100)
        self.label.hide()
        plot.addItem(self.label, ignoreBounds=True)
        plot.scene().sigMouseMoved.connect(self._moved)
        self._leave = _LeaveFilter(self, plot)
        plot.installEventFilter(self._leave)
        plot.viewport().installEventFilter(self._leave)
        self.text = ""
        HoverReadout._all.add(self)

    def _moved(self, pos: QPointF) -> None:
        vb = self.plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            self.hide()
            return
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

    def hide(self) -> None:
        self.text = ""
        self.label.hide()

    @classmethod
    def hide_all(cls) -> None:
        """Hide every readout (before an export: the picture is the data, not the mouse)."""
        for readout in list(cls._all):
            try:
                readout.hide()
            except RuntimeError:  # its plot is gone (Qt deleted it): nothing to hide
                cls._all.discard(readout)


def nearest(xs: np.ndarray, x: float) -> int | None:
    if len(xs) == 0:
        return None
    return int(np.argmin(np.abs(xs - x)))


FEW_TICKS = 3  # labelled ticks a vertical axis should have; fewer: finer steps tried
TICK_GAP_LINES = 1.0  # the least gap between two labels of a vertical axis: a line


class PlainAxis(pg.AxisItem):
    """Numbers as they are (never ``TFLOPS (x0.001)``); on a log axis plain 1, 10, 100 (and
    2, 5 between them when few decades show) instead of 10 to a power."""

    def __init__(self, orientation: str, **kwargs: Any):
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)
        if orientation in ("left", "right"):  # _spaced keeps the labels apart: pyqtgraph
            # need not drop any for the share of the axis they fill (a short axis in
            # large type kept one label of three)
            self.setStyle(textFillLimits=[(0, 1.0)])

    def tickValues(self, minVal: float, maxVal: float, size: float):
        if not self.logMode:
            return self._spaced(super().tickValues(minVal, maxVal, size), minVal, maxVal,
                                size)
        lo, hi = sorted((minVal, maxVal))
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo > 40:
            return []
        steps = (1.0,) if hi - lo > 3 else (1.0, 2.0, 5.0)
        values = [math.log10(m) + k for k in range(math.floor(lo), math.ceil(hi) + 1)
                  for m in steps]
        values = [v for v in values if lo <= v <= hi]
        # no closer than two lines of tick text apart
        line_px = QFontMetricsF(self.style.get("tickFont") or QFont()).height()
        most = max(2, int(size // (2 * line_px)))
        every = math.ceil(len(values) / most)
        if every > 1:  # of the every-th ticks, the run with most labels clear of the ends
            def inside(v: float) -> bool:
                px = (v - lo) / max(hi - lo, 1e-12) * size
                return 0.6 * line_px <= px <= size - 0.6 * line_px

            values = max((values[k::every] for k in range(every)),
                         key=lambda run: (sum(map(inside, run)), len(run)))
        return [(1.0, values)]

    def _spaced(self, levels, lo: float, hi: float, size: float):
        """Linear ticks no closer than 1.5 lines of tick text on a vertical axis (a short
        plot in large type stacked its labels on each other): every k-th kept."""
        if self.orientation not in ("left", "right") or hi <= lo or size <= 0:
            return levels
        line_px = QFontMetricsF(self.style.get("tickFont") or QFont()).height()

        def inside(v: float) -> bool:  # a label that the axis has room for at its place
            px = (v - lo) / (hi - lo) * size
            return 0.6 * line_px <= px <= size - 0.6 * line_px

        out = []
        for spacing, values in levels:
            gap_px = spacing * size / (hi - lo)
            every = max(1, math.ceil(1.5 * line_px / max(gap_px, 1e-9)))
            runs = [list(values)[k::every] for k in range(every)]
            out.append((spacing * every, max(runs, key=lambda run: sum(map(inside, run)))))
        shown = sum(map(inside, out[0][1])) if out else 0
        if shown >= FEW_TICKS:
            return out
        # a short axis (a stage's telemetry strip): the finest 1-2-5 step whose labels
        # clear each other, where it labels more of the axis
        least = TICK_GAP_LINES * line_px * (hi - lo) / size
        exponent = 10 ** math.floor(math.log10(least))
        step = next(m * exponent for m in (1, 2, 5, 10) if m * exponent >= least)
        fine = [k * step for k in range(math.ceil(lo / step), math.floor(hi / step) + 1)]
        fine = [v for v in fine if inside(v)]
        return [(step, fine)] if len(fine) > shown else out

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        return [number_text(float(f"{10 ** v:.3g}")) for v in values]


def plain_axes() -> dict[str, pg.AxisItem]:
    """A plot's left and bottom axes (pass to pg.PlotWidget; see also quiet_axes)."""
    return {"left": PlainAxis("left"), "bottom": PlainAxis("bottom")}


def quiet_axes(item: pg.PlotItem) -> None:
    """No SI prefix on the hidden top and right axes either: pyqtgraph's axes rewrite their
    label (a setHtml and a size check) on every range change for it, hidden or not, tens
    of times a second on a chart that follows a replay. (Passing them as PlainAxis would
    show them: PlotItem shows every axis it is given.)"""
    for side in ("top", "right"):
        item.getAxis(side).enableAutoSIPrefix(False)


class SizeAxis(PlainAxis):
    """The x axis of a size sweep (log N): a tick at each measured size, labelled with the
    size; labels that would overlap their neighbour are left out (the tick stays)."""

    def __init__(self, **kwargs: Any):
        super().__init__("bottom", **kwargs)
        self.sizes: list[int] = []
        # tickStrings leaves out what overlaps; the end labels may reach past the axis
        self.setStyle(hideOverlappingLabels=40)

    def set_sizes(self, sizes: list[int]) -> None:
        if sizes != self.sizes:
            self.sizes = sizes
            self.picture = None
            self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float):
        if not self.sizes:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = sorted((minVal, maxVal))
        return [(1.0, [math.log10(v) for v in self.sizes if lo <= math.log10(v) <= hi])]

    def tickStrings(self, values, scale, spacing):
        if not self.sizes:
            return super().tickStrings(values, scale, spacing)
        out, last_right = [], -math.inf
        metrics = QFontMetricsF(self.style.get("tickFont") or self.font())
        view = self.linkedView()
        if view is None or not values:
            return [str(round(10 ** v)) for v in values]
        (x0, x1), _ = view.viewRange()
        px_per_unit = self.width() / max(x1 - x0, 1e-12)
        spans = []
        for v in values:
            half = metrics.horizontalAdvance(str(round(10 ** v))) / 2 + 2
            centre = (v - x0) * px_per_unit
            spans.append((centre - half, centre + half))
        # the first and the last size always; between them, those that overlap neither
        # the label before them nor the last one
        last_left = spans[-1][0]
        for i, (v, (left, right)) in enumerate(zip(values, spans, strict=True)):
            keep = i == len(values) - 1 or (left >= last_right and right <= last_left)
            out.append(str(round(10 ** v)) if keep else "")
            if keep:
                last_right = right
        return out


@dataclass(frozen=True, slots=True)
class LegendEntry:
    """One line of a side legend: a bar swatch or a line with a marker."""

    text: str
    color: str
    kind: str = "bar"  # "bar", "line", "outline", "note" (text alone)
    dashed: bool = False
    symbol: str | None = None
    hatched: bool = False


class SideLegend(pg.GraphicsWidget):
    """A legend outside the plot area (never over the data), drawn as plain text: in its
    own column right of the plot, entries in as many columns as the height needs; or, on
    a chart too narrow to give it that column (:attr:`below`), in rows under the x axis,
    as many entries a row as the width holds."""

    SWATCH = 22
    MARGIN = 14  # from the plot area (a last tick label may reach into it)
    MIN_PT = 7

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[LegendEntry] = []
        self.color = NORMAL.foreground
        self.font_ = QFont()
        self.base_pt = 9
        self.min_pt: float = self.MIN_PT  # the theme's floor (presentation: 18 px)
        self.max_width = 1e6
        self.max_height = 1e6  # below the plot: the most of the chart's height it takes
        self.below = False  # in rows under the plot (the chart decides: Chart.place_legend)
        self.width_changed: Callable[[], None] | None = None  # the chart re-fits its title
        self.columns = 1
        self._col_w = 0.0
        self._rects: list[QRectF] = []  # below the plot: each entry's place
        self.shown: list[LegendEntry] = []  # below the plot: the entries drawn
        self.hard_height = 1e6  # below the plot: never taller (the rest: "… N more")
        self._width_hint = 0.0
        self._flow_rows = 0
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemClipsToShape, False)
        # repainted from a pixmap unless its entries, style or size changed (update()):
        # drawing its markers and text costs ~1 ms per repaint of the chart
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def set_entries(self, entries: list[LegendEntry]) -> None:
        if entries != self.entries:
            self.entries = entries
            self._relayout()
            self.update()

    def set_style(self, color: str, point_size: int, min_pt: float | None = None) -> None:
        self.color = color
        self.min_pt = max(float(self.MIN_PT), min_pt or 0.0)
        self.base_pt = max(math.ceil(self.min_pt), point_size)
        self._relayout()
        self.update()

    def set_max_width(self, width: float) -> None:
        """The most of the chart's width the legend may take (the rest is the plot's)."""
        if abs(width - self.max_width) >= 1:
            self.max_width = width
            self._relayout()

    def set_below(self, below: bool, max_height: float = 1e6, width: float = 0.0,
                  hard_height: float = 1e6) -> None:
        """In rows below the plot (``width``: the plot's, until the layout says it), the
        type shrinking to fit ``max_height``, the entries cut to fit ``hard_height``."""
        self._width_hint = width
        self.hard_height = hard_height
        if below != self.below or abs(max_height - self.max_height) >= 1:
            self.below, self.max_height = below, max_height
            self._relayout()
            self.update()

    def _line_h(self) -> float:
        return QFontMetricsF(self.font_).height() + 2

    def _sizes(self) -> list[float]:
        """Point sizes to try, the base first, down to the floor."""
        low = max(self.MIN_PT, math.ceil(self.min_pt))
        sizes: list[float] = list(range(self.base_pt, low - 1, -1)) or [float(low)]
        if self.min_pt > low - 1 and self.min_pt not in sizes and self.min_pt < self.base_pt:
            sizes.append(self.min_pt)
        return [float(s) for s in sizes if s >= self.min_pt] or [self.min_pt]

    def _column_width(self) -> float:
        metrics = QFontMetricsF(self.font_)
        widest = max((metrics.horizontalAdvance(e.text) for e in self.entries), default=0.0)
        return (self.SWATCH + 8 + widest + 10) if self.entries else 0.0

    def side_width(self, height: float) -> float:
        """The width a column legend needs beside a plot ``height`` high, at the base
        type (the chart puts the legend below where this takes too much of its width)."""
        if not self.entries:
            return 0.0
        self.font_.setPointSizeF(self.base_pt)
        rows_fit = max(1, int((height - 6) // self._line_h())) if height > 20 else 10_000
        return self._column_width() * math.ceil(len(self.entries) / rows_fit) + self.MARGIN

    def _relayout(self) -> None:
        """Columns for the height the layout gives (beside the plot) or rows for its width
        (below it); a smaller type, down to the floor, where they would take more than the
        room they may have."""
        if self.below:
            self._relayout_below()
            return
        height = self.size().height()
        for pt in self._sizes():
            self.font_.setPointSizeF(pt)
            self._col_w = self._column_width()
            # (before the layout gives it a height: one column)
            rows_fit = max(1, int((height - 6) // self._line_h())) if height > 20 else 10_000
            self.columns = max(1, math.ceil(len(self.entries) / rows_fit)) \
                if self.entries else 1
            if self._col_w * self.columns + self.MARGIN <= self.max_width:
                break
        width = self._col_w * self.columns + self.MARGIN if self.entries else 0.0
        changed = width != self.preferredWidth()
        self.setMinimumHeight(0)
        self.setMaximumHeight(1e6)
        self.setPreferredHeight(0)
        self.setMinimumWidth(width)
        self.setMaximumWidth(width)
        self.setPreferredWidth(width)
        self.setVisible(bool(self.entries))
        if changed and self.width_changed is not None:
            self.width_changed()

    def _relayout_below(self) -> None:
        """Entries left to right, each as wide as its text, onto the next row where the
        width ends (the type shrinks, down to the floor, while that is taller than
        ``max_height``)."""
        width = self.size().width() if self.size().width() > 20 else \
            (self._width_hint or self.max_width)
        for pt in self._sizes():
            self.font_.setPointSizeF(pt)
            self._flow(width, self.entries)
            if self._height_below() <= self.max_height:
                break
        if self._height_below() > self.hard_height:  # still too tall: the first ones
            self._trim(width)
        height = self._height_below()
        changed = self.preferredWidth() != 0 or self.preferredHeight() != height
        self.setMinimumWidth(0)
        self.setMaximumWidth(1e6)
        self.setPreferredWidth(0)
        self.setMinimumHeight(height)
        self.setMaximumHeight(height)
        self.setPreferredHeight(height)
        self.setVisible(bool(self.entries))
        if changed:
            self.updateGeometry()  # the plot's layout gives the rows their height
            if self.width_changed is not None:
                self.width_changed()

    def _trim(self, width: float) -> None:
        """As many entries as the rows within ``hard_height`` hold, the selected one
        among them, and a last one that says how many more the hover names."""
        rows = max(1, int((self.hard_height - 6) // self._line_h()))
        selected = [e for e in self.entries if "(selected)" in e.text]
        for keep in range(len(self.entries) - 1, 0, -1):
            kept = self.entries[:keep]
            kept += [e for e in selected if e not in kept]
            more = LegendEntry(f"… {len(self.entries) - len(kept)} more: hover a curve",
                               self.color, kind="note")
            self._flow(width, [*kept, more])
            if self._flow_rows <= rows:
                return
        self._flow(width, self.entries[:1])

    def _flow(self, width: float, entries: list[LegendEntry]) -> None:
        metrics = QFontMetricsF(self.font_)
        h = self._line_h()
        x, row = 0.0, 0
        self._rects = []
        self.shown = list(entries)
        for e in entries:
            w = min(self.SWATCH + 8 + metrics.horizontalAdvance(e.text) + 18, max(width, 1.0))
            if x > 0 and x + w > width:
                x, row = 0.0, row + 1
            self._rects.append(QRectF(x, 3 + row * h, w, h))
            x += w
        self._flow_rows = row + 1 if entries else 0

    def _height_below(self) -> float:
        return self._flow_rows * self._line_h() + 6 if self.entries else 0.0

    def resizeEvent(self, event: Any) -> None:
        columns = self.columns
        self._relayout()
        if self.columns != columns:
            self.updateGeometry()
        super().resizeEvent(event)

    def sizeHint(self, which: Qt.SizeHint, constraint: QSizeF = QSizeF()) -> QSizeF:  # noqa: B008
        if self.below:
            height = self._height_below()
            wide = 1e6 if which == Qt.SizeHint.MaximumSize else 0.0
            return QSizeF(wide, height)
        width = self._col_w * self.columns + self.MARGIN if self.entries else 0.0
        # as tall as the row (the plot area) allows; it asks for no height of its own
        tall = 1e6 if which == Qt.SizeHint.MaximumSize else 0.0
        return QSizeF(width, tall)

    def rows(self) -> int:
        if self.below:
            return self._flow_rows
        return math.ceil(len(self.entries) / self.columns) if self.entries else 0

    def entry_rect(self, i: int) -> QRectF:
        h = self._line_h()
        if self.below:  # row by row, left to right
            return QRectF(self._rects[i])
        rows = max(1, self.rows())
        col, row = divmod(i, rows)
        return QRectF(self.MARGIN + col * self._col_w, 3 + row * h, self._col_w, h)

    def paint(self, p: QPainter, *args: Any) -> None:
        p.setFont(self.font_)
        metrics = QFontMetricsF(self.font_)
        for i, e in enumerate(self.shown if self.below else self.entries):
            r = self.entry_rect(i)
            sw = QRectF(r.left(), r.top() + 3, self.SWATCH, r.height() - 6)
            self._draw_swatch(p, e, sw)
            p.setPen(QColor(self.color))
            room = QRectF(sw.right() + 6, r.top(), r.width() - self.SWATCH - 6, r.height())
            text = metrics.elidedText(e.text, Qt.TextElideMode.ElideRight, room.width())
            p.drawText(room, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                       text)

    def _draw_swatch(self, p: QPainter, e: LegendEntry, sw: QRectF) -> None:
        if e.kind == "note":  # a line of text, no swatch
            return
        color = QColor(e.color)
        style = Qt.PenStyle.DashLine if e.dashed else Qt.PenStyle.SolidLine
        if e.kind == "line":
            p.setPen(QPen(color, 2, style))
            p.drawLine(QPointF(sw.left(), sw.center().y()), QPointF(sw.right(), sw.center().y()))
            if e.symbol:
                p.save()
                p.translate(sw.center())
                pg.graphicsItems.ScatterPlotItem.drawSymbol(
                    p, e.symbol, 8, QPen(color, 1.0 / 8 * 1.5),
                    QBrush(QColor(self.color) if e.dashed else color))
                p.restore()
            return
        if e.kind == "outline":
            p.setPen(QPen(color, 2, style))
            p.setBrush(Qt.BrushStyle.NoBrush)
        else:
            p.setPen(QPen(QColor(self.color), 1))
            p.setBrush(QBrush(color, Qt.BrushStyle.BDiagPattern if e.hatched
                              else Qt.BrushStyle.SolidPattern))
        p.drawRect(sw.adjusted(4, 0, -4, 0))


class Chart(pg.PlotWidget):
    """A themed plot with a side legend and an empty state (a sentence in place of axes)."""

    styles_axes = True  # apply_theme sizes the axes (plot_style.style_plots leaves them)
    LEGEND_SHARE = 0.45  # of the chart's width, at most, for a legend beside the plot
    SIDE_SHARE = 0.3  # a legend that needs more than this beside the plot goes below it
    STAGE_SIDE_SHARE = 0.2  # on stage (the level names in large type need the width)
    BELOW_SHARE = 0.2  # of the chart's height for a legend below the plot (its type shrinks)
    BELOW_MOST = 0.3  # and never more: the first entries, "… N more: hover a curve"

    def __init__(self, title: str, parent: QWidget | None = None,
                 axes: dict[str, pg.AxisItem] | None = None):
        axis_items = plain_axes()
        axis_items.update(axes or {})
        super().__init__(parent=parent, axisItems=axis_items)
        quiet_axes(self.getPlotItem())
        self.base_title = title
        self.theme = NORMAL
        self.store: SessionStore | None = None
        self.selected: str | None = None  # the level chosen in the ladder panel
        self.setMinimumSize(240, 160)
        item = self.getPlotItem()
        item.hideButtons()  # the "A" auto-range button is no part of a picture
        item.setMenuEnabled(False)
        self._placing = False  # place_legend is laying the legend out
        self.side_legend = SideLegend()
        self.side_legend.width_changed = self._legend_changed
        item.layout.addItem(self.side_legend, 2, 3)  # (2, 2): the right axis
        self._legend_cell = (2, 3)
        self.empty_text = pg.TextItem("", anchor=(0.5, 0.5))
        # wrapped to the view's width, each line centred (a long one was cut at both ends)
        self.empty_text.textItem.document().setDefaultTextOption(
            QTextOption(Qt.AlignmentFlag.AlignHCenter))
        item.addItem(self.empty_text, ignoreBounds=True)
        self.empty_text.hide()
        item.vb.sigResized.connect(self._wrap_empty_text)
        self.empty = False
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            # an axis repaints from a pixmap unless its range, ticks or font changed (the
            # font is set through setTickFont, which invalidates it), and draws major ticks
            # and grid lines only: the minor grid costs ~5 ms per redraw here
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            axis.setStyle(maxTickLevel=0, maxTextLevel=0)
        # the title's room is the chart's width less the left axis's: an axis widened by
        # new tick labels (no resize of the chart) left a title wider than its room, which
        # widened the plot past the widget and cut its right side off
        self._title_axis_px = 0.0
        item.getAxis("left").geometryChanged.connect(self._axis_resized)
        self._make_fields()  # the subclass's own fields, then the first theme styles all
        self.apply_theme(NORMAL)

    def _make_fields(self) -> None:
        """Make the subclass's own fields and items (called once, at the end of
        ``Chart.__init__``, before the first theme is applied, so ``apply_theme`` finds
        every field it styles)."""

    def _axis_resized(self) -> None:
        width = self.getPlotItem().getAxis("left").width()
        if width != self._title_axis_px:
            self._title_axis_px = width
            self._show_title()
            # and the plot back to the widget's size (a title that was too wide left it
            # wider; the view fits its item only on a resize of its own)
            if self.centralWidget is not None and not self.closed:
                self.centralWidget.setGeometry(self.range)

    def set_title_text(self, title: str) -> None:
        if title != self.base_title or not self.getPlotItem().titleLabel.text:
            self.base_title = title
            self._show_title()

    def _show_title(self) -> None:
        """The title, elided to the chart's width (a title wider than the chart would
        widen the plot past the widget and cut its right side off); full in the tooltip."""
        font = QFont()
        font.setPointSize(self.theme.font_pt + 2)
        item = self.getPlotItem()
        legend = self.side_legend.preferredWidth() if self.side_legend.entries and \
            not self.side_legend.below else 0.0
        room = max(40.0, self.width() - item.getAxis("left").width() - legend - 30)
        shown = QFontMetricsF(font).elidedText(self.base_title, Qt.TextElideMode.ElideRight,
                                               room)
        # (LabelItem takes HTML: the title's text is escaped)
        self.setTitle(html.escape(shown), color=self.theme.foreground,
                      size=f"{self.theme.font_pt + 2}pt")
        item.layout.setRowFixedHeight(0, item.titleLabel.itemRect().height() + 4)
        self.setToolTip(plain_tooltip(self.base_title) if shown != self.base_title else "")

    def resizeEvent(self, event: Any) -> None:
        # (pyqtgraph resizes during its __init__, and once its plot is gone on close)
        if hasattr(self, "side_legend") and self.getPlotItem() is not None:
            self.place_legend()
            self._show_title()  # first: the title's width bounds the plot's
        super().resizeEvent(event)

    def _legend_changed(self) -> None:
        self.place_legend()
        self._show_title()

    def place_legend(self) -> None:
        """Beside the plot where the legend's column takes at most SIDE_SHARE of the
        chart's width, else in rows below the x axis (a narrow chart, large type)."""
        legend = self.side_legend
        if self._placing:
            return
        self._placing = True
        try:
            plot_h = self.getPlotItem().vb.height() or self.height() * 0.7
            share = self.SIDE_SHARE if self.theme.name == "normal" else self.STAGE_SIDE_SHARE
            below = bool(legend.entries) and \
                legend.side_width(plot_h) > share * max(self.width(), 1)
            cell = (4, 1) if below else (2, 3)
            if cell != self._legend_cell:
                layout = self.getPlotItem().layout
                layout.removeItem(legend)
                layout.addItem(legend, *cell)
                self._legend_cell = cell
            legend.set_max_width(self.width() * self.LEGEND_SHARE)
            left = self.getPlotItem().getAxis("left").width()
            legend.set_below(below, self.height() * self.BELOW_SHARE,
                             max(self.width() - left - 10, 1.0),
                             self.height() * self.BELOW_MOST)
        finally:
            self._placing = False
        # the plot as large as the view again: a legend that was taller for a moment (a
        # first layout before the width was known) grew it past the view, and a graphics
        # layout never shrinks its top widget back
        if getattr(self, "range", None) is not None:
            self.getPlotItem().setGeometry(self.range)

    def bind(self, store: SessionStore) -> None:
        self.store = store

    def set_selected(self, level_id: str | None) -> None:
        """Highlight this level (subclasses draw it)."""
        self.selected = level_id

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.setBackground(theme.background)
        item = self.getPlotItem()
        item.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        font = QFont()
        font.setPointSize(theme.font_pt)
        ticks = plot_font(theme) or font  # on stage the tick type every plot has
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(theme.foreground)
            axis.setTextPen(theme.foreground)
            axis.setTickFont(ticks)
            axis.label.setFont(font)
            axis.setLabel(axis.labelText, units=None,
                          **{"color": theme.foreground, "font-size": f"{theme.font_pt}pt"})
        self.side_legend.set_style(theme.foreground, theme.font_pt - 1, min_text_pt(theme))
        self.place_legend()
        self.empty_text.setColor(theme.foreground)
        self.empty_text.setFont(font)
        self._show_title()

    def set_label(self, axis: str, text: str) -> None:
        self.getPlotItem().getAxis(axis).setLabel(
            text, **{"color": self.theme.foreground, "font-size": f"{self.theme.font_pt}pt"})

    def _wrap_empty_text(self, *_: object) -> None:
        width = max(self.getPlotItem().vb.width() - 16, 80.0)
        if self.empty_text.textItem.textWidth() != width:
            self.empty_text.setTextWidth(width)

    def show_empty(self, text: str | None) -> bool:
        """Show ``text`` in place of axes and data (None: the data). True when empty."""
        empty = text is not None
        item = self.getPlotItem()
        if empty:
            if self.empty_text.toPlainText() != text:
                self.empty_text.setText(text)
            self._wrap_empty_text()
            item.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            self.empty_text.setPos(0.5, 0.5)
        if empty != self.empty:
            self.empty = empty
            self.empty_text.setVisible(empty)
            for name in ("left", "bottom"):
                item.showAxis(name, not empty)
            item.showGrid(x=not empty, y=not empty, alpha=self.theme.grid_alpha)
            self.side_legend.setVisible(not empty and bool(self.side_legend.entries))
        return empty

"""The legend a chart draws outside its plot area (never over the data): in a column right
of the plot, in as many columns as the height needs, or in rows under the x axis where the
chart is too narrow to give it that column."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from ..theme import NORMAL


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
        # (point size, text) -> its width: each text measured once per size, however many
        # layouts are tried (a legend of a thousand GPUs tries a dozen)
        self._advances: dict[tuple[float, str], float] = {}
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemClipsToShape, False)
        # repainted from a pixmap unless its entries, style or size changed (update()):
        # drawing its markers and text costs ~1 ms per repaint of the chart
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def set_entries(self, entries: list[LegendEntry]) -> None:
        if entries != self.entries:
            self.entries = entries
            self._advances.clear()
            self._relayout()
            self.update()

    def set_style(self, color: str, point_size: int, min_pt: float | None = None) -> None:
        self.color = color
        self.min_pt = max(float(self.MIN_PT), min_pt or 0.0)
        self.base_pt = max(math.ceil(self.min_pt), point_size)
        self._relayout()
        self.update()

    def relayout(self) -> None:
        """Fit the type to the room the legend has now."""
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

    def _advance(self, text: str, metrics: QFontMetricsF) -> float:
        key = (self.font_.pointSizeF(), text)
        width = self._advances.get(key)
        if width is None:
            width = self._advances[key] = metrics.horizontalAdvance(text)
        return width

    def _column_width(self) -> float:
        metrics = QFontMetricsF(self.font_)
        widest = max((self._advance(e.text, metrics) for e in self.entries), default=0.0)
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
        among them, and a last one that says how many more the hover names. The count is
        found by halving (the rows grow with the entries kept): a few flows, not one per
        entry, so a legend of a thousand entries costs what a few of its layouts cost."""
        rows = max(1, int((self.hard_height - 6) // self._line_h()))
        selected = [e for e in self.entries if "(selected)" in e.text]

        def kept(keep: int) -> list[LegendEntry]:
            first = self.entries[:keep]
            chosen = set(first)
            first += [e for e in selected if e not in chosen]
            more = LegendEntry(f"… {len(self.entries) - len(first)} more: hover a curve",
                               self.color, kind="note")
            return [*first, more]

        def fits(keep: int) -> bool:
            self._flow(width, kept(keep))
            return self._flow_rows <= rows

        lo, hi = 0, len(self.entries) - 1  # the most that fit lies in [lo, hi]; 0: none
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid - 1
        if lo >= 1:
            self._flow(width, kept(lo))
        else:
            self._flow(width, self.entries[:1])

    def _flow(self, width: float, entries: list[LegendEntry]) -> None:
        metrics = QFontMetricsF(self.font_)
        h = self._line_h()
        x, row = 0.0, 0
        self._rects = []
        self.shown = list(entries)
        for e in entries:
            w = min(self.SWATCH + 8 + self._advance(e.text, metrics) + 18, max(width, 1.0))
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

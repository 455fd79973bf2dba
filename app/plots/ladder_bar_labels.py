"""The ladder bars' value labels, one over each bar, that never collide: full texts
where every one fits its slot, else the values alone, smaller type down to the theme's
floor, raised over their neighbours, the view's top raised to make room, hidden last
(the hover has every number). Where a label goes is :mod:`.bar_label_layout`'s; what it
says, :mod:`.ladder_bar_rows`'.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont

from ..theme import min_text_pt
from .bar_label_layout import LABEL_MARGIN_PX, BarLabelLayout, TextSizes
from .chart_base import Chart
from .ladder_bar_rows import BarRow
from .level_ticks import NameAxis


class ValueLabels(Chart):
    """Mixed into LadderBars, which draws the bars and sets what their labels say."""

    rows: list[BarRow]
    labels: list[pg.TextItem]
    label_texts: list[str]  # the full texts; a label may show a shorter one
    short_values: list[str | None]  # each value in three significant digits, where shorter
    label_tops: np.ndarray  # the top of what each bar draws, in view coordinates
    names: NameAxis
    floor: float
    _data_top: float
    _ref_spans: list[tuple[int, int, float]]
    _text_sizes: TextSizes

    def is_log(self) -> bool:  # the bars': whether the value axis is logarithmic
        raise NotImplementedError

    def _draw_band(self) -> None:  # the bars': the selected level's band, to the view's top
        raise NotImplementedError

    def place_labels(self, *_: object) -> None:
        """Put each value label over its bar so that no two collide, and make room above
        the bars for them: full texts where they fit their slot, else the value alone; a
        label that would run into its left neighbours goes above them; the view's top is
        raised until every label fits; one that still collides is hidden (the hover has
        every number)."""
        if self.empty or not self.rows:
            return
        plot = self.getPlotItem()
        vb = plot.vb
        n = len(self.rows)
        self._make_labels(n)
        width_px, height_px = max(vb.width(), 1.0), max(vb.height(), 1.0)
        x_lo, x_hi = self.names.place([row.level for row in self.rows]) or (-0.6, n - 0.4)
        slot_px = width_px / (x_hi - x_lo)
        pt = self._label_pt(slot_px)
        for label in self.labels:
            font = label.textItem.font()
            if font.pointSizeF() != pt:
                font.setPointSizeF(pt)
                label.setFont(font)
        # a label wider than its slot shows its value alone (the rest is in the hover),
        # and then every label does; where the values at the smallest type still do not
        # clear each other, each in three significant digits (a label raised over its
        # neighbours leaves its bar)
        font = self.labels[0].textItem.font() if self.labels else None
        values = [t.split("\n")[0] for t in self.label_texts]
        if font is not None and not self._text_sizes.values_clear(values, font, slot_px):
            values = [v if s is None else s + v[len(v.split(" ")[0]):]
                      for v, s in zip(values, self.short_values, strict=True)]
        # whole texts only where every one fits its slot: one bar with its percentage
        # among bars without read as a different kind of number
        whole = font is None or all(self._text_width(t, font) <= slot_px - 2
                                    for t in self.label_texts)
        texts = list(self.label_texts) if whole else values
        top = self._data_top
        self._set_texts(texts)  # (whole where all fit: a percentage is never dropped
        # to keep a label under a cuBLAS line; it sits just over the line instead)
        sizes = [label.textItem.boundingRect() for label in self.labels]

        layout = BarLabelLayout(self.floor, self.label_tops, self._ref_spans, x_lo, slot_px)

        def lay_out(top: float) -> list[QRectF]:
            return layout.stack(sizes, top, height_px)

        for _round in range(4):  # raising the top moves the bars down: settle in a few rounds
            rects = lay_out(top)
            highest = min(r.top() for r in rects)
            if highest >= 2 or height_px < 40:
                break
            # the room the highest label lacks, as a share of the plot's height
            lack = min(0.5, (2 - highest) / height_px + 0.01)
            # (never more than 2.5 times the data's span, on a log axis 1.5 decades over
            # it: a label that still does not fit is hidden below; a short stage plot
            # rose to 10^7 and labelled that alone)
            top = min(self.floor + (top - self.floor) / (1 - lack), self._highest_top())
        else:  # the top was raised after the last layout: lay out for it
            rects = lay_out(top)
        if vb.viewRange()[1] != [self.floor, top] or vb.viewRange()[0] != [x_lo, x_hi]:
            plot.setXRange(x_lo, x_hi, padding=0)
            plot.setYRange(self.floor, top, padding=0)
        per_px = (top - self.floor) / height_px
        kept: list[QRectF] = []
        for i, (label, rect) in enumerate(zip(self.labels, rects, strict=True)):
            label.setPos(i, self.floor + (height_px - rect.bottom()) * per_px)
            fits = rect.top() >= 0 and not any(rect.intersects(k) for k in kept)
            label.setVisible(fits)
            if fits:
                kept.append(rect)
            self._set_fill(label, bool(layout.line_crossings(rect, height_px, 1 / per_px)))
        self._draw_band()

    def _highest_top(self) -> float:
        """The highest the view's top may rise to make room for the value labels."""
        span = self._data_top - self.floor
        return self._data_top + 1.5 if self.is_log() else self.floor + 2.5 * span

    def _label_pt(self, slot_px: float) -> float:
        """The value labels' type: a point over the names' (the theme's at most), smaller
        in half points, down to the theme's floor, until neighbouring values clear each
        other side by side: a label raised over its neighbour floats away from its bar."""
        top = float(min(self.names.pt + 1, self.theme.font_pt))
        # (no smaller than the names where the theme sets no floor)
        floor = min(top, max(min_text_pt(self.theme, float(self.names.pt)), top - 4))
        if not self.labels:
            return top
        values = [t.split("\n")[0] for t in self.label_texts]
        font = QFont(self.labels[0].textItem.font())
        pt = top
        while True:
            font.setPointSizeF(pt)
            if pt <= floor or self._text_sizes.values_clear(values, font, slot_px):
                return pt
            pt = max(floor, pt - 0.5)

    def _label_fill(self, opaque: bool) -> QColor:
        back = QColor(self.theme.background)
        back.setAlpha(255 if opaque else 200)  # readable where a cuBLAS line runs behind
        return back

    def _set_fill(self, label: pg.TextItem, opaque: bool) -> None:
        """A label's box: opaque where a cuBLAS line runs behind it (the text stays clean)."""
        want = self._label_fill(opaque)
        if label.fill.color() != want:
            label.fill = pg.mkBrush(want)
            label.update()

    def _make_labels(self, n: int) -> None:
        plot = self.getPlotItem()
        while len(self.labels) < n:
            label = pg.TextItem("", anchor=(0.5, 1), color=self.theme.foreground,
                                fill=self._label_fill(False))
            label.setZValue(20)
            label.textItem.document().setDocumentMargin(LABEL_MARGIN_PX)
            # (no DeviceCoordinateCache: its pixmap survives a move and is drawn at whole
            # device pixels, so a label's glyphs depended on where it had been before, and
            # a talk's first frame differed from the same scene after a full load; the
            # cache saved 1.7 ms a repaint, 4.6 -> 2.9)
            font = label.textItem.font()
            font.setPointSize(self.theme.font_pt)
            label.setFont(font)
            plot.addItem(label)
            self.labels.append(label)
        while len(self.labels) > n:
            plot.removeItem(self.labels.pop())

    def _set_texts(self, texts: list[str]) -> None:
        for label, t in zip(self.labels, texts, strict=True):
            if label.toPlainText() != t:
                label.setText(t, color=self.theme.foreground)

    def _text_width(self, text: str, font: QFont) -> float:
        return self._text_sizes.width(text, font)

"""The roofline: TFLOPS against arithmetic intensity (FLOP per DRAM byte), both on log
axes; a point per level and reference at one shape, the roofs of its precisions.

Coordinates in the view are log10 of both (as the sweep's markers are), so the axes read
plain numbers (PlainAxis in log mode). Each roof is the bandwidth's slope up to its ridge,
then flat at the peak: solid for the datasheet's, dashed for the session's measured
ceilings, in the precision's colour, named in the legend with its peak. A level's point is its
shade of the precision's hue (a reference hollow); where ncu measured the DRAM bytes of a
whole launch, a small cross marks the measured intensity at the same TFLOPS. The chart
remembers what it drew (``drawn_points``, ``drawn_roofs``) for tests and the hover.

Each point is named beside it (``label_places``): the places are worked out in pixels
whenever the plot is resized or its range changes (point_label_layout.py), so a label
never covers another label, a point or the slopes' texts, on screen, on stage and in
the exports at any size; a label slid away from its point has a leader line to it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QWidget

from ...kernels import results as rl
from ..core.roofline_data import RooflineData
from ..core.view_state import shape_text
from ..theme import Theme, level_colors, min_text_pt, precision_color
from .chart_base import Chart
from .hover_readout import HoverReadout
from .point_label_layout import PlacedLabel, leader_end, place_labels
from .side_legend import LegendEntry

EMPTY = "Roofline: no result at this shape yet"
LABEL_DECADES = 0.8  # room right of the rightmost point (for its name)


class RooflineChart(Chart):
    level_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Roofline", parent)
        self.setLogMode(x=True, y=True)
        self.set_label("bottom", "arithmetic intensity (FLOP/byte, log)")
        self.set_label("left", "TFLOPS (log)")
        self.data = RooflineData(None)
        self.drawn_points: list[rl.Point] = []
        self.drawn_roofs: list[rl.Roof] = []
        self.colors: dict[str, str] = {}
        self._items: list[Any] = []
        self.scatter = pg.ScatterPlotItem(pxMode=True)
        self.scatter.setZValue(5)
        self.addItem(self.scatter)
        self.scatter.sigClicked.connect(self._clicked)
        # the baseline recording's points: hollow squares in the theme's foreground
        self.base_scatter = pg.ScatterPlotItem(pxMode=True)
        self.base_scatter.setZValue(6)  # above the session's: a square around its circle
        self.addItem(self.base_scatter)
        self.drawn_base: list[rl.Point] = []
        self.measured_scatter = pg.ScatterPlotItem(pxMode=True)
        self.measured_scatter.setZValue(4)
        self.addItem(self.measured_scatter)
        # the points' names, placed in pixels (place_point_labels)
        self.point_labels: list[pg.TextItem] = []
        self.label_places: dict[str, PlacedLabel] = {}  # level -> its label's place
        self.unlabelled: list[str] = []  # levels whose name found no free place
        self.leaders = pg.PlotCurveItem(connect="pairs")
        self.leaders.setZValue(3)
        self.addItem(self.leaders, ignoreBounds=True)
        self._fixed_texts: list[pg.TextItem] = []  # the slopes' labels (labels avoid them)
        vb = self.getPlotItem().vb
        vb.sigResized.connect(self.place_point_labels)
        vb.sigRangeChanged.connect(self.place_point_labels)
        self.hover = HoverReadout(self, self._describe)
        self.show_empty(EMPTY)

    # ------------------------------------------------------------------ data
    def set_data(self, data: RooflineData) -> None:
        self.data = data
        self.redraw()

    def set_selected(self, level_id: str | None) -> None:
        super().set_selected(level_id)
        self.redraw()

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        if hasattr(self, "scatter"):
            self.redraw()

    def redraw(self) -> None:
        for item in self._items:
            self.removeItem(item)
        self._items = []
        self._fixed_texts = []
        data = self.data
        title = f"Roofline at {shape_text(data.shape)}" + (f", {data.gpu}" if data.gpu else "")
        self.set_title_text(title)
        if self.show_empty(None if data.points else EMPTY):
            self.scatter.setData([])
            self.measured_scatter.setData([])
            self.base_scatter.setData([])
            self.drawn_base = []
            self.side_legend.set_entries([])
            self.drawn_points, self.drawn_roofs = [], []
            self.place_point_labels()
            return
        lo, hi = rl.axis_span((*data.points, *data.baseline_points),
                              (*data.roofs, *data.measured))
        hi = max(hi, math.log10(max(p.ai for p in data.points)) + LABEL_DECADES)
        self._draw_roofs(lo, hi)
        self._draw_points()
        every = [*data.points, *data.baseline_points]
        tops = [p.tflops for p in every] + [r.peak_tflops for r in self.drawn_roofs]
        bottom = min(p.tflops for p in every)
        self.setXRange(lo, hi, padding=0)
        self.setYRange(math.floor(math.log10(bottom) - 0.3), math.log10(max(tops)) + 0.25,
                       padding=0)
        self.place_point_labels()

    def _draw_roofs(self, lo: float, hi: float) -> None:
        """A slope per bandwidth (up to its highest ridge, labelled with the bandwidth),
        and a flat line per peak from its ridge on; precisions of one peak (FP16 and
        BF16) share one line and one label."""
        self.drawn_roofs = [*self.data.roofs, *self.data.measured]
        self.roof_entries: list[LegendEntry] = []
        slopes: dict[tuple[float, bool], float] = {}
        flats: dict[tuple[float, float, bool], list[rl.Roof]] = {}
        for roof in self.drawn_roofs:
            key = (roof.bandwidth_gbs, roof.measured)
            slopes[key] = max(slopes.get(key, 0.0), roof.ridge)
            flats.setdefault((roof.peak_tflops, roof.bandwidth_gbs, roof.measured), []
                             ).append(roof)
        # the slopes' labels one under another, below the lowest slope: the lines rise to
        # the right, so a label above one (or between two) is crossed by it
        lowest = min(bw for bw, _ in slopes) if slopes else 0.0
        x_text = lo + 0.15
        for i, ((bw, measured), ridge) in enumerate(sorted(slopes.items())):
            style = Qt.PenStyle.DashLine if measured else Qt.PenStyle.SolidLine
            x0 = 10 ** lo
            self._line([x0, ridge], [x0 * bw / 1e3, ridge * bw / 1e3],
                       pg.mkPen(self.theme.foreground, width=self.theme.line_px, style=style))
            kind = "measured" if measured else "datasheet"
            self._text(f"DRAM {bw:.0f} GB/s ({kind})", self.theme.foreground, x_text,
                       math.log10(10 ** x_text * lowest / 1e3), (0, -1.1 * i))
        for (peak, _bw, measured), same in flats.items():
            color = precision_color(same[0].precision)
            style = Qt.PenStyle.DashLine if measured else Qt.PenStyle.SolidLine
            self._line([same[0].ridge, 10 ** hi], [peak, peak],
                       pg.mkPen(color, width=self.theme.line_px + (0 if measured else 1),
                                style=style))
            names = "/".join(r.precision.upper() for r in same)
            kind = "measured" if measured else "datasheet"
            # named in the legend, not on the plot: a label at the line's end sat on the
            # points of the next precision up
            self.roof_entries.append(LegendEntry(f"{names} {peak:.4g} ({kind})", color,
                                                 kind="line", dashed=measured))

    def _line(self, xs: list[float], ys: list[float], pen: Any) -> None:
        curve = pg.PlotDataItem(np.array(xs), np.array(ys), pen=pen)
        curve.setLogMode(True, True)
        curve.setZValue(1)
        self.addItem(curve)
        self._items.append(curve)

    def _text(self, text: str, color: str, x: float, y: float,
              anchor: tuple[float, float]) -> None:
        label = pg.TextItem(text, color=color, anchor=anchor)
        label.setPos(x, y)
        label.setZValue(2)
        self.addItem(label, ignoreBounds=True)
        self._items.append(label)
        self._fixed_texts.append(label)

    def _draw_points(self) -> None:
        store_levels = [(p.level, p.precision, p.is_reference) for p in self.data.points]
        self.colors = level_colors(store_levels)
        self.drawn_points = list(self.data.points)
        spots, crosses = [], []
        size = 10 if self.theme.name == "normal" else 16  # on stage, seen from the back
        for p in self.drawn_points:
            color = self.colors.get(p.level, precision_color(p.precision))
            chosen = p.level == self.selected
            spots.append({"pos": (math.log10(p.ai), math.log10(p.tflops)), "data": p.level,
                          "size": size * 3 // 2 if chosen else size, "symbol": "o",
                          "pen": pg.mkPen(self.theme.foreground if chosen else color,
                                          width=2.5 if chosen else 1.5),
                          "brush": pg.mkBrush(self.theme.background if p.is_reference
                                              else color)})
            if p.ai_measured:
                crosses.append({"pos": (math.log10(p.ai_measured), math.log10(p.tflops)),
                                "data": p.level, "size": size, "symbol": "x",
                                "pen": pg.mkPen(color, width=1.5), "brush": pg.mkBrush(color)})
        entries = list(self.roof_entries)
        roofed = {r.precision for r in self.drawn_roofs}
        for precision in dict.fromkeys(p.precision for p in self.drawn_points):
            if precision not in roofed:
                entries.append(LegendEntry(f"{precision.upper()} (no roof)",
                                           precision_color(precision), kind="line"))
        self.drawn_base = list(self.data.baseline_points)
        base_spots = [{"pos": (math.log10(p.ai), math.log10(p.tflops)), "data": p.level,
                       "size": size + 8, "symbol": "s",
                       "pen": pg.mkPen(self.theme.foreground, width=1.5),
                       "brush": pg.mkBrush(None)} for p in self.drawn_base]
        if self.drawn_base:
            entries.append(LegendEntry(f"baseline: {self.data.baseline}",
                                       self.theme.foreground, kind="line", symbol="s"))
        self.base_scatter.setData(base_spots)
        self.scatter.setData(spots)
        self.measured_scatter.setData(crosses)
        self.side_legend.set_entries(entries)

    # ------------------------------------------------------------------ names
    def _point_px(self) -> float:
        """A point's diameter in pixels (as _draw_points draws it)."""
        return 10 if self.theme.name == "normal" else 16  # on stage, seen from the back

    def label_font(self) -> QFont:
        """The points' names: a point under the chart's type; on stage the theme's
        smallest readable type (many names share the plot)."""
        font = QFont()
        font.setPointSizeF(self.theme.font_pt - 1 if self.theme.name == "normal"
                           else max(min_text_pt(self.theme), 1.0))
        return font

    def _to_px(self, x: float, y: float) -> QPointF:
        """View coordinates (log10 of both) to plot pixels (y down)."""
        vb = self.getPlotItem().vb
        (x0, x1), (y0, y1) = vb.viewRange()
        return QPointF((x - x0) / (x1 - x0 or 1) * vb.width(),
                       (y1 - y) / (y1 - y0 or 1) * vb.height())

    def _to_view(self, p: QPointF) -> tuple[float, float]:
        vb = self.getPlotItem().vb
        (x0, x1), (y0, y1) = vb.viewRange()
        return (x0 + p.x() / max(vb.width(), 1.0) * (x1 - x0),
                y1 - p.y() / max(vb.height(), 1.0) * (y1 - y0))

    def _make_point_labels(self, n: int) -> None:
        while len(self.point_labels) < n:
            label = pg.TextItem("", anchor=(0, 0))
            label.setZValue(7)  # over the roofs and the points' neighbours
            label.textItem.document().setDocumentMargin(1)
            self.addItem(label, ignoreBounds=True)
            self.point_labels.append(label)
        while len(self.point_labels) > n:
            self.removeItem(self.point_labels.pop())

    def place_point_labels(self, *_: object) -> None:
        """Name every point beside it where there is room (point_label_layout.py): the
        selected level first, then from the top of the plot down; in pixels, so again on
        every resize and range change."""
        vb = self.getPlotItem().vb
        points = [] if self.empty else self.drawn_points
        self._make_point_labels(len(points))
        self.label_places, self.unlabelled = {}, []
        if not points or vb.width() < 2 or vb.height() < 2:
            self.leaders.setData([], [])
            return
        font = self.label_font()
        back = QColor(self.theme.background)
        back.setAlpha(200)  # a roof line behind a name leaves it readable
        order = sorted(range(len(points)), key=lambda i: (
            points[i].level != self.selected, -points[i].tflops))
        centres = [self._to_px(math.log10(p.ai), math.log10(p.tflops)) for p in points]
        sizes = []
        for p, label in zip(points, self.point_labels, strict=True):
            # the level's id, as the ladder's table and bars name it (a reference's full
            # name, "cuBLASLt FP8 (1x128 / 128x128 block scales)", is the hover's)
            text = p.level
            if label.toPlainText() != text or label.textItem.font() != font:
                label.setText(text)
                label.setFont(font)
            label.setColor(self.theme.foreground)  # (a level's shade is unreadable on stage)
            label.fill = pg.mkBrush(back)
            rect = label.textItem.boundingRect()
            sizes.append(QSizeF(rect.width(), rect.height()))
        size = self._point_px()
        # the other marks a name must not cover: the baseline's squares, the crosses
        others = [self._to_px(math.log10(q.ai), math.log10(q.tflops)) for q in self.drawn_base]
        others += [self._to_px(math.log10(q.ai_measured), math.log10(q.tflops))
                   for q in self.drawn_points if q.ai_measured]
        fixed = [QRectF(c.x() - size, c.y() - size, 2 * size, 2 * size) for c in others]
        fixed += [self._text_rect(t) for t in self._fixed_texts if t.isVisible()]
        bounds = QRectF(0, 0, vb.width(), vb.height())
        # the selected point is drawn half as large again
        radius = size * 3 / 4 if self.selected in {p.level for p in points} else size / 2
        placed = place_labels([centres[i] for i in order], [sizes[i] for i in order],
                              radius, bounds, fixed)
        lines_x: list[float] = []
        lines_y: list[float] = []
        for i, where in zip(order, placed, strict=True):
            label, p = self.point_labels[i], points[i]
            label.setVisible(where is not None)
            if where is None:
                self.unlabelled.append(p.level)
                continue
            self.label_places[p.level] = where
            label.setPos(*self._to_view(where.rect.topLeft()))
            if where.leader:
                end = leader_end(centres[i], where.rect)
                for q in (centres[i], end):
                    x, y = self._to_view(q)
                    lines_x.append(x)
                    lines_y.append(y)
        self.leaders.setData(lines_x, lines_y,
                             pen=pg.mkPen(self.theme.foreground, width=1))

    def _text_rect(self, item: pg.TextItem) -> QRectF:
        """A text item's rectangle in plot pixels (from its place and anchor: its own
        transform is worked out only when it is next painted)."""
        size = item.textItem.boundingRect()
        at = self._to_px(item.pos().x(), item.pos().y())
        return QRectF(at.x() - item.anchor.x() * size.width(),
                      at.y() - item.anchor.y() * size.height(), size.width(), size.height())

    # ------------------------------------------------------------------ mouse
    def point_near(self, x: float, y: float) -> rl.Point | None:
        """The drawn point (the session's or the baseline's) nearest view coordinates
        (log10 intensity, log10 TFLOPS)."""
        every = [*self.drawn_points, *self.drawn_base]
        if self.empty or not every:
            return None
        d = [math.hypot(math.log10(p.ai) - x, math.log10(p.tflops) - y) for p in every]
        i = int(np.argmin(d))
        return every[i] if d[i] < 0.35 else None

    def describe(self, p: rl.Point) -> str:
        name = self.data.name_of(p.level)
        # by identity: a baseline's result can equal this session's in every field (CUDA
        # events tick in 0.5 µs steps, so two runs of a short launch can share a median)
        if (any(p is q for q in self.drawn_base)
                and not any(p is q for q in self.drawn_points)):
            text = f"baseline {name} ({p.precision.upper()}): {p.tflops:.4g} TFLOPS"
            now = next((q for q in self.drawn_points if q.level == p.level), None)
            if now is not None:
                change = 100 * (now.tflops / p.tflops - 1)
                text += f"\nthis session: {now.tflops:.4g} ({change:+.1f}%)"
            return text
        text = (f"{name} ({p.precision.upper()}): {p.tflops:.4g} TFLOPS at "
                f"{p.ai:.4g} FLOP/byte")
        if p.ai_measured:
            text += f" (measured {p.ai_measured:.4g})"
        for roof in self.drawn_roofs:
            if roof.precision == p.precision:
                kind = "measured" if roof.measured else "datasheet"
                text += (f"\n{100 * roof.fraction(p):.0f}% of the {kind} "
                         f"{roof.precision.upper()} roof")
        return text

    def _describe(self, x: float, y: float) -> str | None:
        p = self.point_near(x, y)
        if p is None:
            return None
        # the readout opens toward the plot's middle, so it is never cut at an edge
        (x0, x1), (y0, y1) = self.getPlotItem().vb.viewRange()
        self.hover.label.setAnchor((1 if x > (x0 + x1) / 2 else 0,
                                    0 if y > (y0 + y1) / 2 else 1))
        return self.describe(p)

    def _clicked(self, _item: Any, points: Any, *_: Any) -> None:
        if len(points):
            self.level_clicked.emit(str(points[0].data()))

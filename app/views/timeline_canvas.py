"""The Timeline view's canvas (app/views/timeline.py): the measured timeline drawn on SM
lanes, each block's pieces of output tiles coloured by tile and shaded by wave, idle SMs
hatched, the tail shaded; zoomed to one SM, its blocks' lanes by phase. Hover names what
the pointer is on; PNG and SVG exports of it. It draws what app/core/trace_timeline.py
worked out."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QToolTip, QWidget

from ..core import trace_timeline as tt

PHASE_COLOURS = {tt.Phase.WAIT: "#d9534f", tt.Phase.LOAD: "#f0ad4e",
                 tt.Phase.MATH: "#2e8b57", tt.Phase.EPILOGUE: "#5b7fde",
                 tt.Phase.FIXUP: "#9b59b6", tt.Phase.STAGE_WAIT: "#b0b0b0",
                 tt.Phase.RUN: "#6c8a9e"}
GOLDEN = 0.618033988749895
EXPORT_SIZE = QSize(1280, 720)  # a picture's size unless asked: a slide's


def tile_colour(tile: int, wave: int) -> QColor:
    """A tile's hue (neighbouring tiles far apart), its wave's shade."""
    hue = (tile * GOLDEN) % 1.0
    return QColor.fromHsvF(hue, 0.55, 0.95 if wave % 2 == 0 else 0.72)


class TimelineCanvas(QWidget):
    """Draws a TraceTimeline: SM lanes (or one SM's lanes) over time."""

    hovered = Signal(str)
    RIGHT = 12.0

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setMinimumSize(240, 48)
        self.timeline: tt.TraceTimeline | None = None
        self.zoom_sm: int | None = None
        self.fg, self.bg = QColor("#202020"), QColor("#ffffff")
        # what the last paint drew, read back by tests and by hover
        self.drawn_pieces: list[tuple[QRectF, tt.Piece]] = []
        self.drawn_spans: list[tuple[QRectF, tt.Span]] = []
        self.drawn_idle: list[int] = []
        self.drawn_ticks: list[str] = []  # the axis labels drawn, in order
        self.drawn_tail: QRectF | None = None
        self.drawn_tail_label: QRectF | None = None  # where the word "tail" went
        self.drawn_rows: list[str] = []
        self.empty_text = "no trace to show"

    def set_timeline(self, timeline: tt.TraceTimeline | None, zoom_sm: int | None) -> None:
        self.timeline, self.zoom_sm = timeline, zoom_sm
        self.update()

    def set_colours(self, fg: str, bg: str) -> None:
        self.fg, self.bg = QColor(fg), QColor(bg)
        self.update()

    # ------------------------------------------------------------------ geometry
    # the gutters follow the type (on stage it is larger): the lane names at the left,
    # "tail" above, the µs axis below
    @property
    def LEFT(self) -> float:
        """The gutter of the lane names: "SM 131", or zoomed the widest of its rows' names
        ("b131 consumer 2"; "b924" where a block has one lane)."""
        names = self.zoom_names() if self.zoom_sm is not None else []
        widest = max(["SM 131", *names], key=self.fontMetrics().horizontalAdvance)
        return float(self.fontMetrics().horizontalAdvance(widest) + 10)

    def zoom_names(self) -> list[str]:
        """The names of the zoomed SM's rows, top down: the block, and its lane where a
        block has several (a producer, consumers); a block of one lane (thread 0) by its
        number alone."""
        tl = self.timeline
        if tl is None or self.zoom_sm is None:
            return []
        many = len(tl.lane_names) > 1
        return [f"b{b} {tl.lane_names.get(lane, f'lane {lane}')}" if many else f"b{b}"
                for b, lane in tl.lanes_of(self.zoom_sm)]

    @property
    def TOP(self) -> float:
        return float(self.fontMetrics().height() + 4)

    @property
    def BOTTOM(self) -> float:
        return float(self.fontMetrics().height() + 8)

    def _plot(self, size: QSize) -> QRectF:
        left = self.LEFT  # zoomed, measured from its rows' names: once
        return QRectF(left, self.TOP, max(1.0, size.width() - left - self.RIGHT),
                      max(1.0, size.height() - self.TOP - self.BOTTOM))

    def _x(self, plot: QRectF, t_ns: float) -> float:
        span = max(1, self.timeline.makespan_ns) if self.timeline else 1
        return plot.left() + plot.width() * t_ns / span

    # ------------------------------------------------------------------ paint
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        self.draw(p, self.size())
        p.end()

    def draw(self, p: QPainter, size: QSize) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.fillRect(QRectF(0, 0, size.width(), size.height()), self.bg)
        self.drawn_pieces, self.drawn_spans, self.drawn_idle = [], [], []
        self.drawn_ticks = []
        self.drawn_tail, self.drawn_tail_label, self.drawn_rows = None, None, []
        if self.timeline is None:
            p.setPen(self.fg)
            p.drawText(QRectF(0, 0, size.width(), size.height()),
                       Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                       self.empty_text)
            return
        plot = self._plot(size)
        if self.zoom_sm is None:
            self._draw_sms(p, plot)
        else:
            self._draw_zoom(p, plot, self.zoom_sm)
        self._draw_axis(p, plot)

    def _draw_sms(self, p: QPainter, plot: QRectF) -> None:
        tl = self.timeline
        assert tl is not None
        rows = max(1, tl.sm_count)
        h = plot.height() / rows
        idle = set(tl.idle_sms)
        hatch = QBrush(QColor(150, 150, 150, 110), Qt.BrushStyle.BDiagPattern)
        for sm in range(rows):
            if sm in idle:
                r = QRectF(plot.left(), plot.top() + sm * h, plot.width(), h)
                p.fillRect(r, hatch)
                self.drawn_idle.append(sm)
        tail = QRectF(self._x(plot, tl.tail_start_ns), plot.top(),
                      self._x(plot, tl.makespan_ns) - self._x(plot, tl.tail_start_ns),
                      plot.height())
        if tail.width() >= 1:
            p.fillRect(tail, QColor(255, 200, 0, 45))
            self.drawn_tail = tail
        p.setPen(Qt.PenStyle.NoPen)
        gap = 1.0 if h >= 4 else 0.0
        for piece in tl.pieces:
            x0, x1 = self._x(plot, piece.start_ns), self._x(plot, piece.end_ns)
            r = QRectF(x0, plot.top() + piece.sm * h, max(1.0, x1 - x0 - gap),
                       max(1.0, h - gap))
            p.fillRect(r, tile_colour(piece.tile, piece.wave))
            self.drawn_pieces.append((r, piece))
        p.setPen(self.fg)
        line = self.fontMetrics().height()
        every = max(1, math.ceil(line / max(h, 0.1)))  # labels a line apart, never over
        for sm in range(0, rows, every):
            y = plot.top() + sm * h + h / 2
            if y + line / 2 > plot.bottom() + 1:
                break
            p.drawText(QRectF(0, y - line / 2, self.LEFT - 6, line),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"SM {sm}")
        self.drawn_rows = [f"SM {sm}" for sm in range(rows)]
        if self.drawn_tail is not None:
            # above the tail's start, or as far right as the canvas lets the word stay whole
            # (a short tail ends at the canvas's right edge)
            width = self.fontMetrics().horizontalAdvance("tail") + 2
            left = min(tail.left() + 2, plot.right() + self.RIGHT - width - 1)
            self.drawn_tail_label = QRectF(left, 2, width, self.TOP - 4)
            p.drawText(self.drawn_tail_label,
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, "tail")

    def _draw_zoom(self, p: QPainter, plot: QRectF, sm: int) -> None:
        tl = self.timeline
        assert tl is not None
        rows = tl.lanes_of(sm)
        if not rows:
            p.setPen(self.fg)
            p.drawText(plot, Qt.AlignmentFlag.AlignCenter,
                       f"SM {sm}: no K-stage events kept for it (see the notes)")
            return
        h = plot.height() / len(rows)
        index = {r: i for i, r in enumerate(rows)}
        p.setPen(Qt.PenStyle.NoPen)
        for s in tl.phases.get(sm, []):
            i = index[(s.block, s.lane)]
            x0, x1 = self._x(plot, s.start_ns), self._x(plot, s.end_ns)
            # a pixel between steps where they are wide enough to tell apart
            w = x1 - x0 - (1.0 if x1 - x0 >= 3 else 0.0)
            r = QRectF(x0, plot.top() + i * h + 1, max(1.0, w), max(1.0, h - 2))
            p.fillRect(r, QColor(PHASE_COLOURS[s.phase]))
            self.drawn_spans.append((r, s))
        p.setPen(self.fg)
        for i, name in enumerate(self.zoom_names()):
            self.drawn_rows.append(name)
            p.drawText(QRectF(0, plot.top() + i * h, plot.left() - 6, h),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, name)

    def _draw_axis(self, p: QPainter, plot: QRectF) -> None:
        tl = self.timeline
        assert tl is not None
        p.setPen(QPen(self.fg, 1))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        total_us = tl.makespan_ns / 1000
        step = axis_step(total_us, plot.width(), self.fontMetrics().horizontalAdvance)
        t = 0.0
        while t <= total_us + 1e-9 and step > 0:
            x = self._x(plot, t * 1000)
            p.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4))
            label = f"{t:g} µs"
            w = self.fontMetrics().horizontalAdvance(label) + 4
            left = min(max(0.0, x - w / 2), self.width() - w)  # whole, inside the widget
            p.drawText(QRectF(left, plot.bottom() + 4, w, self.BOTTOM - 4),
                       Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, label)
            self.drawn_ticks.append(label)
            t += step

    # ------------------------------------------------------------------ hover
    def text_at(self, pos: QPointF) -> str:
        tl = self.timeline
        if tl is None:
            return ""
        for r, s in self.drawn_spans:
            if r.contains(pos):
                return tl.describe_span(self.zoom_sm if self.zoom_sm is not None else -1, s)
        for r, piece in self.drawn_pieces:
            if r.contains(pos):
                return tl.describe_piece(piece)
        plot = self._plot(self.size())
        if self.zoom_sm is None and plot.contains(pos):
            sm = int((pos.y() - plot.top()) / (plot.height() / max(1, tl.sm_count)))
            if sm in tl.idle_sms:
                return f"SM {sm}: idle the whole launch"
        return ""

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        text = self.text_at(event.position())
        self.hovered.emit(text)
        if text:
            QToolTip.showText(event.globalPosition().toPoint(), text, self)
        else:
            QToolTip.hideText()
        super().mouseMoveEvent(event)

    # ------------------------------------------------------------------ exports
    def image(self, size: QSize) -> QImage:
        img = QImage(size, QImage.Format.Format_ARGB32)
        p = QPainter(img)
        self.draw(p, size)
        p.end()
        return img

    def save_png(self, path: str | Path, size: QSize = EXPORT_SIZE) -> None:
        if not self.image(size).save(str(path), "PNG"):  # type: ignore[call-overload]
            raise OSError(f"cannot write {path}")

    def save_svg(self, path: str | Path, size: QSize = EXPORT_SIZE) -> None:
        gen = QSvgGenerator()
        gen.setFileName(str(path))
        gen.setSize(size)
        gen.setViewBox(QRectF(0, 0, size.width(), size.height()))
        gen.setTitle("gemmscope timeline")
        p = QPainter(gen)
        self.draw(p, size)
        p.end()


def axis_step(total_us: float, width: float, advance: Callable[[str], int]) -> float:
    """The µs between ticks: about six, fewer where their labels (as ``advance`` measures
    them in the axis's type) would not have a gap of 12 pixels between them."""
    step = _nice_step(total_us / 6)
    while step > 0:
        widest = max(advance(f"{t:g} µs") for t in (step, total_us - total_us % step))
        if width * step / max(total_us, 1e-9) >= widest + 12:
            return step
        step = _nice_step(step * 1.01)
    return step


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 0.0
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)

"""Text painted on a canvas that fits its place: where it does not fit, it shrinks in the
steps of TEXT_SCALES of the canvas font (never under MIN_TEXT_PT); where it still does
not, it is cut with "…", listed in ``cut_texts`` (the layout tests read them) and shown
whole in a tooltip over its place. Presentation mode's larger type then never spills
over a neighbour.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QHelpEvent, QPainter
from PySide6.QtWidgets import QToolTip, QWidget

from ..theme import ANIMATION, readable_on
from ..widgets.plain import plain_tooltip

TEXT_SCALES = (1.0, 0.9, 0.8, 0.7, 0.6)  # tried in turn, of the canvas font's size
MIN_TEXT_PT = 7.5  # but never smaller than this
FIT_CACHE_LIMIT = 4096  # (text, place, font) -> size; cleared when it grows past this


class PaintedText:
    """Mixed into a custom-painted QWidget (``class Canvas(PaintedText, QWidget)``); call
    :meth:`init_painted_text` in ``__init__`` and :meth:`forget_cut_texts` at the start of
    each paint."""

    def init_painted_text(self) -> None:
        self.cut_texts: list[str] = []  # texts cut in the last paint
        self.drawn_texts: list[str] = []  # every text of the last paint (tests read them)
        self.left_out: list[str] = []  # optional texts left out of the last paint
        self.min_text_pt = MIN_TEXT_PT  # the smallest type a text shrinks to (the theme's)
        self.smallest_pt = 0.0  # the smallest type of the last paint's texts (0: none)
        self._cut_places: list[tuple[QRectF, str]] = []
        self._fit_cache: dict[tuple[str, int, int, int, float, float], float] = {}

    def forget_cut_texts(self) -> None:
        self.drawn_texts.clear()
        self.cut_texts.clear()
        self.left_out.clear()
        self._cut_places.clear()
        self.smallest_pt = 0.0

    def draw_text(self, painter: QPainter, rect: QRectF, text: str,
                  color: str | QColor = "text",
                  align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft,
                  wrap: bool = False, optional: bool = False,
                  max_pt: float | None = None, on: QColor | None = None) -> None:
        """``text`` in ``rect``, in the canvas's font, or smaller (TEXT_SCALES)
        where it does not fit; what still does not fit is cut with "…", listed in
        ``cut_texts`` and shown whole in the tooltip over its place. An ``optional`` text
        (an aside the picture says elsewhere too) is left out instead of cut. ``max_pt``:
        no larger than this (a picture that measured its layout in one size keeps it).
        ``on``: the fill behind the text (a tile, a lane): the colour is then one that
        keeps WCAG's 4.5:1 on it (``color`` where it does, else black or white)."""
        pen = color if isinstance(color, QColor) else ANIMATION.color(color)
        if on is not None:
            pen = readable_on(on, pen, ANIMATION.color("background"))
        painter.setPen(pen)
        flags = int(align | Qt.AlignmentFlag.AlignVCenter)
        if wrap:
            flags = int(align | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap)
        size = self._fitting_size(rect, text, flags, max_pt)
        if size < 0 and optional:
            self.left_out.append(text)
            return
        self.drawn_texts.append(text)
        base = painter.font()
        font = QFont(base)
        font.setPointSizeF(abs(size))
        painter.setFont(font)
        self.smallest_pt = abs(size) if not self.smallest_pt else min(self.smallest_pt,
                                                                       abs(size))
        if size < 0:  # cut even at the smallest size
            self.cut_texts.append(text)
            self._cut_places.append((QRectF(rect), text))
            if not wrap:
                metrics = QFontMetricsF(font)
                text = "\n".join(metrics.elidedText(line, Qt.TextElideMode.ElideRight,
                                                     rect.width())
                                  for line in text.split("\n"))
        painter.drawText(rect, flags, text)
        painter.setFont(base)

    def _fitting_size(self, rect: QRectF, text: str, flags: int,
                      max_pt: float | None = None) -> float:
        """The largest point size (of the canvas font, down to MIN_TEXT_SCALE of it) at
        which ``text`` fits ``rect``; negative (the smallest) where none does."""
        assert isinstance(self, QWidget)
        base = self.font().pointSizeF()
        floor = max(self.min_text_pt, 1.0)
        if max_pt is not None:
            base = min(base, max(max_pt, floor))
        key = (text, round(rect.width()), round(rect.height()), flags, base, floor)
        size = self._fit_cache.get(key)
        if size is not None:
            return size
        font = QFont(self.font())
        sizes = [base * scale for scale in TEXT_SCALES if base * scale >= floor]
        sizes = sizes or [max(base, floor)]
        size = -sizes[-1]
        for pt in sizes:
            font.setPointSizeF(pt)
            need = QFontMetricsF(font).boundingRect(rect, flags, text)
            if need.width() <= rect.width() + 0.5 and need.height() <= rect.height() + 0.5:
                size = pt
                break
        if len(self._fit_cache) > FIT_CACHE_LIMIT:
            self._fit_cache.clear()
        self._fit_cache[key] = size
        return size

    def tooltip_event(self, event: QEvent) -> bool:
        """Show the whole text of a cut text under the mouse; True when handled."""
        if event.type() != QEvent.Type.ToolTip or not isinstance(event, QHelpEvent):
            return False
        assert isinstance(self, QWidget)
        for place, text in self._cut_places:
            if place.contains(QPointF(event.pos())):
                QToolTip.showText(event.globalPos(), plain_tooltip(text), self)
                return True
        QToolTip.hideText()
        event.ignore()
        return True

"""Where the ladder's value labels go, in plot pixels (y down): each on its bar, one step
over a left neighbour it would overlap, just over a cuBLAS line that would cross it where
that keeps it by its bar; and the sizes of their texts, measured once per text and type."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsTextItem

LABEL_MARGIN_PX = 1  # around a value label's text (Qt's 4 set labels apart from the bars)
LABEL_GAP_PX = 4  # between two value labels side by side
# the furthest a value label leaves its bar's top to clear a cuBLAS line; where it would
# have to go further (a short bar under the line: the label sat 30-45 px over its bar as
# if the bar were taller), it stays on its bar and the line passes behind its opaque box
CLEAR_LINE_PX = 12


class TextSizes:
    """The (width, height) a value label would have with a text, measured once per text
    and type on a text item outside the scene (setting each label's full text to measure
    it, then its short one, laid every label out twice a redraw)."""

    def __init__(self) -> None:
        self._measure = QGraphicsTextItem()
        self._measure.document().setDocumentMargin(LABEL_MARGIN_PX)
        self._sizes: dict[tuple[str, str], tuple[float, float]] = {}

    def size(self, text: str, font: QFont) -> tuple[float, float]:
        key = (text, font.key())
        size = self._sizes.get(key)
        if size is None:
            if len(self._sizes) > 1024:  # texts come and go with the values
                self._sizes.clear()
            self._measure.setFont(font)
            self._measure.setPlainText(text)
            rect = self._measure.boundingRect()
            size = self._sizes[key] = (rect.width(), rect.height())
        return size

    def width(self, text: str, font: QFont) -> float:
        return self.size(text, font)[0]

    def values_clear(self, values: list[str], font: QFont, slot_px: float) -> bool:
        """Whether neighbouring values, each centred on its bar, clear each other."""
        widths = [self.width(v, font) for v in values]
        return all((a + b) / 2 + LABEL_GAP_PX <= slot_px for a, b in pairwise(widths))


LINE_END_SLOT = 0.45  # a cuBLAS line runs this far (in slots) past its first and last bar


@dataclass(frozen=True, slots=True)
class BarLabelLayout:
    """The bars as their labels see them: the base in view coordinates (``floor``), each
    label's bar top (``tops``) and the cuBLAS lines as (first bar, last bar, y)."""

    floor: float
    tops: np.ndarray
    lines: list[tuple[int, int, float]]
    # where the bars sit in plot pixels (the first slot's view x, a slot's width): a line
    # crosses a label wherever it runs under any part of its text, a neighbour bar's too
    x_lo: float
    slot_px: float

    def stack(self, sizes: list[QRectF], top: float, height_px: float) -> list[QRectF]:
        """The labels' rectangles in plot pixels (y down) for a view up to ``top``: each
        on its bar, or just above the left neighbours it would overlap."""
        per_px = height_px / max(top - self.floor, 1e-12)
        rects: list[QRectF] = []
        raised: list[bool] = []
        for i, size in enumerate(sizes):
            cx = (i - self.x_lo) * self.slot_px
            bottom = height_px - (float(self.tops[i]) - self.floor) * per_px - 1
            rect = QRectF(cx - size.width() / 2, bottom - size.height(), size.width(),
                          size.height())
            self.clear_lines(rect, height_px, per_px, bottom)
            # one step up at most, over a left neighbour on its own bar (no staircase); a
            # label that still collides is hidden by the caller
            if rects and not raised[-1] and rect.intersects(rects[-1].adjusted(-2, -1, 2, 1)):
                rect.moveBottom(rects[-1].top() - 1)
                raised.append(True)
            else:
                raised.append(False)
            self.clear_lines(rect, height_px, per_px, rect.bottom())
            rects.append(rect)
        return rects

    def line_crossings(self, rect: QRectF, height_px: float, per_px: float) -> list[float]:
        """The cuBLAS lines that run through ``rect`` (a label, in plot pixels, y down):
        under any part of its text, its own bar's line or a neighbour's (a line ends
        LINE_END_SLOT of a slot past its last bar)."""
        out = []
        for lo, hi, y in self.lines:
            line_px = height_px - (y - self.floor) * per_px
            x0 = (lo - LINE_END_SLOT - self.x_lo) * self.slot_px
            x1 = (hi + LINE_END_SLOT - self.x_lo) * self.slot_px
            over = rect.right() >= x0 and rect.left() <= x1
            if over and rect.top() - 3 <= line_px <= rect.bottom() + 3:
                out.append(line_px)
        return out

    def clear_lines(self, rect: QRectF, height_px: float, per_px: float,
                    home: float) -> None:
        """A label that a cuBLAS line would cross moves up to sit just above
        the line where that keeps it by its bar (at most CLEAR_LINE_PX over ``home``, its
        bottom's place on the bar); else it stays, and ``LadderBars.place_labels`` makes
        its box opaque so that the line passes behind the text, not through it."""
        for line_px in sorted(self.line_crossings(rect, height_px, per_px)):
            if home - (line_px - 4) <= CLEAR_LINE_PX:
                rect.moveBottom(line_px - 4)

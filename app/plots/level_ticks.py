"""Level names under a bar chart's bars: on two alternating lines in the theme's type
where they fit, else in smaller type, else on three or four lines; where even that does
not fit (a very narrow plot), names that would run into a neighbour are left out."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QFont, QFontMetricsF

GAP_PX = 8  # between two names on one line
# (lines, smallest point size tried with them), in the order tried
STEPS = ((2, 8), (3, 7), (4, 7))
SMALLEST_PT = 7


@dataclass(frozen=True)
class NameLayout:
    lines: int  # name i sits on line i % lines
    pt: int  # the names' point size
    keep: tuple[bool, ...]  # which names show


def fit_names(names: list[str], slot_px: float, room_px: float, font_pt: int,
              min_pt: int = 0) -> NameLayout:
    """The layout of ``names`` centred ``slot_px`` apart on an axis ``room_px`` high: the
    fewest lines, then the largest type (from ``font_pt`` down, never under ``min_pt``:
    the theme's floor) in which names ``lines`` apart clear each other; more than two
    lines only where they fit the height."""
    font = QFont()
    smallest = max(SMALLEST_PT, min_pt)
    for lines, lowest in STEPS:
        for pt in range(max(font_pt, smallest), max(lowest, smallest) - 1, -1):
            font.setPointSize(pt)
            metrics = QFontMetricsF(font)
            if lines > 2 and lines * metrics.lineSpacing() > room_px:
                continue
            widths = [metrics.horizontalAdvance(n) for n in names]
            if all((a + b) / 2 + GAP_PX <= lines * slot_px
                   for a, b in zip(widths, widths[lines:], strict=False)):
                return NameLayout(lines, pt, tuple(True for _ in names))
    font.setPointSize(smallest)
    metrics = QFontMetricsF(font)
    lines = max(2, min(STEPS[-1][0], int(room_px // metrics.lineSpacing())))
    widths = [metrics.horizontalAdvance(n) for n in names]
    return NameLayout(lines, smallest, names_that_fit(widths, lines, slot_px))


def names_that_fit(widths: list[float], lines: int, slot_px: float) -> tuple[bool, ...]:
    """Left to right on each line, a name is kept where it clears the last kept one."""
    right = [float("-inf")] * lines
    keep = []
    for i, w in enumerate(widths):
        keep.append(i * slot_px - w / 2 >= right[i % lines] + GAP_PX)
        if keep[-1]:
            right[i % lines] = i * slot_px + w / 2
    return tuple(keep)


def x_margins(first_px: float, last_px: float, n: int, width_px: float) -> tuple[float, float]:
    """The x range of ``n`` bars at 0..n-1 in a view ``width_px`` wide that keeps half of
    the first and last names (``first_px``, ``last_px`` wide) inside it: names running
    past the axis's ends are not drawn."""
    half = (first_px / 2 + 4, last_px / 2 + 4)
    lo_m, hi_m = 0.6, 0.6
    for _ in range(3):  # px per unit is width / (n - 1 + margins): settle the margins
        per_unit = width_px / (n - 1 + lo_m + hi_m)
        lo_m, hi_m = (max(0.6, h / max(per_unit, 1e-9)) for h in half)
    return -lo_m, n - 1 + hi_m


class NameAxis:
    """The bottom axis of a chart with one bar (or group) per level at x = 0..n-1: the
    names laid out by fit_names, the x range by x_margins (twice: the type sets the
    margins, the margins the slots), room for up to four lines. The axis keeps its
    picture, and the range stays, where nothing changed."""

    def __init__(self, plot_item: Any, font_pt: int, height_pts: float = 6.0) -> None:
        self.plot = plot_item
        self.axis = plot_item.getAxis("bottom")
        self.ticks: list[tuple[int, str]] = []
        self.height_pts = height_pts  # the axis's height: this many times the theme's type
        self.pt = font_pt  # the names' point size, as placed last
        # what place() was given last and its x range: a redraw with the same names,
        # width and type (most: a value changed) needs no fitting (~600 text widths)
        self._placed: tuple[tuple[Any, ...], tuple[float, float]] | None = None
        self.set_font_pt(font_pt)

    def set_font_pt(self, font_pt: int, min_pt: float = 0.0) -> None:
        """The theme's type (and its floor). The axis's height follows it, never the
        names' type: a height that followed the names would change the slots and the
        type again."""
        self.font_pt = font_pt
        self.min_pt = math.ceil(min_pt)
        self.axis.setHeight(int(font_pt * self.height_pts) + 10)
        self.forget()

    def forget(self) -> None:
        """The axis was cleared (an empty chart): the next place() lays the names out."""
        self.ticks = []
        self._placed = None

    def place(self, names: list[str]) -> tuple[float, float] | None:
        """Lay the names out for the view's width; the x range to show (None: no names)."""
        if not names:
            return None
        width = max(self.plot.vb.width(), 1.0)
        key = (tuple(names), width, self.axis.height(), self.font_pt, self.min_pt)
        if self._placed is not None and self._placed[0] == key:
            return self._placed[1]
        slot = width / (len(names) + 0.2)
        x_range = (-0.6, len(names) - 0.4)
        for _ in range(2):
            fit = fit_names(names, slot, self.axis.height() - 6, self.font_pt, self.min_pt)
            font = QFont()
            font.setPointSize(fit.pt)
            metrics = QFontMetricsF(font)
            x_range = x_margins(metrics.horizontalAdvance(names[0]),
                                metrics.horizontalAdvance(names[-1]), len(names), width)
            slot = width / (x_range[1] - x_range[0])
        self.pt = fit.pt
        current = self.axis.style.get("tickFont")
        if current is None or current.pointSize() != fit.pt:
            self.axis.setTickFont(font)
        ticks = [(i, "\n" * (i % fit.lines) + (name if fit.keep[i] else ""))
                 for i, name in enumerate(names)]
        if ticks != self.ticks:
            self.ticks = ticks
            self.axis.setTicks([ticks])
        self._placed = (key, x_range)
        return x_range

"""Axes that label what a talk needs: plain numbers (no SI-prefix scaling), plain 1, 10, 100
on a log axis, labels kept apart on a short axis, and the measured sizes of a sweep."""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

# every plot of the app draws without antialiasing or OpenGL (the charts import this)
pg.setConfigOptions(antialias=False, useOpenGL=False)


SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075"
                            "\u2076\u2077\u2078\u2079")


def number_text(value: float) -> str:
    """A tick's number as a person writes it: 0.5, 10, 1000 (no exponent, no prefix); a
    power of ten from a million up as 10⁶ (not "1e+06", not seven digits to count)."""
    if abs(value) < 1e6:
        return f"{value:.12g}"
    power = math.log10(abs(value))
    if abs(power - round(power)) < 1e-9:
        return ("-" if value < 0 else "") + "10" + str(round(power)).translate(SUPERSCRIPT)
    return f"{value:,.0f}"


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

        def inside(v: float) -> bool:  # a label the axis has room for at its place
            px = (v - lo) / max(hi - lo, 1e-12) * size
            return 0.6 * line_px <= px <= size - 0.6 * line_px

        # thinned among the labels that fit (thinning all, then dropping those at the
        # ends, left a short axis one label: "100" alone)
        labelled = [v for v in values if inside(v)] or values
        most = max(2, int(size // (2 * line_px)))
        every = math.ceil(len(labelled) / most)
        if every > 1:  # of the every-th ticks, the run with most labels, the top one in
            labelled = max((labelled[k::every] for k in range(every)),
                           key=lambda run: (len(run), run[-1]))
        return [(1.0, labelled)]

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

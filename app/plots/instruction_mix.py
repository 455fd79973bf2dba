"""The main loop's instruction mix of every level, as stacked bars: one bar per level with a
build event, one segment per instruction class in the class's colour, counted per unit of
work (instructions per 1000 multiply-adds of the GEMM: core.builds.MIX_UNIT), so levels
whose loop iterations do unlike amounts of work compare; the total stands over each bar.

It takes rows (``set_rows``), not the store, and remembers what it drew for tests.
"""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsItem, QWidget

from ...kernels.toolchain import CLASSES
from ..core.builds import MIX_NOTE, MIX_UNIT
from ..theme import NORMAL, SASS_CLASS_COLORS, Theme, min_text_pt
from .chart_axes import plain_axes, quiet_axes
from .level_ticks import NameAxis

BAR_WIDTH = 0.7
LEGEND_COLUMNS = 7  # the legend's entries a row, at most (fewer where narrow)
LEGEND_ENTRY_PX = 120  # the width an entry needs, for how many fit a row


def total_text(value: float) -> str:
    """A bar's total: three significant digits (4.41k, 38.2, 0.0183)."""
    if value >= 1000:
        return f"{value / 1000:.3g}k"
    return f"{value:.3g}"


def rounded_up(top: float) -> float:
    """``top`` rounded up to 2 significant digits in steps of 2 (24 -> 24, 137 -> 140): the
    axis changes only now and then as levels come, and each change draws it again."""
    if top <= 0:
        return 1.0
    step = 2 * 10 ** (math.floor(math.log10(top)) - 1)
    return math.ceil(top / step) * step


class InstructionMixChart(pg.PlotWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems=plain_axes())
        self.setBackground("w")
        self.setMenuEnabled(False)
        item = self.getPlotItem()
        quiet_axes(item)
        self.title_text = f"Main-loop {MIX_UNIT}"  # (no longer than the tab is wide on stage)
        item.setTitle(self.title_text)
        self._title_style = dict(item.titleLabel.opts)  # pyqtgraph's, for the normal theme
        item.setLabel("left", MIX_UNIT)
        self.setToolTip(MIX_NOTE)
        self.totals: list[pg.TextItem] = []  # the total over each bar
        item.showGrid(y=True, alpha=0.25)
        # in rows under the level names, never over the bars (it covered the tallest)
        self.legend = pg.LegendItem(colCount=LEGEND_COLUMNS)
        item.layout.addItem(self.legend, 4, 1)
        item.legend = self.legend  # (named bars go to it, as with addLegend)
        for name in ("left", "bottom"):  # from a pixmap unless the range or ticks changed:
            # drawing the axes' text again cost ~5 ms of each repaint
            item.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.levels: list[str] = []
        self.stacks: dict[str, tuple[list[float], list[float]]] = {}  # class -> (y0, h)
        self.items: dict[str, pg.BarGraphItem] = {}
        self.selected: str | None = None
        self._axes: tuple[list[str], list[str], float] | None = None  # left for later
        self._y_top = 1.0  # the y range's top for the rows set last
        self.names = NameAxis(item, QFont().pointSize())  # the theme's (apply_theme)
        item.vb.sigResized.connect(self._place_names)
        self._legend_classes: list[str] = []  # the legend's entries, as laid out
        self.apply_theme(NORMAL)  # as the normal theme draws it (after a stage, the same)

    def set_rows(self, rows: list[tuple[str, dict[str, float]]],
                 selected: str | None = None, axes_later: bool = False) -> None:
        """Draw ``rows``; the bar items and the legend are kept and updated in place (a
        replay brings build events one by one: remaking them cost ~50 ms each time).
        With ``axes_later`` the legend, ticks and ranges wait for :meth:`draw_axes` (a
        frame later: the bars and the axes drawn again in one frame cost more than a
        60 Hz frame has during a 16x replay)."""
        item = self.getPlotItem()
        levels = [level for level, _ in rows]
        x = list(range(len(rows)))
        base = [0.0] * len(rows)
        pens = [pg.mkPen("k", width=2) if level == selected else pg.mkPen(None)
                for level in levels]
        stacks: dict[str, tuple[list[float], list[float]]] = {}
        for cls in CLASSES:
            heights = [float(mix.get(cls, 0)) for _, mix in rows]
            if any(heights):
                stacks[cls] = (list(base), heights)
                base = [b + h for b, h in zip(base, heights, strict=True)]
        for cls in [c for c in self.items if c not in stacks]:
            item.removeItem(self.items.pop(cls))
        for cls, (y0, heights) in stacks.items():
            opts = {"x": x, "y0": y0, "height": heights, "width": BAR_WIDTH,
                    "brush": SASS_CLASS_COLORS[cls], "pens": pens}
            bar = self.items.get(cls)
            if bar is None:
                bar = self.items[cls] = pg.BarGraphItem(name=cls, **opts)
                item.addItem(bar)
            elif (y0, heights, levels, selected) != (*self.stacks[cls], self.levels,
                                                      self.selected):
                bar.setOpts(**opts)
        self.stacks, self.levels, self.selected = stacks, levels, selected
        self._show_totals(base)
        self._axes = (levels, list(stacks), max(base, default=0.0))
        if not axes_later:
            self.draw_axes()

    def _show_totals(self, totals: list[float]) -> None:
        """Each bar's total over it (a Tensor Core level's bar is a sliver: its number
        says how few instructions it issues per unit of work)."""
        item = self.getPlotItem()
        while len(self.totals) < len(totals):
            label = pg.TextItem("", anchor=(0.5, 1), color="k")
            label.setZValue(20)
            item.addItem(label, ignoreBounds=True)
            self.totals.append(label)
        while len(self.totals) > len(totals):
            item.removeItem(self.totals.pop())
        for i, (label, total) in enumerate(zip(self.totals, totals, strict=True)):
            label.setText(total_text(total))
            label.setPos(i, total)

    def total_texts(self) -> list[str]:
        return [label.toPlainText() for label in self.totals]

    def draw_axes(self) -> None:
        """The legend, the level ticks and the ranges of the rows set last."""
        if self._axes is None:
            return
        _, classes, top = self._axes
        self._axes = None
        if classes != self._legend_classes:  # (a bar removed left a gap in its layout)
            self._legend_classes = classes
            self._sync_legend(classes)
        self._y_top = rounded_up(top * 1.05)
        self._place_names()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if hasattr(self, "legend"):  # (pyqtgraph resizes during its __init__)
            columns = max(1, min(LEGEND_COLUMNS, int(self.width() // LEGEND_ENTRY_PX)))
            if columns != self.legend.columnCount:
                self.legend.setColumnCount(columns)

    def _place_names(self, *_: object) -> None:
        """The level names (NameAxis) and the ranges; a range set again, unchanged,
        would draw the axes and grid again."""
        x_range = self.names.place(self.levels)
        if x_range is None:
            return
        item = self.getPlotItem()
        ranges = [list(x_range), [0.0, self._y_top]]
        if [list(r) for r in item.vb.targetRange()] != ranges:
            item.setRange(xRange=ranges[0], yRange=ranges[1], padding=0)
        self._fit_totals(x_range)

    def _fit_totals(self, x_range: tuple[float, float]) -> None:
        """Totals that would run into the one before them hide (the hover and the export
        at a larger size have them): left to right, each kept where it clears the last."""
        slot_px = self.getPlotItem().vb.width() / max(x_range[1] - x_range[0], 1e-9)
        right = float("-inf")
        for i, label in enumerate(self.totals):
            half = label.textItem.boundingRect().width() / 2
            centre = (i - x_range[0]) * slot_px
            fits = centre - half >= right + 2
            label.setVisible(fits)
            if fits:
                right = centre + half

    def _sync_legend(self, classes: list[str]) -> None:
        """The legend lists ``classes`` in order; the entries of classes it listed already
        are kept (made again, the whole legend cost ~10 ms a new class), laid out again."""
        legend = self.legend
        kept = {label.text: (sample, label) for sample, label in legend.items}
        for cls in [c for c in kept if c not in classes]:
            legend._removeItemFromLayout(*kept.pop(cls))
        while legend.layout.count():
            legend.layout.removeAt(0)
        legend.items = []
        for cls in classes:
            if cls not in kept:  # a new entry, made as LegendItem.addItem makes it
                sample = legend.sampleType(self.items[cls])
                sample.sigClicked.connect(legend.sigSampleClicked)
                kept[cls] = (sample, pg.LabelItem(
                    cls, color=legend.opts["labelTextColor"], justify="left",
                    size=legend.opts["labelTextSize"]))
            legend.items.append(kept[cls])
        columns = legend.columnCount
        for i, (sample, label) in enumerate(legend.items):  # row by row, as a new legend
            row, col = divmod(i, columns)
            legend.layout.addItem(sample, row, 2 * col,
                                  alignment=Qt.AlignmentFlag.AlignVCenter)
            legend.layout.addItem(label, row, 2 * col + 1)
        legend.rowCount = math.ceil(len(legend.items) / columns)
        legend.updateSize()

    def apply_theme(self, theme: Theme) -> None:
        self.setBackground(theme.background)
        style = dict(self._title_style)
        if theme.name != "normal":  # on stage the title in the body type, readable
            style.update(color=theme.foreground, size=f"{theme.font_pt}pt")
        self.getPlotItem().setTitle(self.title_text, **style)
        self.names.set_font_pt(theme.font_pt, min_text_pt(theme))
        self._place_names()
        for name in ("left", "bottom"):
            self.getPlotItem().getAxis(name).setTextPen(theme.foreground)
        for label in self.totals:
            label.setColor(theme.foreground)

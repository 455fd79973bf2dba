"""The main loop's instruction mix of every level, as stacked bars: one bar per level with a
build event, one segment per instruction class in the class's colour.

It takes rows (``set_rows``), not the store, and remembers what it drew for tests.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem, QWidget

from ...kernels.sass import CLASSES
from ..theme import SASS_CLASS_COLORS, Theme

BAR_WIDTH = 0.7


def rounded_up(top: float) -> float:
    """``top`` rounded up to 2 significant digits in steps of 2 (24 -> 24, 137 -> 140): the
    axis changes only now and then as levels come, and each change draws it again."""
    if top <= 0:
        return 1.0
    step = 2 * 10 ** (math.floor(math.log10(top)) - 1)
    return math.ceil(top / step) * step


class InstructionMixChart(pg.PlotWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.setMenuEnabled(False)
        item = self.getPlotItem()
        item.setTitle("Main-loop instruction mix (one iteration)")
        item.setLabel("left", "instructions")
        item.showGrid(y=True, alpha=0.25)
        self.legend = item.addLegend(offset=(-10, 10), colCount=2)
        for name in ("left", "bottom"):  # from a pixmap unless the range or ticks changed:
            # drawing the axes' text again cost ~5 ms of each repaint
            item.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.levels: list[str] = []
        self.stacks: dict[str, tuple[list[float], list[float]]] = {}  # class -> (y0, h)
        self.items: dict[str, pg.BarGraphItem] = {}
        self.selected: str | None = None

    def set_rows(self, rows: list[tuple[str, dict[str, int]]],
                 selected: str | None = None) -> None:
        """Draw ``rows``; the bar items and the legend are kept and updated in place (a
        replay brings build events one by one: remaking them cost ~50 ms each time),
        the legend made again only when the classes shown change."""
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
        if list(stacks) != list(self.stacks):
            self._sync_legend(list(stacks))
        if levels != self.levels:  # (else the bottom axis keeps its picture)
            item.getAxis("bottom").setTicks([[(i, level) for i, level in enumerate(levels)]])
        self.stacks, self.levels, self.selected = stacks, levels, selected
        if rows:  # a range set again, unchanged, would draw the axes and grid again
            x_range = [-0.6, len(rows) - 0.4]
            y_range = [0.0, rounded_up(max(base) * 1.05)]
            if [list(r) for r in item.vb.targetRange()] != [x_range, y_range]:
                item.setRange(xRange=x_range, yRange=y_range, padding=0)

    def _sync_legend(self, classes: list[str]) -> None:
        """The legend lists ``classes`` in order; the entries of classes it listed already
        are kept (made again, the whole legend cost ~10 ms a new class), laid out again."""
        legend = self.legend
        kept = {label.text: (sample, label) for sample, label in legend.items}
        for cls in [c for c in kept if c not in classes]:
            legend._removeItemFromLayout(*kept.pop(cls))
        for i in range(legend.layout.count() - 1, -1, -1):
            legend.layout.removeAt(i)
        legend.items = []
        for cls in classes:
            if cls in kept:
                legend.items.append(kept[cls])
            else:
                legend.addItem(self.items[cls], cls)  # (appended, laid out again below)
                legend.layout.removeAt(legend.layout.count() - 1)
                legend.layout.removeAt(legend.layout.count() - 1)
        legend.rowCount = 0
        for sample, label in legend.items:  # as pyqtgraph's LegendItem.setColumnCount
            legend._addItemToLayout(sample, label)
        legend.updateSize()

    def apply_theme(self, theme: Theme) -> None:
        self.setBackground(theme.background)
        for name in ("left", "bottom"):
            self.getPlotItem().getAxis(name).setTextPen(theme.foreground)

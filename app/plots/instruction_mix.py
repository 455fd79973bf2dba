"""The main loop's instruction mix of every level, as stacked bars: one bar per level with a
build event, one segment per instruction class in the class's colour.

It takes rows (``set_rows``), not the store, and remembers what it drew for tests.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ...kernels.sass import CLASSES
from ..theme import SASS_CLASS_COLORS, Theme

BAR_WIDTH = 0.7


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
            self.legend.clear()
            for cls in stacks:  # in the classes' order, as the stacks are
                self.legend.addItem(self.items[cls], cls)
        self.stacks, self.levels, self.selected = stacks, levels, selected
        axis = item.getAxis("bottom")
        axis.setTicks([[(i, level) for i, level in enumerate(levels)]])
        if rows:
            item.setXRange(-0.6, len(rows) - 0.4, padding=0)
            item.setYRange(0, max(base) * 1.05 or 1, padding=0)

    def apply_theme(self, theme: Theme) -> None:
        self.setBackground(theme.background)
        for name in ("left", "bottom"):
            self.getPlotItem().getAxis(name).setTextPen(theme.foreground)

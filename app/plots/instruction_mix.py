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
        item = self.getPlotItem()
        for bar in self.items.values():
            item.removeItem(bar)
        self.legend.clear()
        self.items, self.stacks = {}, {}
        self.levels = [level for level, _ in rows]
        self.selected = selected
        x = list(range(len(rows)))
        base = [0.0] * len(rows)
        for cls in CLASSES:
            heights = [float(mix.get(cls, 0)) for _, mix in rows]
            if not any(heights):
                continue
            pens = [pg.mkPen("k", width=2) if level == selected else pg.mkPen(None)
                    for level in self.levels]
            bar = pg.BarGraphItem(x=x, y0=list(base), height=heights, width=BAR_WIDTH,
                                  brush=SASS_CLASS_COLORS[cls], pens=pens, name=cls)
            item.addItem(bar)
            self.items[cls] = bar
            self.stacks[cls] = (list(base), heights)
            base = [b + h for b, h in zip(base, heights, strict=True)]
        axis = item.getAxis("bottom")
        axis.setTicks([[(i, level) for i, level in enumerate(self.levels)]])
        if rows:
            item.setXRange(-0.6, len(rows) - 0.4, padding=0)
            item.setYRange(0, max(base) * 1.05 or 1, padding=0)

    def apply_theme(self, theme: Theme) -> None:
        self.setBackground(theme.background)
        for name in ("left", "bottom"):
            self.getPlotItem().getAxis(name).setTextPen(theme.foreground)

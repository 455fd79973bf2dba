"""A sweep of two parameters as a heatmap: TFLOPS per cell, a mark where the answer was
checked (✓) or wrong (✗), refused cells grey with the reason as their tooltip, the best
cell outlined. Clicking a cell emits its parameters (the kernel panel selects that
variant). It draws ``kernels.results.sweep_grid.SweepGrid`` and remembers what it drew
(``cells_drawn``), so tests read back exactly what is on screen."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from ...kernels.results import Cell, SweepGrid
from .plain import plain_tooltip

MARGIN_LEFT, MARGIN_TOP = 56, 34
COLD, HOT = QColor("#203a5a"), QColor("#f0b030")


def _rgb(colour: QColor) -> tuple[float, float, float]:
    return colour.redF(), colour.greenF(), colour.blueF()
REFUSED = QColor("#505050")


@dataclass(frozen=True, slots=True)
class DrawnCell:
    rect: QRectF
    text: str  # what the cell says: "33.5 ✓", "refused"
    params: dict[str, int]
    why: str | None


class SweepHeatmap(QWidget):
    cell_clicked = Signal(dict)  # the variant's parameters

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid: SweepGrid | None = None
        self.selected: dict[str, int] | None = None
        self.cells_drawn: list[DrawnCell] = []
        self.setMinimumSize(260, 200)
        self.setMouseTracking(True)

    def set_grid(self, grid: SweepGrid | None, selected: dict[str, int] | None = None) -> None:
        self.grid, self.selected = grid, selected
        self.update()

    # ------------------------------------------------------------------ painting
    def paintEvent(self, _event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.cells_drawn = []
        grid = self.grid
        if grid is None or not grid.cells:
            self.draw_empty(p)
            p.end()
            return
        self.draw_axes(p, grid)
        done = [c.tflops for c in grid.cells.values() if c.tflops is not None]
        lo, hi = (min(done), max(done)) if done else (0.0, 1.0)
        best = grid.best()
        for (vy, vx), cell in grid.cells.items():
            rect = self.cell_rect(grid, vy, vx)
            self.draw_cell(p, rect, cell, lo, hi, cell is best)
        p.end()

    def draw_empty(self, p: QPainter) -> None:
        p.setPen(self.palette().text().color())
        p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                   "No sweep yet: pick two parameters and press Sweep")

    def draw_axes(self, p: QPainter, grid: SweepGrid) -> None:
        p.setPen(self.palette().text().color())
        p.drawText(QRectF(0, 0, self.width(), 16), Qt.AlignmentFlag.AlignCenter,
                   f"{grid.level}: TFLOPS ({grid.x} across, {grid.y} down)")
        for i, vx in enumerate(grid.xs):
            r = self.cell_rect(grid, grid.ys[0], vx) if grid.ys else QRectF()
            p.drawText(QRectF(r.left(), 16, r.width(), 16), Qt.AlignmentFlag.AlignCenter,
                       f"{grid.x}={vx}" if i == 0 else str(vx))
        for vy in grid.ys:
            r = self.cell_rect(grid, vy, grid.xs[0])
            p.drawText(QRectF(0, r.top(), MARGIN_LEFT - 4, r.height()),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       f"{grid.y}={vy}")

    def cell_rect(self, grid: SweepGrid, vy: int, vx: int) -> QRectF:
        cols, rows = max(len(grid.xs), 1), max(len(grid.ys), 1)
        w = (self.width() - MARGIN_LEFT - 4) / cols
        h = (self.height() - MARGIN_TOP - 4) / rows
        return QRectF(MARGIN_LEFT + grid.xs.index(vx) * w, MARGIN_TOP + grid.ys.index(vy) * h,
                      w - 2, h - 2)

    def draw_cell(self, p: QPainter, rect: QRectF, cell: Cell, lo: float, hi: float,
                  best: bool) -> None:
        if cell.tflops is None:
            colour, text = REFUSED, "refused"
        else:
            f = 0.0 if hi <= lo else (cell.tflops - lo) / (hi - lo)
            colour = QColor.fromRgbF(*(a * (1 - f) + b * f
                                       for a, b in zip(_rgb(COLD), _rgb(HOT), strict=True)))
            text = f"{cell.tflops:.1f} " + ("✓" if cell.verified else "✗")
        p.fillRect(rect, colour)
        if cell.params == self.selected or best:
            p.setPen(QPen(QColor("#ffffff") if cell.params == self.selected
                          else QColor("#f0f0a0"), 2, Qt.PenStyle.SolidLine
                          if cell.params == self.selected else Qt.PenStyle.DashLine))
            p.drawRect(rect.adjusted(1, 1, -1, -1))
        p.setPen(QColor("#000000") if colour.lightnessF() > 0.55 else QColor("#f0f0f0"))
        font = QFont(p.font())
        font.setBold(best)
        p.setFont(font)
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        self.cells_drawn.append(DrawnCell(rect, text, dict(cell.params), cell.why))

    # ------------------------------------------------------------------ input
    def cell_at(self, pos: QPoint) -> DrawnCell | None:
        return next((c for c in self.cells_drawn if c.rect.contains(pos.toPointF())), None)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        cell = self.cell_at(event.position().toPoint())
        if cell is not None:
            self.selected = dict(cell.params)
            self.update()
            self.cell_clicked.emit(dict(cell.params))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        cell = self.cell_at(event.position().toPoint())
        if cell is not None and cell.why:
            QToolTip.showText(event.globalPosition().toPoint(), plain_tooltip(cell.why), self)

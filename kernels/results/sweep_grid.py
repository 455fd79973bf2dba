"""A sweep of two parameters as a grid: one cell per variant with its TFLOPS, whether it
verified, or why it was refused (the constraint check's words, a compile error, a fault).

Qt-free: the CLI's sweep table and the app's heatmap draw this one model. Cells come from
result and error events of one level (a registry level or a user's kernel) that carry
``params`` (the runner puts a variant's parameters in both).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Cell:
    params: dict[str, int]
    tflops: float | None = None
    verified: bool | None = None
    pct_of_reference: float | None = None
    why: str | None = None  # refused, failed to compile, faulted: the message

    @property
    def mark(self) -> str:
        if self.why is not None and self.tflops is None:
            return "refused"
        return "ok" if self.verified else "WRONG"


@dataclass(slots=True)
class SweepGrid:
    level: str
    x: str  # the parameter along the columns
    y: str  # along the rows
    xs: list[int] = field(default_factory=list)
    ys: list[int] = field(default_factory=list)
    cells: dict[tuple[int, int], Cell] = field(default_factory=dict)  # (y, x) -> cell

    def best(self) -> Cell | None:
        done = [c for c in self.cells.values() if c.tflops is not None and c.verified]
        return max(done, key=lambda c: c.tflops or 0.0, default=None)

    def table(self) -> list[str]:
        """Rows of text: TFLOPS per cell, * for the best, x for a wrong answer, a dash
        and a footnote number for a refused one."""
        notes: list[str] = []
        width = 10
        best = self.best()
        lines = [f"{self.level}: TFLOPS, {self.y} down, {self.x} across"
                 + (" (* best, x wrong answer)" if best else ""),
                 f"{self.y + '/' + self.x:>8}" + "".join(f"{x:>{width}}" for x in self.xs)]
        for y in self.ys:
            row = f"{y:>8}"
            for x in self.xs:
                cell = self.cells.get((y, x))
                if cell is None:
                    text = "."
                elif cell.tflops is None:
                    notes.append(f"[{len(notes) + 1}] {self.y}={y} {self.x}={x}: {cell.why}")
                    text = f"-[{len(notes)}]"
                else:
                    text = f"{cell.tflops:.1f}" + ("*" if cell is best else "") + \
                        ("" if cell.verified else "x")
                row += f"{text:>{width}}"
            lines.append(row)
        return lines + notes


def sweep_grid(level: str, x: str, y: str, events: Iterable[dict[str, Any]],
               shape: tuple[int, int, int] | None = None) -> SweepGrid:
    """The grid of ``level``'s variants over parameters ``x`` and ``y`` (at ``shape``,
    or every shape where None): the latest result or error of each variant."""
    grid = SweepGrid(level, x, y)
    for ev in events:
        if ev.get("level") != level or ev.get("type") not in ("result", "error"):
            continue
        if shape is not None and (ev.get("M"), ev.get("N"), ev.get("K")) != shape:
            continue
        params = ev.get("params")
        if not isinstance(params, dict) or not isinstance(params.get(x), int) or \
                not isinstance(params.get(y), int):
            continue
        key = (params[y], params[x])
        if ev["type"] == "result":
            grid.cells[key] = Cell(dict(params), ev.get("tflops"), bool(ev.get("verified")),
                                   ev.get("pct_of_reference"))
        elif key not in grid.cells or grid.cells[key].tflops is None:
            grid.cells[key] = Cell(dict(params), why=str(ev.get("message", ""))[:300])
        elif ev.get("kind") == "verify":
            grid.cells[key].why = str(ev.get("message", ""))[:300]
    grid.xs = sorted({k[1] for k in grid.cells})
    grid.ys = sorted({k[0] for k in grid.cells})
    return grid

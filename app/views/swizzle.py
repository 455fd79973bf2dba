"""Swizzle explorer: CuTe-style Swizzle<B, M, S> (or a typed XOR expression) on a tile of
rows x width elements; every element coloured by its bank before and after; a chosen
warp pattern (row, column, 8x8 ldmatrix) outlined, phase by phase, with its wavefronts
and whether it is conflict-free. Click an element to read its address and bank before and
after. One step is one phase of the pattern. A level sets the layout its access model
gives its first shared array (row, padding, swizzle) and the pattern its shared reads
follow (rows for an FP32 level, ldmatrix where it loads fragments by ldmatrix, the 8×16-byte
core matrices for wgmma); it opens on the first swizzled one. Layouts can also be chosen
by name (swizzle_presets.py: the TMA swizzle modes, padding, none).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QComboBox, QLineEdit, QSpinBox, QVBoxLayout, QWidget

from ...kernels.ladder import Shape
from ...kernels.models import (
    ColumnExpression,
    ExpressionError,
    Pattern,
    PatternAccess,
    Swizzle,
    SwizzleUnit,
    TileLayout,
    analyze_pattern,
    first_swizzled_level,
    lanes_per_phase,
    model_for,
    parse_column_expression,
)
from ...kernels.results import counted
from ..theme import ANIMATION
from ..widgets.fitting import labelled
from .animated_canvas import AnimatedCanvas
from .canvas_image import image_from_codes
from .playback import ViewPanel, model_in_form
from .swizzle_presets import (
    BY_NAME,
    CUSTOM,
    LEVEL_PRESET,
    PRESETS,
    level_pattern,
    mapping_text,
    pattern_text,
    preset_named,
)

DIM_WEIGHT = 60 / 255  # the lanes of other phases: outlined this faintly
PATTERN_NAMES = {Pattern.LDMATRIX: "ldmatrix / wgmma"}  # the pattern box's words
MAX_CELL_ASPECT = 3.0  # a cell at most this many times as wide as tall, or as tall as wide

BEFORE, AFTER = 0, 1


class SwizzleCanvas(AnimatedCanvas):
    layoutChanged = Signal()
    cellSelected = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(400, 260)
        # the layout of the "after" picture, until a level sets its own (set_level)
        start = model_for(first_swizzled_level()).shared_layout()
        assert start is not None
        self.swizzle = start.swizzle
        self.unit = start.unit
        self.elem_bytes = start.elem_bytes
        self.row_elems = start.row_elems
        self.rows = 16
        self.pad_elems = start.pad_elems  # padding after each row, in elements ("after" only)
        self.pattern = Pattern.LDMATRIX
        self.access_bytes = 16
        self.level_id: str | None = None
        self.pattern_label: str | None = None  # the level's name for its pattern
        self.expression_text = ""
        self.error: str | None = None
        self.selected: tuple[int, int] | None = None
        self._expr: ColumnExpression | None = None
        self.before = TileLayout(self.row_elems, self.elem_bytes)
        self.after = self.before
        self.access: list[PatternAccess] = []
        self._rebuild()

    # -- state ----------------------------------------------------------------------
    def set_level(self, level_id: str, params: dict[str, int] | None = None,
                  shape: Shape | None = None) -> None:
        """Start from the level's own layout as its access model gives it (the first shared
        array's row, padding and swizzle) in the form ``params`` it ran. The explorer works
        on any tile, so a level without shared memory or without a model keeps the layout
        shown."""
        try:
            model = model_in_form(level_id, params)
        except KeyError:
            model = None
        layout = model.shared_layout() if model is not None else None
        if model is not None and layout is not None:
            self.level_id = level_id
            reads = level_pattern(model, layout.elem_bytes)
            self.pattern_label = reads.text
            self.configure(swizzle=layout.swizzle, unit=layout.unit,
                           elem_bytes=layout.elem_bytes, row_elems=layout.row_elems,
                           pad_elems=layout.pad_elems, pattern=reads.pattern,
                           access_bytes=reads.access_bytes)
        self.restart()

    def configure(self, **changes: object) -> None:
        for name, value in changes.items():
            if not hasattr(self, name):
                raise AttributeError(name)
            setattr(self, name, value)
        self._rebuild()

    def set_expression(self, text: str) -> str | None:
        """Use a typed column expression (empty text: back to the swizzle). Returns the
        error message, or None; a bad expression keeps the previous mapping."""
        self.expression_text = text
        self._rebuild()
        return self.error

    def n_steps(self) -> int:
        if self.access:
            return self.access[AFTER].report.phases
        return 32 // lanes_per_phase(self.current_access_bytes())

    def current_access_bytes(self) -> int:
        return 16 if self.pattern is Pattern.LDMATRIX else self.access_bytes

    def _rebuild(self) -> None:
        self.error = None
        expr: ColumnExpression | None = None
        if self.expression_text.strip():
            try:
                expr = parse_column_expression(self.expression_text, self.row_elems)
            except ExpressionError as exc:
                self.error = str(exc)
                expr = self._expr  # keep the last good one
        self._expr = expr
        self.before = TileLayout(self.row_elems, self.elem_bytes)
        self.after = TileLayout(self.row_elems, self.elem_bytes, self.pad_elems,
                                swizzle=self.swizzle,
                                unit=self.unit, column_map=expr)
        problem = self.after.permutation_problem(self.rows)
        if problem and self.error is None:
            self.error = f"not a valid layout: {problem}"
        self.access = []
        for layout in (self.before, self.after):
            try:
                self.access.append(analyze_pattern(self.pattern, layout,
                                                   self.current_access_bytes()))
            except (ValueError, ExpressionError) as exc:
                self.error = self.error or str(exc)
                self.access = []
                break
        if self.step >= self.n_steps():
            self._step = 0
        self.layoutChanged.emit()
        self.update()

    def bank_grid(self, side: int) -> np.ndarray:
        layout = self.before if side == BEFORE else self.after
        r, c = np.meshgrid(np.arange(self.rows), np.arange(self.row_elems), indexing="ij")
        return np.asarray(layout.bank(r, c))

    def conflict_free(self, side: int = AFTER) -> bool:
        return bool(self.access) and self.access[side].report.conflicts == 0

    # -- geometry -------------------------------------------------------------------
    def grid_rect(self, side: int) -> QRectF:
        """A grid, under its line of text (name, conflicts, wavefronts): the two grids
        one above the other or side by side, whichever gives the larger cells, and cells
        no more than MAX_CELL_ASPECT times as wide as tall (or as tall as wide), so a
        wide canvas does not squash the rows into lines."""
        line = self.line_px()
        top = 8 + 2 * line  # under the two lines of the header
        room_h = self.height() - top - line - 12  # the selection's line at the end
        room_w = self.width() - 20.0
        best: tuple[float, bool, float, float] | None = None
        for beside in (False, True):
            gw = (room_w - 16) / 2 if beside else room_w
            gh = room_h - line - 4 if beside else (room_h - 2 * (line + 4)) / 2
            cw, ch = gw / max(self.row_elems, 1), gh / max(self.rows, 1)
            cw, ch = min(cw, MAX_CELL_ASPECT * ch), min(ch, MAX_CELL_ASPECT * cw)
            if best is None or cw * ch > best[0] * 1.05:  # (stacked, unless clearly worse)
                best = (cw * ch, beside, cw, ch)
        assert best is not None
        _, beside, cw, ch = best
        w, h = max(cw * self.row_elems, 1.0), max(ch * self.rows, 1.0)
        if beside:
            return QRectF(10 + side * (room_w / 2 + 8), top + line, w, h)
        return QRectF(10, top + line + side * (h + line + 4), w, h)

    def label_rect(self, side: int) -> QRectF:
        """The line over a grid: as wide as the canvas, or as its half beside the other."""
        g, line = self.grid_rect(side), self.line_px()
        other = self.grid_rect(1 - side)
        beside = abs(other.top() - g.top()) < 1
        width = (self.width() - 20.0) / 2 - 8 if beside else self.width() - 20.0
        return QRectF(g.left(), g.top() - line - 2, width, line)

    def cell_rect(self, side: int, row: int, col: int) -> QRectF:
        g = self.grid_rect(side)
        cw, ch = g.width() / self.row_elems, g.height() / self.rows
        return QRectF(g.left() + col * cw, g.top() + row * ch, cw, ch)

    # -- drawing --------------------------------------------------------------------
    def draw(self, painter: QPainter) -> None:
        self.draw_header(painter)
        for side in (BEFORE, AFTER):
            self.draw_grid(painter, side)
            self.draw_pattern(painter, side)
        self.draw_selection(painter)

    def draw_header(self, painter: QPainter) -> None:
        self.draw_text(painter, QRectF(10, 4, self.width() - 20, 2 * self.line_px()),
                       self.header_text(), wrap=True)

    def header_text(self) -> str:
        """The layout by name (a preset's, or CuTe's notation), the tile and the pattern
        in words (the level's where it set it)."""
        mapping = (f"col → {self.expression_text}" if self._expr is not None else
                   mapping_text(self.swizzle, self.unit, self.pad_elems, self.elem_bytes))
        reads = self.pattern_label or pattern_text(self.pattern, self.current_access_bytes())
        return (f"{mapping}; {self.elem_bytes}-byte elements, rows of {self.row_elems} "
                f"({counted(self.row_elems * self.elem_bytes, 'byte')}); {reads}, phase "
                f"{self.step + 1}/{self.n_steps()}")

    def draw_grid(self, painter: QPainter, side: int) -> None:
        g = self.grid_rect(side)
        palette = [ANIMATION.bank(b) for b in range(32)]
        painter.drawImage(g, image_from_codes(self.bank_grid(side), palette))
        painter.setPen(ANIMATION.color("grid"))
        painter.drawRect(g)
        name = "before" if side == BEFORE else "after"
        parts = [name]
        if self.access:
            rep = self.access[side].report
            parts.append("conflict-free" if rep.conflicts == 0 else f"{rep.n_way}-way")
            parts.append(f"{rep.wavefronts} wavefronts, ideal {rep.ideal}")
        color = "text" if not self.access else (
            "ok" if self.access[side].report.conflicts == 0 else "conflict")
        self.draw_text(painter, self.label_rect(side),
                       ": ".join(parts[:2]) + (f", {parts[2]}" if len(parts) > 2 else ""),
                       color)

    def draw_pattern(self, painter: QPainter, side: int) -> None:
        if not self.access:
            return
        acc = self.access[side]
        rep = acc.report
        per = rep.phase_lanes
        span = max(1, acc.access_bytes // self.elem_bytes)
        for lane in range(32):
            current = lane // per == self.step
            conflict = rep.load[lane // per, rep.lane_bank[lane]] > 1
            color = ANIMATION.color("conflict") if conflict else ANIMATION.color("selection")
            if not current:
                color = _dimmed(color)
            painter.setPen(QPen(color, 2 if current else 1))
            r, c = int(acc.rows[lane]), int(acc.cols[lane])
            if r >= self.rows:
                continue
            first = self.cell_rect(side, r, c)
            last = self.cell_rect(side, r, min(c + span - 1, self.row_elems - 1))
            painter.drawRect(first.united(last).adjusted(1, 1, -1, -1))

    def draw_selection(self, painter: QPainter) -> None:
        if self.selected is None:
            return
        r, c = self.selected
        for side in (BEFORE, AFTER):
            painter.setPen(QPen(ANIMATION.color("selection"), 3))
            painter.drawRect(self.cell_rect(side, r, c))
        line = self.line_px()
        self.draw_text(painter, QRectF(10, self.height() - line - 4, self.width() - 20, line),
                       self.describe(r, c))

    def describe(self, row: int, col: int) -> str:
        a0 = int(self.before.address(row, col))
        a1 = int(self.after.address(row, col))
        return (f"({row}, {col}): address {a0:#x}, bank {a0 // 4 % 32}  →  "
                f"address {a1:#x}, bank {a1 // 4 % 32}")

    # -- mouse ----------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        for side in (BEFORE, AFTER):
            g = self.grid_rect(side)
            if g.contains(pos):
                col = min(int((pos.x() - g.left()) / g.width() * self.row_elems),
                          self.row_elems - 1)
                row = min(int((pos.y() - g.top()) / g.height() * self.rows), self.rows - 1)
                self.selected = (row, col)
                self.cellSelected.emit(row, col)
                self.update()
                return
        super().mousePressEvent(event)


class SwizzleView(ViewPanel):
    def __init__(self, level_id: str | None = None, parent: QWidget | None = None) -> None:
        canvas = SwizzleCanvas()
        super().__init__(canvas, parent)
        self.b_box, self.m_box, self.s_box = (QSpinBox() for _ in range(3))
        for box in (self.b_box, self.m_box, self.s_box):
            box.setRange(0, 12)
        self.unit_box = _combo([(u.value, u.value) for u in SwizzleUnit], canvas.unit.value)
        self.elem_box = _combo([(f"{n} B", n) for n in (1, 2, 4, 8)], canvas.elem_bytes)
        self.width_box = QSpinBox()
        self.width_box.setRange(4, 256)
        self.pad_box = QSpinBox()
        self.pad_box.setRange(0, 16)
        self.rows_box = _combo([(str(n), n) for n in (8, 16, 32)], 16)
        # the 8-row x 16-byte phases are ldmatrix.x4's and also the core matrices a wgmma
        # reads itself: the box says both, so that a Hopper level's pick does not read as
        # an instruction it never issues
        self.pattern_box = _combo([(PATTERN_NAMES.get(p, p.value), p.value) for p in Pattern],
                                  "ldmatrix")
        self.pattern_box.setToolTip("the warp's read pattern: rows, columns, or 8 rows of 16 B "
                                    "a phase (ldmatrix.x4, and the core matrices wgmma reads)")
        self.access_box = _combo([(f"{n} B/lane", n) for n in (4, 8, 16)], 16)
        self.preset_box = QComboBox()
        self.preset_box.addItems([LEVEL_PRESET, *(p.name for p in PRESETS), CUSTOM])
        self.preset_box.setToolTip("a layout by name: the TMA swizzle modes, padding, none, "
                                   "or the level's own")
        # long names are cut in the box (its list shows them whole): it never widens the tab
        self.preset_box.setMinimumContentsLength(16)
        self.preset_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.expr_edit = QLineEdit()
        self.expr_edit.setPlaceholderText("own column expression, e.g. col ^ ((row % 8) * 8)")
        for w in (labelled("layout", self.preset_box),
                  labelled("Swizzle B,M,S", self.b_box, self.m_box, self.s_box),
                  labelled("on", self.unit_box), labelled("element", self.elem_box),
                  labelled("row", self.width_box), labelled("+ pad", self.pad_box),
                  labelled("rows", self.rows_box),
                  labelled("pattern", self.pattern_box, self.access_box)):
            self.options.addWidget(w)
        column = self.layout()
        assert isinstance(column, QVBoxLayout)  # (ViewPanel's)
        column.insertWidget(1, self.expr_edit)
        self.optional.insert(1, self.expr_edit)  # after the message, before the options
        for box in (self.b_box, self.m_box, self.s_box, self.width_box, self.pad_box):
            box.valueChanged.connect(self._apply)
        for combo in (self.unit_box, self.elem_box, self.rows_box, self.pattern_box,
                      self.access_box):
            combo.currentIndexChanged.connect(self._apply)
        self.expr_edit.textChanged.connect(self._apply)
        self.preset_box.activated.connect(self._preset_chosen)
        for combo in (self.pattern_box, self.access_box):  # the person's pattern now
            combo.activated.connect(self._pattern_chosen)
        self.set_level(level_id or first_swizzled_level())

    def _pattern_chosen(self, *_: object) -> None:
        self.explorer.pattern_label = None
        self._apply()

    def _preset_chosen(self, index: int) -> None:
        """A layout by name: the level's own (its model's), or a preset."""
        name = self.preset_box.itemText(index)
        c = self.explorer
        if name == LEVEL_PRESET and c.level_id is not None:
            self.set_level(c.level_id)
            return
        preset = BY_NAME.get(name)
        if preset is None:
            return
        c.configure(swizzle=preset.swizzle, unit=preset.unit,
                    pad_elems=preset.pad_elems(c.elem_bytes))
        self._show_layout(preset=name)
        self.bar.refresh()
        self._show_message()

    @property
    def explorer(self) -> SwizzleCanvas:
        assert isinstance(self.canvas, SwizzleCanvas)
        return self.canvas

    def set_level(self, level_id: str) -> bool:
        if not super().set_level(level_id):
            return False
        self._show_layout(preset=LEVEL_PRESET)
        self._show_message()
        return True

    def _show_layout(self, preset: str | None = None) -> None:
        """Set the boxes to the canvas's layout (a level's preset) without applying them;
        the layout box says ``preset``, else the preset the layout is, else custom."""
        c = self.explorer
        boxes = (self.b_box, self.m_box, self.s_box, self.width_box, self.pad_box,
                 self.unit_box, self.elem_box, self.pattern_box, self.access_box,
                 self.preset_box)
        for box in boxes:
            box.blockSignals(True)
        self.b_box.setValue(c.swizzle.bits)
        self.m_box.setValue(c.swizzle.base)
        self.s_box.setValue(c.swizzle.shift)
        self.width_box.setValue(c.row_elems)
        self.pad_box.setValue(c.pad_elems)
        self.unit_box.setCurrentIndex(self.unit_box.findData(c.unit.value))
        self.elem_box.setCurrentIndex(self.elem_box.findData(c.elem_bytes))
        self.pattern_box.setCurrentIndex(self.pattern_box.findData(c.pattern.value))
        self.access_box.setCurrentIndex(max(0, self.access_box.findData(c.access_bytes)))
        named = preset or preset_named(c.swizzle, c.unit, c.pad_elems, c.elem_bytes)
        self.preset_box.setCurrentText(named or CUSTOM)
        for box in boxes:
            box.blockSignals(False)

    def _apply(self, *_: object) -> None:
        c = self.explorer
        try:
            swz = Swizzle(self.b_box.value(), self.m_box.value(), self.s_box.value())
        except ValueError as exc:
            self.message.setText(str(exc))
            return
        c.swizzle = swz
        c.unit = SwizzleUnit(self.unit_box.currentData())
        c.elem_bytes = self.elem_box.currentData()
        c.row_elems = self.width_box.value()
        c.pad_elems = self.pad_box.value()
        c.rows = self.rows_box.currentData()
        c.pattern = Pattern(self.pattern_box.currentData())
        c.access_bytes = self.access_box.currentData()
        c.set_expression(self.expr_edit.text())
        blocked = self.preset_box.blockSignals(True)
        self.preset_box.setCurrentText(preset_named(c.swizzle, c.unit, c.pad_elems,
                                                    c.elem_bytes) or CUSTOM)
        self.preset_box.blockSignals(blocked)
        self.bar.refresh()
        self._show_message()

    def _show_message(self) -> None:
        c = self.explorer
        if c.error:
            self.message.setText(f"⚠ {c.error}")
            self.message.setStyleSheet(f"color: {ANIMATION.conflict}")
        else:
            self.message.setText("pattern is conflict-free after the mapping"
                                 if c.conflict_free() else
                                 "pattern still conflicts after the mapping")
            color = ANIMATION.ok if c.conflict_free() else ANIMATION.conflict
            self.message.setStyleSheet(f"color: {color}")


def _dimmed(color: QColor, weight: float = DIM_WEIGHT) -> QColor:
    """``color`` a ``weight`` of the way from the canvas background, opaque: a translucent
    1 px pen takes Qt's raster engine ~0.3 ms a rectangle (a frame's worth for a warp's
    outlines); an opaque one a few µs."""
    back = ANIMATION.color("background")
    return QColor(*(round(weight * a + (1 - weight) * b) for a, b in
                    ((color.red(), back.red()), (color.green(), back.green()),
                     (color.blue(), back.blue()))))


def _combo(items: list[tuple[str, object]], current: object) -> QComboBox:
    box = QComboBox()
    for text, data in items:
        box.addItem(text, data)
    box.setCurrentIndex([d for _, d in items].index(current))
    return box

"""Tiling view: C cut into block tiles; the selected block's A row panel and B column
panel stepping along K; the shared-memory stages filling and being consumed; the warp and
thread tiles of the selected thread highlighted in a zoom of the block tile.

One step is one K step of the selected block. In the first part of a step the tile the
step needs (or, with several stages, the tile ``stages - 1`` ahead) is filling its stage;
then the block consumes its stage (a cursor walks k through the tile).

Warp-specialized, persistent levels (wgmma_tma, fp8_block_scaled) get their own picture
(``tiling_pipeline.PipelineScene``): producer and consumer warpgroups, the TMA stage ring,
the wgmma steps and the selected SM's walk over tiles; ``[`` and ``]`` pick the SM.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QKeyEvent, QMouseEvent, QPainter
from PySide6.QtWidgets import QCheckBox, QLabel, QSpinBox, QWidget

from ...kernels.ladder import Shape
from ...kernels.models import LevelModel, WarpSpecialized, model_for
from ..theme import ANIMATION
from .animated_canvas import AnimatedCanvas
from .canvas_image import image_from_codes
from .playback import ViewPanel, model_in_form
from .tiling_pipeline import PipelineScene

BLOCKS = 4  # block rows and cols of C shown
K_STEPS = 4  # K steps shown
LOAD_PART = 0.4  # share of a step spent filling a stage
GAP = 8.0  # between C and the A and B panels
PRODUCT = "A ⋅ B = C"


class TilingCanvas(AnimatedCanvas):
    blockSelected = Signal(int, int)
    threadSelected = Signal(int)
    smSelected = Signal(int)

    def __init__(self, level_id: str = "register_2d", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shape: Shape | None = None  # the shape shown (set_level)
        self.model: LevelModel = model_for(level_id)
        self.level_id = level_id
        self.block = (0, 0)
        self.tid = 0
        self.show_threads = True
        self.scene = self._scene_for(self.model)
        self._owner = self._owner_map()

    # -- state ----------------------------------------------------------------------
    def set_level(self, level_id: str, params: dict[str, int] | None = None,
                  shape: Shape | None = None) -> None:
        """Show ``level_id``'s model with ``params`` (the form it ran; None: the
        registry's, as for parameters its rules refuse); a persistent level's tile map
        shows ``shape``'s C (tiling_pipeline.map_mn)."""
        self.model = model_in_form(level_id, params)
        self.level_id = level_id
        self.shape = shape
        self.tid = min(self.tid, self.model.threads - 1)
        self.scene = self._scene_for(self.model)
        self._owner = self._owner_map()
        if self.scene is None and not len(self.model.thread_outputs(self.tid)):
            # a thread that computes nothing (mma_tma's producer warps) shows an empty
            # warp and thread: start on the first thread that owns outputs instead
            owners = self._owner[self._owner >= 0]
            self.tid = int(owners.min()) if owners.size else self.tid
        self.restart()

    def _scene_for(self, model: LevelModel) -> PipelineScene | None:
        if not isinstance(model, WarpSpecialized):
            return None
        shape = self.shape
        return PipelineScene(self, model, None if shape is None else (shape.M, shape.N))

    def n_steps(self) -> int:
        return self.scene.n_steps() if self.scene is not None else K_STEPS

    def draws_shape(self) -> bool:
        return self.scene is not None  # a persistent level's tile map is of the shape's C

    def picture_height(self, width: int) -> int:
        least = self.scene.least_height(width) if self.scene is not None else 0
        return max(self.minimumHeight(), least)

    def select_block(self, row: int, col: int) -> None:
        self.block = (row, col)
        self.blockSelected.emit(row, col)
        if self.scene is not None:  # a persistent level: the SM that computes the tile
            self.select_sm(self.scene.sm_of_tile(row, col))
        self.update()

    def select_sm(self, sm: int) -> None:
        """Persistent levels: follow SM (block) ``sm`` and its sequence of tiles."""
        if self.scene is None:
            return
        self.scene.set_sm(sm)
        if self.step >= self.n_steps():
            self.set_step(self.n_steps() - 1)
        self.smSelected.emit(self.scene.sm)
        self.update()

    def select_thread(self, tid: int) -> None:
        self.tid = int(tid)
        self.threadSelected.emit(self.tid)
        self.update()

    @property
    def warp(self) -> int:
        return self.tid // 32

    def _owner_map(self) -> np.ndarray:
        owner = np.full((self.model.bm, self.model.bn), -1, np.int64)
        for tid in range(self.model.threads):
            rc = self.model.thread_outputs(tid)
            owner[rc[:, 0], rc[:, 1]] = np.where(owner[rc[:, 0], rc[:, 1]] < 0, tid,
                                                 owner[rc[:, 0], rc[:, 1]])
        return owner

    def stage_state(self, stage: int) -> tuple[str, float, int | None]:
        """(state, fill 0..1, K step held) of a shared stage at the current progress."""
        m, t, p = self.model, self.step, self.progress
        if m.stages == 1:
            if stage != 0:
                return "stage_empty", 0.0, None
            if p < LOAD_PART:
                return "stage_filling", p / LOAD_PART, t
            return "stage_consuming", 1.0, t
        if stage == m.stage(t):
            return "stage_consuming", 1.0, t
        ahead = (stage - m.stage(t)) % m.stages  # K step t + ahead lives here
        if t + ahead >= K_STEPS:
            return "stage_empty", 0.0, None
        if ahead == m.stages - 1:  # issued during this step (prefetch / ring refill)
            fill = min(1.0, p / LOAD_PART)
            return ("stage_filling" if fill < 1.0 else "stage_ready"), fill, t + ahead
        return "stage_ready", 1.0, t + ahead

    # -- geometry -------------------------------------------------------------------
    def _regions(self) -> tuple[QRectF, QRectF, QRectF]:
        line = self.line_px()
        r = QRectF(self.rect()).adjusted(10, 8 + 2 * line, -10, -10)  # the title: 2 lines
        # the matrices: square cells, no wider than the height, but wider than tall where
        # a cell needs it for its launch order (a short canvas, under a talk's caption);
        # the rest is the right's
        cap = r.width() * 0.58
        tall = min((r.height() - GAP) / (BLOCKS + 0.6 * K_STEPS),
                   (cap - GAP) / (BLOCKS + 0.6 * K_STEPS))
        wide = min(max(tall, self._order_width()), (cap - GAP - 0.6 * K_STEPS * tall) / BLOCKS)
        left = QRectF(r.left(), r.top(), 0.6 * K_STEPS * tall + GAP + BLOCKS * wide,
                      r.height())
        right = QRectF(left.right() + 16, r.top(), r.right() - left.right() - 16, r.height())
        if right.width() >= 1.5 * right.height():  # wide: the stages, and the zoom beside
            half = right.width() / 2
            stages = QRectF(right.left(), right.top(), half - 8,
                            max(right.height() * 0.5, 5 * line))
            zoom_left = right.left() + half + 8
            zoom_side = min(right.right() - zoom_left, right.height() - 2 * line - 4)
            zoom = QRectF(zoom_left, right.top() + 2 * line + 4, zoom_side, zoom_side)
            return left, stages, zoom
        stages = QRectF(right.left(), right.top(), right.width(),
                        max(right.height() * 0.34, 5 * line))
        zoom_side = min(right.width(), right.height() - stages.height() - 2 * line - 8)
        zoom = QRectF(right.left(), stages.bottom() + 2 * line + 4, zoom_side, zoom_side)
        return left, stages, zoom

    def _order_width(self) -> float:
        """The width a C block's launch order ("#15") needs in the canvas's type (all of
        them in one size where there is room)."""
        return self.text_px(f"#{BLOCKS * BLOCKS - 1}") + 8 + 4  # its inset, and air

    def _unit(self) -> tuple[float, float, float, QPointF]:
        """(a C cell's width, its height, an A/B tile's depth along K, C's top left)."""
        left, _, _ = self._regions()
        s = min((left.height() - GAP) / (BLOCKS + 0.6 * K_STEPS),
                (left.width() - GAP) / (BLOCKS + 0.6 * K_STEPS))
        t = 0.6 * s
        sx = max(s, (left.width() - GAP - K_STEPS * t) / BLOCKS)
        origin = QPointF(left.left() + K_STEPS * t + GAP, left.top() + K_STEPS * t + GAP)
        return sx, s, t, origin

    def c_block_rect(self, row: int, col: int) -> QRectF:
        sx, s, _, o = self._unit()
        return QRectF(o.x() + col * sx, o.y() + row * s, sx, s)

    def a_tile_rect(self, row: int, k_step: int) -> QRectF:
        _, s, t, o = self._unit()
        return QRectF(o.x() - GAP - (K_STEPS - k_step) * t, o.y() + row * s, t, s)

    def b_tile_rect(self, k_step: int, col: int) -> QRectF:
        sx, _, t, o = self._unit()
        return QRectF(o.x() + col * sx, o.y() - GAP - (K_STEPS - k_step) * t, sx, t)

    def stage_rect(self, array: int, stage: int) -> QRectF:
        _, box, _ = self._regions()
        n = max(1, self.model.stages)
        line, names = self.line_px(), self.array_label_width()
        h = (box.height() - line) / 2
        w = (box.width() - names) / n
        return QRectF(box.left() + names + stage * w, box.top() + line + array * h, w - 6,
                      h - 6)

    def array_label_width(self) -> float:
        """Room left of the stages for the arrays' names and shapes."""
        arrays = self.model.smem_arrays()[:2]
        texts = [f"{a.rows}x{a.pitch}" for a in arrays] + [a.name for a in arrays]
        return max([self.text_px(t) for t in texts] + [40.0]) + 8

    def zoom_rect(self) -> QRectF:
        if self.scene is not None:
            return self.scene.zoom_rect()
        return self._regions()[2]

    def tile_cell_rect(self, row: int, col: int) -> QRectF:
        if self.scene is not None:
            return self.scene.tile_cell_rect(row, col)
        z = self.zoom_rect()
        cw, ch = z.width() / self.model.bn, z.height() / self.model.bm
        return QRectF(z.left() + col * cw, z.top() + row * ch, cw, ch)

    # -- drawing --------------------------------------------------------------------
    def draw(self, painter: QPainter) -> None:
        if self.scene is not None:
            self.scene.draw(painter)
            return
        self.draw_title(painter)
        self.draw_matrices(painter)
        self.draw_stages(painter)
        self.draw_block_tile(painter)

    def draw_title(self, painter: QPainter) -> None:
        m = self.model
        text = (f"{self.level_id}: block tile {m.bm}x{m.bn}, BK={m.bk}, {m.threads} threads, "
                f"{m.stages} stage(s) — K step {self.step + 1}/{K_STEPS}; #: launch order"
                + ("" if self._product_in_corner() else f"; {PRODUCT}"))
        self.draw_text(painter, QRectF(10, 4, self.width() - 20, 2 * self.line_px()), text,
                       wrap=True)

    def draw_matrices(self, painter: QPainter) -> None:
        br, bc = self.block
        grid = ANIMATION.color("grid")
        order = self.model.block_order(BLOCKS, BLOCKS)
        for r in range(BLOCKS):
            for c in range(BLOCKS):
                color = "c_block" if (r, c) == self.block else "panel"
                rect = self.c_block_rect(r, c)
                self.fill(painter, rect, ANIMATION.color(color), grid)
                self.draw_text(painter, QRectF(rect.left() + 4, rect.top() + 2,
                                               rect.width() - 8, self.line_px()),
                               f"#{order[r, c]}", "muted_text", optional=True,
                               on=ANIMATION.color(color))
        for r in range(BLOCKS):
            for k in range(K_STEPS):
                color = ("a_operand" if (r == br and k == self.step) else
                         "a_panel" if r == br else "panel")
                self.fill(painter, self.a_tile_rect(r, k), ANIMATION.color(color), grid)
        for k in range(K_STEPS):
            for c in range(BLOCKS):
                color = ("b_operand" if (c == bc and k == self.step) else
                         "b_panel" if c == bc else "panel")
                self.fill(painter, self.b_tile_rect(k, c), ANIMATION.color(color), grid)
        if self._product_in_corner():
            self.draw_text(painter, self._corner(), PRODUCT, "muted_text",
                           Qt.AlignmentFlag.AlignCenter)

    def _corner(self) -> QRectF:
        """The square left of B and above A (the product's label goes there)."""
        _, _, t, o = self._unit()
        return QRectF(o.x() - GAP - K_STEPS * t, o.y() - GAP - K_STEPS * t, K_STEPS * t,
                      K_STEPS * t)

    def _product_in_corner(self) -> bool:
        """Whether "A ⋅ B = C" fits its corner at the type's floor (else the title says
        it: a short canvas, under a talk's caption, has a small corner)."""
        font = QFont(self.font())
        font.setPointSizeF(max(self.min_text_pt, 1.0))
        return QFontMetricsF(font).horizontalAdvance(PRODUCT) + 4 <= self._corner().width()

    def draw_stages(self, painter: QPainter) -> None:
        arrays = self.model.smem_arrays()
        _, box, _ = self._regions()
        if not arrays:
            self.draw_text(painter, box, "no shared memory: every thread reads A and B "
                           "from global memory", "muted_text", wrap=True)
            return
        self.draw_text(painter, QRectF(box.left(), box.top(), box.width(), self.line_px()),
                       "shared memory stages", "muted_text")
        for i, arr in enumerate(arrays[:2]):
            first = self.stage_rect(i, 0)
            self.draw_text(painter, QRectF(box.left(), first.top(), self.array_label_width() - 4,
                                           first.height()), f"{arr.name}\n{arr.rows}x{arr.pitch}")
            for s in range(self.model.stages):
                rect = self.stage_rect(i, s)
                state, fill, k = self.stage_state(s)
                self.fill(painter, rect, ANIMATION.color("stage_empty"), ANIMATION.color("grid"))
                filled = QRectF(rect.left(), rect.bottom() - rect.height() * fill,
                                rect.width(), rect.height() * fill)
                painter.fillRect(filled, ANIMATION.color(state))
                if state == "stage_consuming" and self.progress >= LOAD_PART:
                    x = rect.left() + rect.width() * (self.progress - LOAD_PART) / (
                        1 - LOAD_PART)
                    painter.setPen(ANIMATION.color("selection"))
                    painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
                label = f"stage {s}" + ("" if k is None else f"\nK step {k + 1}")
                flags = int(Qt.AlignmentFlag.AlignCenter | Qt.AlignmentFlag.AlignVCenter)
                if self._fitting_size(rect, label, flags) < 0:  # narrow stages: short
                    label = f"s{s}" + ("" if k is None else f"\nK{k + 1}")
                under = state if fill >= 0.5 else "stage_empty"  # at the label's middle
                self.draw_text(painter, rect, label, "text", Qt.AlignmentFlag.AlignCenter,
                               on=ANIMATION.color(under))

    def draw_block_tile(self, painter: QPainter) -> None:
        m, z = self.model, self.zoom_rect()
        codes = np.zeros((m.bm, m.bn), np.int64)
        codes[m.warp_mask(self.warp)] = 1
        if self.show_threads:
            rc = m.thread_outputs(self.tid)
            codes[rc[:, 0], rc[:, 1]] = 2
        palette = [ANIMATION.color("panel"), ANIMATION.color("warp"), ANIMATION.color("thread")]
        painter.drawImage(z, image_from_codes(codes, palette))
        painter.setPen(ANIMATION.color("grid"))
        painter.drawRect(z)
        n_out = len(m.thread_outputs(self.tid))
        who = (f"thread {self.tid} (pink, {n_out} outputs)" if n_out < m.bm * m.bn // m.warps
               else f"thread {self.tid}: the warp holds its fragments together")
        line = self.line_px()
        self.draw_text(painter, QRectF(z.left(), z.top() - 2 * line - 2,
                                       self.width() - z.left() - 10, 2 * line),
                       f"block ({self.block[0]},{self.block[1]}): warp {self.warp} "
                       f"(violet), {who}", "muted_text", wrap=True)

    # -- mouse ----------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        if self.scene is not None:
            tile = self.scene.hit_tile(pos)
            if tile is not None:
                self.select_block(*tile)
                return
            tid = self.scene.hit_warpgroup(pos)
            if tid is not None:
                self.select_thread(tid)
                return
        for r in range(BLOCKS if self.scene is None else 0):
            for c in range(BLOCKS):
                if self.c_block_rect(r, c).contains(pos):
                    self.select_block(r, c)
                    return
        z = self.zoom_rect()
        if z.contains(pos):
            col = int((pos.x() - z.left()) / z.width() * self.model.bn)
            row = int((pos.y() - z.top()) / z.height() * self.model.bm)
            owner = self._owner[min(row, self.model.bm - 1), min(col, self.model.bn - 1)]
            if owner >= 0:
                self.select_thread(int(owner))
            return
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if self.scene is not None and key in (Qt.Key.Key_BracketLeft, Qt.Key.Key_BracketRight):
            self.select_sm(self.scene.sm + (1 if key == Qt.Key.Key_BracketRight else -1))
            return
        super().keyPressEvent(event)


class TilingView(ViewPanel):
    def __init__(self, level_id: str = "register_2d", parent: QWidget | None = None) -> None:
        super().__init__(TilingCanvas(level_id), parent)
        self.threads_box = QCheckBox("thread tile")
        self.threads_box.setChecked(True)
        self.threads_box.toggled.connect(self._on_threads)
        self.options.addWidget(self.threads_box)
        # persistent levels: which SM's sequence of tiles to follow
        self.sm_label = QLabel("SM")
        self.sm_box = QSpinBox()
        self.sm_box.setMinimumWidth(64)
        self.sm_box.valueChanged.connect(self._on_sm)
        self.tiling.smSelected.connect(self._follow_sm)
        for w in (self.sm_label, self.sm_box):
            self.options.addWidget(w)
        self.set_level(level_id)

    @property
    def tiling(self) -> TilingCanvas:
        assert isinstance(self.canvas, TilingCanvas)
        return self.canvas

    def _on_sm(self, sm: int) -> None:
        if self.tiling.scene is not None and sm != self.tiling.scene.sm:
            self.tiling.select_sm(sm)
        self.bar.refresh()

    def _follow_sm(self, sm: int) -> None:
        self.sm_box.blockSignals(True)
        self.sm_box.setValue(sm)
        self.sm_box.blockSignals(False)
        self.bar.refresh()

    def _on_threads(self, on: bool) -> None:
        self.canvas.show_threads = on  # type: ignore[attr-defined]
        self.canvas.update()

    def set_level(self, level_id: str) -> bool:
        if not super().set_level(level_id):
            return False
        self.message.setText(self.canvas.model.notes)  # type: ignore[attr-defined]
        scene = self.tiling.scene
        for w in (self.sm_label, self.sm_box):
            w.setVisible(scene is not None)
        if scene is not None:
            self.sm_box.blockSignals(True)
            self.sm_box.setRange(0, scene.grid - 1)
            self.sm_box.setValue(scene.sm)
            self.sm_box.blockSignals(False)
        self.fit_panels()  # the pipeline's picture may want the controls' room
        return True

"""The tiling view's picture of a warp-specialized, persistent level (wgmma_tma,
fp8_block_scaled): the producer warpgroup filling the ring of shared stages by TMA, the
consumer warpgroups (their 64-row halves of the tile in their own colours) stepping their
wgmmas along k, the epilogue, and the selected SM walking its sequence of tiles.

One step is one slot of the model's idealized timeline (``PipelineSchedule``): a K step
of the consumers, or the epilogue after a tile's last K step. Every state drawn (stage
states, what each warpgroup does, which tile comes next, the fragment layout) is read
from the Qt-free model; this module only places and paints it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from ...kernels.models.hopper import STAGING_COLS, WARPGROUP, PromoteOp, WarpSpecialized, WgmmaOp
from ...kernels.models.pipeline import ConsumerView, PipelineSchedule, StageState, StageView, Work
from ..theme import ANIMATION
from .canvas_image import image_from_codes

if TYPE_CHECKING:
    from .animated_canvas import AnimatedCanvas

DISPLAY_MN = (4096, 4096)  # the C the tile map shows (512 tiles: each SM walks 3 or 4)
K_STEPS_SHOWN = 6  # K steps per tile in the animation (K / BK in a real run)
TIME_AT_REST = 0.95  # where in its slot a finished step is shown (just before release)

STATE_COLOR = {StageState.EMPTY: "stage_empty", StageState.FILLING: "stage_filling",
               StageState.FULL: "stage_ready", StageState.CONSUMING: "stage_consuming"}

# zoom codes
PANEL, CONSUMER, WARP, THREAD, STORED = 0, 1, 3, 4, 5


class PipelineScene:
    """Geometry, state and painting of the warp-specialized picture on a canvas."""

    def __init__(self, canvas: AnimatedCanvas, model: WarpSpecialized) -> None:
        self.canvas = canvas
        self.model = model
        self.M, self.N = DISPLAY_MN
        self.gm, self.gn = model.grid(self.M, self.N)
        self.grid = model.persistent_grid(self.M, self.N)
        self.order = model.block_order(self.gm, self.gn)
        self.owner = model.tile_owners(self.M, self.N, K_STEPS_SHOWN * model.bk)
        self.sm = 0
        self._retime()

    # -- state ----------------------------------------------------------------------
    def _retime(self) -> None:
        self.tiles = self.model.block_tiles(self.sm, self.M, self.N,
                                            K=K_STEPS_SHOWN * self.model.bk)
        self.schedule: PipelineSchedule = self.model.schedule(K_STEPS_SHOWN, len(self.tiles))

    def set_sm(self, sm: int) -> None:
        self.sm = max(0, min(int(sm), self.grid - 1))
        self._retime()

    def sm_of_tile(self, row: int, col: int) -> int:
        return int(self.owner[row, col])

    def n_steps(self) -> int:
        return self.schedule.n_slots

    def time(self) -> float:
        return self.canvas.step + self.canvas.progress * TIME_AT_REST

    def stages(self) -> list[StageView]:
        t = self.time()
        return [self.schedule.stage_at(s, t) for s in range(self.model.stages)]

    def consumer(self) -> ConsumerView:
        return self.schedule.consumer_at(self.time())

    def current_op(self) -> WgmmaOp | PromoteOp | None:
        view = self.consumer()
        if view.work is not Work.MMA or view.k_step is None:
            return None
        return self.model.wgmma_ops(0, view.k_step)[view.op]

    def current_tile(self) -> tuple[int, int]:
        return self.tiles[self.consumer().tile]

    def next_tile(self) -> tuple[int, int] | None:
        i = self.consumer().tile + 1
        return self.tiles[i] if i < len(self.tiles) else None

    def stored_chunks(self) -> int:
        """Chunks of 64 columns of C already stored in the current slot (epilogue)."""
        view = self.consumer()
        return view.op if view.work is Work.EPILOGUE else 0

    # -- geometry -------------------------------------------------------------------
    def _regions(self) -> tuple[QRectF, QRectF, QRectF]:
        line = self.canvas.line_px()
        r = QRectF(self.canvas.rect()).adjusted(10, 8 + 2 * line, -10, -10)  # title: 2 lines
        left = QRectF(r.left(), r.top(), r.width() * 0.34, r.height())
        right = QRectF(left.right() + 16, r.top(), r.right() - left.right() - 16, r.height())
        pipe = QRectF(right.left(), right.top(), right.width(),
                      max(right.height() * 0.42, 8 * line))
        zoom_area = QRectF(right.left(), pipe.bottom() + line + 4, right.width(),
                           right.bottom() - pipe.bottom() - line - 4)
        return left, pipe, zoom_area

    def map_rect(self) -> QRectF:
        left, _, _ = self._regions()
        line = self.canvas.line_px()
        side = min(left.width(), left.height() - 5 * line)  # the walk's text under it
        return QRectF(left.left(), left.top() + line, side, side)

    def tile_rect(self, row: int, col: int) -> QRectF:
        m = self.map_rect()
        w, h = m.width() / self.gn, m.height() / self.gm
        return QRectF(m.left() + col * w, m.top() + row * h, w, h)

    def producer_rect(self) -> QRectF:
        _, pipe, _ = self._regions()
        line = self.canvas.line_px()
        return QRectF(pipe.left(), pipe.top() + line, pipe.width() * 0.17,
                      pipe.height() - 2 * line)

    def stage_rect(self, stage: int) -> QRectF:
        """The stage's box (its state colour fills it from the bottom)."""
        _, pipe, _ = self._regions()
        x0, x1 = pipe.left() + pipe.width() * 0.2, pipe.left() + pipe.width() * 0.62
        w = (x1 - x0) / self.model.stages
        line = self.canvas.line_px()  # the caption and a stage's head above, its lamps below
        return QRectF(x0 + stage * w + 3, pipe.top() + 2 * line, w - 6,
                      pipe.height() - 5 * line)

    def consumer_rect(self, consumer: int) -> QRectF:
        _, pipe, _ = self._regions()
        n = self.model.consumers
        line = self.canvas.line_px()
        h = (pipe.height() - 2 * line) / n
        return QRectF(pipe.left() + pipe.width() * 0.66, pipe.top() + line + consumer * h,
                      pipe.width() * 0.34, h - 6)

    def _zoom_parts(self) -> tuple[QRectF, QRectF, QRectF]:
        """(A strip, B strip, C tile): A is BM x BK left of C, B (as K x BN) above it."""
        _, _, area = self._regions()
        m = self.model
        a_w = 0.18 * area.width()
        b_h = 0.22 * area.height()
        gap = 6.0
        line = self.canvas.line_px()
        avail_w, avail_h = area.width() - a_w - gap, area.height() - b_h - gap - line
        scale = max(0.0, min(avail_w / m.bn, avail_h / m.bm))
        cw, ch = m.bn * scale, m.bm * scale
        c = QRectF(area.left() + a_w + gap, area.top() + line + b_h + gap, cw, ch)
        a = QRectF(area.left(), c.top(), a_w, ch)
        b = QRectF(c.left(), area.top() + line, cw, b_h)
        return a, b, c

    def zoom_rect(self) -> QRectF:
        return self._zoom_parts()[2]

    def tile_cell_rect(self, row: int, col: int) -> QRectF:
        z = self.zoom_rect()
        cw, ch = z.width() / self.model.bn, z.height() / self.model.bm
        return QRectF(z.left() + col * cw, z.top() + row * ch, cw, ch)

    # -- drawing --------------------------------------------------------------------
    def draw(self, painter: QPainter) -> None:
        self.draw_title(painter)
        self.draw_tile_map(painter)
        self.draw_producer(painter)
        self.draw_stages(painter)
        self.draw_consumers(painter)
        self.draw_zoom(painter)

    def draw_title(self, painter: QPainter) -> None:
        m, view = self.model, self.consumer()
        when = ("epilogue" if view.work is Work.EPILOGUE else
                f"K step {(view.k_step or 0) + 1}/{K_STEPS_SHOWN}")
        text = (f"{m.level_id}: persistent, {self.grid} blocks (SMs) for "
                f"{self.gm * self.gn} tiles of {m.bm}x{m.bn} (C {self.M}x{self.N}), "
                f"BK={m.bk}, {m.stages} stages, {m.consumers + 1} warpgroups — SM "
                f"{self.sm}, tile {view.tile + 1}/{len(self.tiles)}, {when}")
        self.canvas.draw_text(painter, QRectF(10, 4, self.canvas.width() - 20,
                                              2 * self.canvas.line_px()), text, wrap=True)

    def draw_tile_map(self, painter: QPainter) -> None:
        c = self.canvas
        mrect = self.map_rect()
        c.draw_text(painter, QRectF(mrect.left(), mrect.top() - c.line_px(),
                                    self._regions()[0].width(), c.line_px()),
                    f"C in {self.gm}x{self.gn} tiles; walk in groups of "
                    f"{self.model.group_rows} rows", "muted_text", optional=True)
        now = self.consumer().tile
        mine = {tile: i for i, tile in enumerate(self.tiles)}
        grid = ANIMATION.color("grid")
        for r in range(self.gm):
            for col in range(self.gn):
                i = mine.get((r, col))
                name = ("panel" if i is None else "c_done" if i < now else
                        "c_block" if i == now else "sm_tile")
                painter.fillRect(self.tile_rect(r, col), ANIMATION.color(name))
        painter.setPen(grid)
        for r in range(self.gm + 1):
            y = mrect.top() + r * mrect.height() / self.gm
            painter.drawLine(QPointF(mrect.left(), y), QPointF(mrect.right(), y))
        for col in range(self.gn + 1):
            x = mrect.left() + col * mrect.width() / self.gn
            painter.drawLine(QPointF(x, mrect.top()), QPointF(x, mrect.bottom()))
        painter.setPen(QPen(ANIMATION.color("muted_text"), 2))
        for r in range(self.model.group_rows, self.gm, self.model.group_rows):
            y = mrect.top() + r * mrect.height() / self.gm
            painter.drawLine(QPointF(mrect.left(), y), QPointF(mrect.right(), y))
        nxt = self.next_tile()
        if nxt is not None:
            painter.setPen(QPen(ANIMATION.color("selection"), 2))
            painter.drawRect(self.tile_rect(*nxt).adjusted(1, 1, -1, -1))
        cur = self.current_tile()
        walk = " → ".join(f"({r},{col})" for r, col in self.tiles)
        ts = ", ".join(str(t) for t in range(self.sm, self.gm * self.gn, self.grid))
        lines = (f"SM {self.sm} computes tiles t = {ts} ({self.grid} apart): "
                 f"{walk}\nnow ({cur[0]},{cur[1]}) (green); next: "
                 + (f"({nxt[0]},{nxt[1]}) (outlined)" if nxt else "none, last tile")
                 + "\nclick a tile: the SM that computes it")
        left, _, _ = self._regions()
        c.draw_text(painter, QRectF(left.left(), mrect.bottom() + 6, left.width(),
                                    left.bottom() - mrect.bottom() - 6), lines, "muted_text",
                    wrap=True, optional=True)  # the map says it too, in colours

    def draw_producer(self, painter: QPainter) -> None:
        rect = self.producer_rect()
        self.canvas.fill(painter, rect, ANIMATION.color("producer"), ANIMATION.color("grid"))
        p = self.schedule.producer_at(self.time())
        if p.copying:
            what = "TMA A+Bt →\n" + ", ".join(
                f"stage {it % self.model.stages}" for it in p.copying)
        elif p.waiting_for is not None:
            what = f"waits on\nempty[{p.waiting_stage}]"
        else:
            what = "done"
        # what it does now first; who it is under that, where there is room
        inner = rect.adjusted(4, 4, -4, -4)
        line = self.canvas.line_px()
        head = QRectF(inner.left(), inner.top(), inner.width(), 3 * line)
        self.canvas.draw_text(painter, head, f"WG 0: producer\n{what}", QColor("black"),
                              wrap=True)
        self.canvas.draw_text(painter, inner.adjusted(0, 3 * line + 4, 0, 0),
                              "warps 0-3, 40 registers (setmaxnreg)", QColor("black"),
                              wrap=True, optional=True)

    def draw_stages(self, painter: QPainter) -> None:
        m = self.model
        _, pipe, _ = self._regions()
        line = self.canvas.line_px()
        self.canvas.draw_text(painter, QRectF(self.stage_rect(0).left(), pipe.top(),
                                              pipe.width() * 0.46, line),
                              f"stages: A {m.bm}x{m.bk} + Bt {m.bn}x{m.bk}", "muted_text",
                              optional=True)
        a_share = m.bm / (m.bm + m.bn)
        for view in self.stages():
            rect = self.stage_rect(view.stage)
            self.canvas.fill(painter, rect, ANIMATION.color("stage_empty"), ANIMATION.color("grid"))
            filled = rect.height() * (view.fill if view.state is StageState.FILLING else
                                      0.0 if view.state is StageState.EMPTY else 1.0)
            painter.fillRect(QRectF(rect.left(), rect.bottom() - filled, rect.width(),
                                    filled), ANIMATION.color(STATE_COLOR[view.state]))
            painter.setPen(ANIMATION.color("grid"))
            y = rect.top() + rect.height() * a_share
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
            head = f"s{view.stage}"
            if view.iteration is not None and view.state is not StageState.EMPTY:
                head += f" T{(view.tile or 0) + 1}K{(view.k_step or 0) + 1}"
            self.canvas.draw_text(painter, QRectF(rect.left() - 2, rect.top() - line,
                                                  rect.width() + 4, line), head, "text",
                                  Qt.AlignmentFlag.AlignCenter, optional=True)
            full = view.state in (StageState.FULL, StageState.CONSUMING)
            arrived = view.empty_arrivals if view.state is StageState.EMPTY else 0
            lamp = QRectF(rect.left() - 2, rect.bottom() + 2, rect.width() + 4, line)
            self.canvas.draw_text(painter, lamp, f"F{'●' if full else '○'} "
                                  f"E{arrived}/{m.consumers}",
                                  "ok" if full else "muted_text", Qt.AlignmentFlag.AlignCenter,
                                  optional=True)
        legend = ("sN TtKk: tile t, K step k\nF: full[s] done, E: arrivals on empty[s]")
        self.canvas.draw_text(painter, QRectF(self.stage_rect(0).left(),
                                              pipe.bottom() - 2 * line + 6,
                                              pipe.right() - self.stage_rect(0).left(),
                                              2 * line), legend, "muted_text",
                              optional=True)  # an aside: left out where it has no room

    def draw_consumers(self, painter: QPainter) -> None:
        m, view = self.model, self.consumer()
        op = self.current_op()
        for c in range(m.consumers):
            rect = self.consumer_rect(c)
            self.canvas.fill(painter, rect, ANIMATION.consumer(c), ANIMATION.color("grid"))
            rows = m.consumer_rows(c)
            if view.work is Work.WAIT:
                what = f"waits on full[{view.stage}]"
            elif view.work is Work.EPILOGUE:
                what = (f"epilogue: cols {view.op * STAGING_COLS}-"
                        f"{(view.op + 1) * STAGING_COLS - 1}\nst.shared → TMA store")
            elif view.work is Work.DONE:
                what = "done"
            elif isinstance(op, PromoteOp):
                what = (f"promote (FP32 FMAs)\nacc += tmp·sa·sb\ncols {op.c.col}-"
                        f"{op.c.col + op.c.cols - 1}")
            else:
                assert isinstance(op, WgmmaOp)
                n_mma = sum(isinstance(o, WgmmaOp) for o in m.wgmma_ops(c, 0))
                what = (f"wgmma {op.shape}\n{view.op + 1} of {len(m.wgmma_ops(c, 0))} "
                        f"({n_mma} wgmma) ← s{view.stage}\nk {op.a.col}-"
                        f"{op.a.col + op.a.cols - 1}, cols {op.c.col}-{op.c.col + op.c.cols - 1}")
            # what it does now first; whose rows and warps under that, where there is room
            inner = rect.adjusted(4, 2, -4, -2)
            parts = what.split("\n")
            text = "\n".join([f"WG {c + 1}: consumer {c}", *parts[:2]])
            lines = text.count("\n") + 1
            line = self.canvas.line_px()
            self.canvas.draw_text(painter, QRectF(inner.left(), inner.top(), inner.width(),
                                                  min(inner.height(), lines * line)),
                                  text, QColor("black"), wrap=True)
            details = [*parts[2:], f"rows {rows.row}-{rows.row + rows.rows - 1}, warps "
                       f"{4 * (c + 1)}-{4 * (c + 1) + 3}"]
            self.canvas.draw_text(painter, inner.adjusted(0, lines * line, 0, 0),
                                  "\n".join(details), QColor("black"), wrap=True,
                                  optional=True)
        prod, first = self.producer_rect(), self.stage_rect(0)
        last = self.stage_rect(m.stages - 1)
        painter.setPen(QPen(ANIMATION.color("muted_text"), 2))
        y = prod.center().y()
        painter.drawLine(QPointF(prod.right() + 2, y), QPointF(first.left() - 4, y))
        painter.drawLine(QPointF(last.right() + 4, y),
                         QPointF(self.consumer_rect(0).left() - 2, y))

    def zoom_codes(self) -> np.ndarray:
        """(BM, BN) codes of the zoom: consumer c's rows CONSUMER + c, then the selected
        thread's warp and outputs, and in the epilogue the chunks already stored."""
        m = self.model
        codes = np.zeros((m.bm, m.bn), np.int64)
        for c in range(m.consumers):
            t = m.consumer_rows(c)
            codes[t.row:t.row + t.rows, :] = CONSUMER + c % 2
        stored = self.stored_chunks()
        if stored:
            codes[:, :stored * STAGING_COLS] = STORED
        tid = getattr(self.canvas, "tid", 0)
        if getattr(self.canvas, "show_threads", True):  # the producer's threads own none
            codes[m.warp_mask(tid // 32)] = WARP
            rc = m.thread_outputs(tid)
            codes[rc[:, 0], rc[:, 1]] = THREAD
        return codes

    def palette(self) -> list[QColor]:
        return [ANIMATION.color("panel"), ANIMATION.consumer(0), ANIMATION.consumer(1),
                ANIMATION.color("warp"), ANIMATION.color("thread"), ANIMATION.color("c_done")]

    def draw_zoom(self, painter: QPainter) -> None:
        m = self.model
        a_rect, b_rect, z = self._zoom_parts()
        painter.drawImage(z, image_from_codes(self.zoom_codes(), self.palette()))
        painter.setPen(ANIMATION.color("grid"))
        painter.drawRect(z)
        op = self.current_op()
        a_codes = np.zeros((m.bm, m.bk), np.int64)
        b_codes = np.zeros((m.bk, m.bn), np.int64)
        if isinstance(op, WgmmaOp):
            for c in range(m.consumers):  # the consumers run in step: same k, own rows
                r0 = m.consumer_rows(c).row
                a_codes[r0:r0 + op.a.rows, op.a.col:op.a.col + op.a.cols] = 1
            b_codes[op.b.col:op.b.col + op.b.cols, op.b.row:op.b.row + op.b.rows] = 1
        painter.drawImage(a_rect, image_from_codes(
            a_codes, [ANIMATION.color("a_panel"), ANIMATION.color("a_operand")]))
        painter.drawImage(b_rect, image_from_codes(
            b_codes, [ANIMATION.color("b_panel"), ANIMATION.color("b_operand")]))
        painter.setPen(ANIMATION.color("grid"))
        painter.drawRect(a_rect)
        painter.drawRect(b_rect)
        view = self.consumer()
        if view.work is Work.EPILOGUE:  # the chunk being staged and stored
            painter.setPen(QPen(ANIMATION.color("selection"), 2))
            col = view.op * STAGING_COLS
            painter.drawRect(QRectF(self.tile_cell_rect(0, col).topLeft(), self.tile_cell_rect(
                m.bm - 1, col + STAGING_COLS - 1).bottomRight()).adjusted(1, 1, -1, -1))
        if isinstance(op, (WgmmaOp, PromoteOp)):
            painter.setPen(QPen(ANIMATION.color("selection"), 2))
            for c in range(m.consumers):
                t = op.c
                r0 = m.consumer_rows(c).row
                top_left = self.tile_cell_rect(r0, t.col).topLeft()
                bottom_right = self.tile_cell_rect(r0 + t.rows - 1,
                                                   t.col + t.cols - 1).bottomRight()
                painter.drawRect(QRectF(top_left, bottom_right).adjusted(1, 1, -1, -1))
        self.canvas.draw_text(painter, QRectF(a_rect.left(), b_rect.top(), a_rect.width(),
                                              b_rect.height()),
                              f"A {m.bm}x{m.bk}\nBt {m.bn}x{m.bk}\n(K across)",
                              "muted_text", Qt.AlignmentFlag.AlignCenter, optional=True)
        line = self.canvas.line_px()
        self.canvas.draw_text(painter, QRectF(a_rect.left(), b_rect.top() - line,
                                              self.canvas.width() - a_rect.left() - 10, line),
                              self.describe_thread(), "muted_text", optional=True)

    def describe_thread(self) -> str:
        m = self.model
        tid = getattr(self.canvas, "tid", 0)
        warp = tid // 32
        c = m.consumer_of(warp)
        if c is None:
            return (f"thread {tid}: producer (warp {warp}), owns no C"
                    + (", issues the TMA copies" if tid == 0 else "")
                    + "; rows of C by consumer: " + ", ".join(
                        f"{m.consumer_rows(i).row}-{m.consumer_rows(i).row + 63}"
                        for i in range(m.consumers)))
        lane = tid % 32
        out = m.thread_outputs(tid)
        return (f"thread {tid}: consumer {c}, warp {warp} (violet), lane {lane}: "
                f"{len(out)} accumulators (pink), rows {out[0, 0]}, {out[2, 0]}, "
                f"cols 8j+{2 * (lane % 4)},+1")

    # -- mouse ----------------------------------------------------------------------
    def hit_tile(self, pos: QPointF) -> tuple[int, int] | None:
        m = self.map_rect()
        if not m.contains(pos):
            return None
        col = int((pos.x() - m.left()) / m.width() * self.gn)
        row = int((pos.y() - m.top()) / m.height() * self.gm)
        return min(row, self.gm - 1), min(col, self.gn - 1)

    def hit_warpgroup(self, pos: QPointF) -> int | None:
        """The first thread of the warpgroup box under ``pos`` (producer 0)."""
        if self.producer_rect().contains(pos):
            return 0
        for c in range(self.model.consumers):
            if self.consumer_rect(c).contains(pos):
                return (c + 1) * WARPGROUP
        return None

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

from ...kernels.models import (
    STAGING_COLS,
    WARPGROUP,
    ConsumerView,
    PipelineSchedule,
    PromoteOp,
    StageState,
    StageView,
    WarpSpecialized,
    WgmmaOp,
    Work,
)
from ...kernels.results import counted
from ..theme import ANIMATION
from . import tiling_pipeline_text as words
from .canvas_image import image_from_codes
from .tiling_pipeline_layout import PipelineLayout, PipelineTexts, arrange, least_height

if TYPE_CHECKING:
    from .animated_canvas import AnimatedCanvas

DISPLAY_MN = (4096, 4096)  # the C the tile map shows where no shape is given (512 tiles)
MAX_MAP_TILES = 4096  # a shape with more tiles is shown as DISPLAY_MN (the map's cells)


def map_mn(model: WarpSpecialized, mn: tuple[int, int] | None) -> tuple[int, int]:
    """The C the tile map shows: the shape a run had (``mn``), unless it has more tiles
    than the map can draw, else DISPLAY_MN."""
    if mn is None:
        return DISPLAY_MN
    gm, gn = model.grid(*mn)
    return mn if gm * gn <= MAX_MAP_TILES else DISPLAY_MN
K_STEPS_SHOWN = 6  # K steps per tile in the animation (K / BK in a real run)
TIME_AT_REST = 0.95  # where in its slot a finished step is shown (just before release)

STATE_COLOR = {StageState.EMPTY: "stage_empty", StageState.FILLING: "stage_filling",
               StageState.FULL: "stage_ready", StageState.CONSUMING: "stage_consuming"}

# zoom codes
PANEL, CONSUMER, WARP, THREAD, STORED = 0, 1, 3, 4, 5


class PipelineScene:
    """Geometry, state and painting of the warp-specialized picture on a canvas."""

    def __init__(self, canvas: AnimatedCanvas, model: WarpSpecialized,
                 mn: tuple[int, int] | None = None) -> None:
        self.canvas = canvas
        self.model = model
        self.M, self.N = map_mn(model, mn)
        self.gm, self.gn = model.grid(self.M, self.N)
        self.grid = model.persistent_grid(self.M, self.N)
        self.order = model.block_order(self.gm, self.gn)
        self.owner = model.tile_owners(self.M, self.N, K_STEPS_SHOWN * model.bk)
        self.sm = 0
        self._layout: PipelineLayout | None = None
        self._layout_key: tuple | None = None
        self._least_key: tuple | None = None
        self._least = 0
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

    # -- texts ----------------------------------------------------------------------
    def header_text(self, when: str | None = None, tile: int | None = None) -> str:
        """The level's configuration, then the selected SM's place in its walk."""
        m, view = self.model, self.consumer()
        if when is None:
            when = ("epilogue" if view.work is Work.EPILOGUE else
                    f"K step {(view.k_step or 0) + 1}/{K_STEPS_SHOWN}")
        tile = view.tile if tile is None else tile
        walk = " → ".join(f"({r},{col})" for r, col in self.tiles)
        ts = ", ".join(str(t) for t in range(self.sm, self.gm * self.gn, self.grid))
        # fp8_deep's 2-CTA clusters (CL 2): CTAs 2c and 2c + 1 take neighbouring tiles of a
        # tile row (the same walk, t = 2 (r * clusters + c) + rank) and share the A tile, which
        # the first multicasts (in place of the warpgroups' count, which the picture draws)
        clustered = getattr(m, "cl", 1) == 2
        groups = "2-CTA clusters" if clustered else f"{m.consumers + 1} warpgroups"
        sm = (f"SM {self.sm} (A {'to' if self.sm % 2 == 0 else 'from'} SM {self.sm ^ 1})"
              if clustered else f"SM {self.sm}")
        return (f"{m.level_id}: persistent, {self.grid} blocks (SMs) for "
                f"{self.gm * self.gn} tiles of {m.bm}x{m.bn} (C {self.M}x{self.N}), "
                f"BK={m.bk}, {m.stages} stages, {groups}\n"
                f"{sm}, tile {tile + 1}/{len(self.tiles)}, {when}: tiles t = {ts} "
                f"({self.grid} apart): {walk}")

    def map_caption(self) -> str:
        return (f"C in {self.gm}x{self.gn} tiles; walk in groups of "
                f"{counted(self.model.group_rows, 'row')}")

    def map_notes(self, tile: int | None = None) -> str:
        """Which tile is now and which next (of the walk's ``tile``-th, default now)."""
        i = self.consumer().tile if tile is None else tile
        cur = self.tiles[i]
        nxt = self.tiles[i + 1] if i + 1 < len(self.tiles) else None
        return (f"now ({cur[0]},{cur[1]}) (green); next: "
                + (f"({nxt[0]},{nxt[1]}) (outlined)" if nxt else "none, last tile")
                + "\nclick a tile: the SM that computes it")

    def producer_head(self, time: float | None = None) -> str:
        p = self.schedule.producer_at(self.time() if time is None else time)
        if p.copying:
            stages = [str(it % self.model.stages) for it in p.copying]
            what = "TMA A+Bt →\n" + ("stage " if len(stages) == 1 else "stages ") + \
                ", ".join(stages)
        elif p.waiting_for is not None:
            what = f"waits on\nempty[{p.waiting_stage}]"
        else:
            what = "done"
        return f"WG 0: producer\n{what}"

    def texts(self) -> PipelineTexts:
        """Every text of the picture in each form the animation shows (the layout makes
        room for the longest, so nothing moves while it plays)."""
        m, sched = self.model, self.schedule
        times = [slot + f for slot in range(sched.n_slots) for f in (0.0, 0.3, 0.6, 0.95)]
        heads, stage_heads, lamps, lines, c_heads = set(), set(), set(), set(), set()
        rows = 0
        for t in times:
            heads.add(self.producer_head(t))
            for s in range(m.stages):
                view = sched.stage_at(s, t)
                stage_heads.add(words.stage_head(view))
                lamps.add(words.lamp(m, view))
            consumer = sched.consumer_at(t)
            op = None
            if consumer.work is Work.MMA and consumer.k_step is not None:
                op = m.wgmma_ops(0, consumer.k_step)[consumer.op]
            for c in range(m.consumers):
                head, details = words.consumer_text(m, c, consumer, op)
                box = [*head.split("\n"), *details.split("\n")]
                c_heads.add(head)
                lines.update(box)
                rows = max(rows, len(box))
        whens = [f"K step {k + 1}/{K_STEPS_SHOWN}" for k in range(K_STEPS_SHOWN)]
        header = tuple({self.header_text(when, tile) for when in [*whens, "epilogue"]
                        for tile in range(len(self.tiles))})
        notes = tuple(self.map_notes(tile) for tile in range(len(self.tiles)))
        return PipelineTexts(
            header, self.map_caption(), notes, tuple(sorted(heads)), words.producer_details(m),
            words.ring_caption(m), tuple(sorted(stage_heads)), tuple(sorted(lamps)),
            words.RING_LEGEND, tuple(sorted(c_heads)), tuple(sorted(lines)), rows,
            tuple({self.describe_thread(t) for t in  # the longest forms: ids of 1 to 3 digits
                   (getattr(self.canvas, "tid", 0), 0, 1, 5 * 32 + 31, m.threads - 1)}),
            words.operands(m))

    # -- geometry -------------------------------------------------------------------
    def layout(self) -> PipelineLayout:
        c = self.canvas
        font = c.font()
        key = (c.width(), c.height(), font.key(), c.min_text_pt, self.sm)
        if self._layout is None or self._layout_key != key:
            self._layout_key = key
            self._layout = arrange(c.width(), c.height(), font, c.min_text_pt, self.texts(),
                                  self.model.stages, self.model.consumers,
                                  self.model.bm / self.model.bn)
        return self._layout

    def least_height(self, width: int) -> int:
        """The least height at which every label and aside has its room (at the floor)."""
        c = self.canvas
        key = (width, c.font().key(), c.min_text_pt, self.sm)
        if self._least_key != key:
            self._least_key = key
            self._least = least_height(width, c.font(), c.min_text_pt, self.texts(),
                                       self.model.stages, self.model.consumers,
                                       self.model.bm / self.model.bn)
        return self._least

    def map_rect(self) -> QRectF:
        return self.layout().map

    def tile_rect(self, row: int, col: int) -> QRectF:
        m = self.map_rect()
        w, h = m.width() / self.gn, m.height() / self.gm
        return QRectF(m.left() + col * w, m.top() + row * h, w, h)

    def producer_rect(self) -> QRectF:
        return self.layout().producer

    def stage_rect(self, stage: int) -> QRectF:
        """The stage's box (its state colour fills it from the bottom)."""
        return self.layout().stages[stage]

    def consumer_rect(self, consumer: int) -> QRectF:
        return self.layout().consumers[consumer]

    def _zoom_parts(self) -> tuple[QRectF, QRectF, QRectF]:
        """(A strip, B strip, C tile): A is BM x BK left of C, B (as K x BN) above it."""
        lay = self.layout()
        return lay.a, lay.b, lay.c

    def zoom_rect(self) -> QRectF:
        return self._zoom_parts()[2]

    def tile_cell_rect(self, row: int, col: int) -> QRectF:
        z = self.zoom_rect()
        cw, ch = z.width() / self.model.bn, z.height() / self.model.bm
        return QRectF(z.left() + col * cw, z.top() + row * ch, cw, ch)

    # -- drawing --------------------------------------------------------------------
    def _text(self, painter: QPainter, rect: QRectF, text: str,
              color: str | QColor = "text",
              align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft,
              wrap: bool = False, optional: bool = False, on: QColor | None = None) -> None:
        """A text in the size the layout was measured in (or smaller, where it must);
        ``on``: the fill behind it (the text then keeps 4.5:1 on it)."""
        self.canvas.draw_text(painter, rect, text, color, align, wrap, optional,
                              max_pt=self.layout().point_size, on=on)

    def draw(self, painter: QPainter) -> None:
        self.draw_title(painter)
        self.draw_tile_map(painter)
        self.draw_producer(painter)
        self.draw_stages(painter)
        self.draw_consumers(painter)
        self.draw_zoom(painter)

    def draw_title(self, painter: QPainter) -> None:
        self._text(painter, self.layout().header, self.header_text(), wrap=True)

    def draw_tile_map(self, painter: QPainter) -> None:
        lay = self.layout()
        mrect = lay.map
        self._text(painter, lay.map_caption, self.map_caption(), "muted_text", wrap=True,
                    optional=True)
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
        self._text(painter, lay.map_notes, self.map_notes(), "muted_text", wrap=True,
                    optional=True)  # the map says it too, in colours

    def draw_producer(self, painter: QPainter) -> None:
        lay = self.layout()
        rect = lay.producer
        self.canvas.fill(painter, rect, ANIMATION.color("producer"), ANIMATION.color("grid"))
        # what it does now first; who it is under that, where there is room
        inner = rect.adjusted(4, 4, -4, -4)
        head = QRectF(inner.left(), inner.top(), inner.width(), lay.producer_head_px)
        self._text(painter, head, self.producer_head(), QColor("black"),
                   wrap=True, on=ANIMATION.color("producer"))
        self._text(painter, inner.adjusted(0, lay.producer_head_px + 4, 0, 0),
                   words.producer_details(self.model), QColor("black"), wrap=True, optional=True,
                   on=ANIMATION.color("producer"))

    def draw_stages(self, painter: QPainter) -> None:
        m, lay = self.model, self.layout()
        line = lay.line
        self._text(painter, lay.ring_caption, words.ring_caption(m), "muted_text",
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
            self._text(painter, QRectF(rect.left() - 3, rect.top() - line,
                                                  rect.width() + 6, line),
                                  words.stage_head(view), "text",
                                  Qt.AlignmentFlag.AlignCenter, optional=True)
            full = view.state in (StageState.FULL, StageState.CONSUMING)
            lamp = QRectF(rect.left() - 3, rect.bottom() + 2, rect.width() + 6, line)
            self._text(painter, lamp, words.lamp(m, view),
                                  "ok" if full else "muted_text", Qt.AlignmentFlag.AlignCenter,
                                  optional=True)
        self._text(painter, lay.legend, words.RING_LEGEND, "muted_text", wrap=True,
                              optional=True)  # an aside: left out where it has no room

    def draw_consumers(self, painter: QPainter) -> None:
        m, view, lay = self.model, self.consumer(), self.layout()
        op = self.current_op()
        for c in range(m.consumers):
            rect = self.consumer_rect(c)
            self.canvas.fill(painter, rect, ANIMATION.consumer(c), ANIMATION.color("grid"))
            head, details = words.consumer_text(m, c, view, op)
            # what it does now first; whose rows and warps under that, where there is room
            inner = rect.adjusted(4, 3, -4, -2)
            head_px = lay.consumer_head_px
            self._text(painter, QRectF(inner.left(), inner.top(), inner.width(),
                                                  min(inner.height(), head_px)),
                       head, QColor("black"), wrap=True, on=ANIMATION.consumer(c))
            self._text(painter, inner.adjusted(0, head_px, 0, 0), details,
                       QColor("black"), wrap=True, optional=True, on=ANIMATION.consumer(c))
        painter.setPen(QPen(ANIMATION.color("muted_text"), 2))
        for x0, y0, x1, y1 in lay.arrows:
            painter.drawLine(QPointF(x0, y0), QPointF(x1, y1))

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
        lay = self.layout()
        self._text(painter, lay.operands, words.operands(m), "muted_text",
                   Qt.AlignmentFlag.AlignCenter, optional=True)
        self._text(painter, lay.thread, self.describe_thread(), "muted_text",
                              wrap=True, optional=True)

    def describe_thread(self, tid: int | None = None) -> str:
        m = self.model
        tid = getattr(self.canvas, "tid", 0) if tid is None else tid
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

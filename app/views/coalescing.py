"""Coalescing view: one warp's global loads and stores, lane by lane, and the 32-byte
sectors they touch (bytes used in the lane's colour, bytes fetched but unused grey).
One step is one global instruction of the chosen warp and K step (loads of A and B, then
the stores of C); within a step the lanes' requests appear one after another. The
addresses are those of the shape shown (the view state's: a row of A is K floats long, so
a warp's rows lie K×4 bytes apart), 4096³ until a session has one.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QWidget

from ...kernels.ladder import Shape
from ...kernels.models import SECTOR_BYTES, SectorReport, WarpAccess
from ...kernels.results import counted
from ..core.store import Change, SessionStore
from ..core.view_state import DEFAULT_SHAPE
from ..theme import ANIMATION
from .playback import WarpAccessCanvas, WarpAccessView

WORDS_PER_SECTOR = SECTOR_BYTES // 4
SECTORS_PER_ROW = 8


def summary_line(acc: WarpAccess, rep: SectorReport) -> tuple[str, str]:
    """The sector line under the instruction and its colour: green where the warp touches
    the fewest sectors its bytes need, red where more. A broadcast (every lane the same
    word) is said as one: "efficiency 12%" of one sector that serves 32 lanes is no loss."""
    good = rep.n_sectors <= rep.ideal_sectors
    if WarpAccessCanvas.is_broadcast(acc):
        lanes = int(rep.active.sum())
        return (f"broadcast: {counted(lanes, 'lane')} read the same "
                f"{counted(acc.width_bytes, 'byte')}, {counted(rep.n_sectors, 'sector')} of 32 B: "
                "the fewest a load can touch", "ok")
    return (f"{counted(rep.n_sectors, 'sector')} of 32 B ({counted(rep.n_lines, 'line')} of 128 B) "
            f"for {counted(rep.bytes_used, 'byte')} used: ideal "
            f"{counted(rep.ideal_sectors, 'sector')}; "
            f"{rep.efficiency:.0%} of the bytes fetched used", "ok" if good else "conflict")


class CoalescingCanvas(WarpAccessCanvas):
    def __init__(self, level_id: str = "naive", parent: QWidget | None = None) -> None:
        super().__init__(level_id, parent)
        self.shape = DEFAULT_SHAPE  # the view state's, once the view is bound to a store
        self._report: SectorReport | None = None
        self._reload()

    def set_shape(self, shape: Shape) -> None:
        """Analyse the accesses at ``shape`` (M, N, K set the arrays' strides), keeping
        the instruction shown."""
        if shape != self.shape:
            self.shape = shape
            self._reload()

    def report(self) -> SectorReport | None:
        return self._report

    def default_step(self) -> int:
        """The first access that is not a broadcast: a warp reading one element of A
        (coalesced's A load) touches one sector whatever the mapping; the level's story
        is in the accesses whose lanes read apart (naive's A, coalesced's B and C)."""
        return next((i for i, acc in enumerate(self.accesses)
                     if not self.is_broadcast(acc)), 0)

    def _load(self) -> list[WarpAccess]:
        M, N, K = self.shape.M, self.shape.N, self.shape.K
        return (self.model.global_accesses(self.warp, self.k_step, M, N, K)
                + self.model.store_accesses(self.warp, M, N))

    def _analyse(self) -> None:
        acc = self.current()
        self._report = None if acc is None else acc.sectors()
        self.update()

    # -- geometry -------------------------------------------------------------------
    def lane_rect(self, lane: int) -> QRectF:
        w = (self.width() - 20) / 32
        return QRectF(10 + lane * w, 8 + 2 * self.line_px(), w - 2, self.line_px() + 4)

    def sector_rect(self, index: int) -> QRectF:
        """Sector ``index``: its address above it (one line), rows of sectors under the
        lanes and the selected lane's line, sized to share the height that is left."""
        line = self.line_px()
        w = (self.width() - 20) / SECTORS_PER_ROW
        row, col = divmod(index, SECTORS_PER_ROW)
        top = 8 + 5 * line + 8  # summary (2 lines), lanes, selected lane, the address
        pitch = max(2.2 * line, min(4 * line + 24, (self.height() - top) / 4.5))
        return QRectF(10 + col * w + 6, top + row * pitch, w - 12, pitch - line - 6)

    def word_rect(self, index: int, word: int) -> QRectF:
        s = self.sector_rect(index)
        w = s.width() / WORDS_PER_SECTOR
        return QRectF(s.left() + word * w, s.top(), w - 1, s.height())

    # -- drawing --------------------------------------------------------------------
    def draw(self, painter: QPainter) -> None:
        self.draw_summary(painter)
        self.draw_lanes(painter)
        self.draw_sectors(painter)

    def draw_summary(self, painter: QPainter) -> None:
        acc, rep = self.current(), self._report
        if acc is None or rep is None:
            self.draw_text(painter, QRectF(10, 8, self.width() - 20, 2 * self.line_px()),
                           "no global accesses modelled for this level", "muted_text")
            return
        line = self.line_px()
        self.draw_text(painter, QRectF(10, 4, self.width() - 20, line),
                       f"{acc.label}   [{acc.op.value}, {acc.width_bytes} B per lane, warp "
                       f"{self.warp}, K step {self.k_step + 1}, {self.shape}]")
        self.draw_text(painter, QRectF(10, 4 + line, self.width() - 20, line),
                       *summary_line(acc, rep))
        lane = self.selected_lane
        if lane is not None and rep.active[lane]:
            addr = int(rep.addr[lane])
            self.draw_text(painter, QRectF(10, self.lane_rect(0).bottom() + 4,
                                           self.width() - 20, line),
                           f"lane {lane}: {acc.array} byte {addr:#x} (element "
                           f"{addr // self.model.elem_bytes}), sector "
                           f"{addr // SECTOR_BYTES * SECTOR_BYTES:#x}", "muted_text")

    def _shown_lanes(self) -> int:
        return int(np.ceil(self.progress * 32 - 1e-9))

    def draw_lanes(self, painter: QPainter) -> None:
        rep = self._report
        if rep is None:
            return
        for lane in range(32):
            rect = self.lane_rect(lane)
            fill = ANIMATION.lane(lane) if rep.active[lane] else ANIMATION.color("unused")
            painter.fillRect(rect, fill)
            self.draw_text(painter, rect, str(lane), QColor("black"),
                           Qt.AlignmentFlag.AlignCenter, on=fill)

    def sector_index(self, sector: int) -> int:
        assert self._report is not None
        return int(np.searchsorted(self._report.sectors, sector))

    def draw_sectors(self, painter: QPainter) -> None:
        rep = self._report
        if rep is None:
            return
        shown = self._shown_lanes()
        owner: dict[tuple[int, int], int] = {}
        for lane in np.flatnonzero(rep.active):
            first, last = rep.addr[lane], rep.addr[lane] + rep.width_bytes - 1
            for word in range(first // 4, last // 4 + 1):
                owner.setdefault((word * 4 // SECTOR_BYTES, word % WORDS_PER_SECTOR),
                                 int(lane))
        visible = min(rep.n_sectors, SECTORS_PER_ROW * 4)
        for i in range(visible):
            sector = int(rep.sectors[i])
            rect = self.sector_rect(i)
            line = self.line_px()
            self.draw_text(painter, QRectF(rect.left(), rect.top() - line - 2, rect.width(),
                                           line), f"{sector * SECTOR_BYTES:#x}", "muted_text")
            for w in range(WORDS_PER_SECTOR):
                word_lane = owner.get((sector, w))
                color = ANIMATION.color("unused") if word_lane is None else \
                    QColor(ANIMATION.lane(word_lane))
                if word_lane is not None and word_lane >= shown:
                    color.setAlpha(70)
                painter.fillRect(self.word_rect(i, w), color)
            if i and rep.sectors[i] != rep.sectors[i - 1] + 1:
                painter.setPen(ANIMATION.color("muted_text"))
                painter.drawText(QPointF(rect.left() - 8, rect.center().y() + 4), "…")
        if rep.n_sectors > visible:
            self.draw_text(painter, QRectF(10, self.sector_rect(visible).top(),
                                           self.width() - 20, self.line_px()),
                           f"… and {rep.n_sectors - visible} more sectors", "muted_text")
        selected = self.selected_lane
        if selected is not None and rep.active[selected]:
            i = self.sector_index(int(rep.lane_sector[selected]))
            if i < visible:
                painter.setPen(QPen(ANIMATION.color("selection"), 2))
                painter.drawLine(QPointF(self.lane_rect(selected).center().x(),
                                         self.lane_rect(selected).bottom()),
                                 QPointF(self.sector_rect(i).center().x(),
                                         self.sector_rect(i).top() - self.line_px()))
                painter.drawRect(self.sector_rect(i).adjusted(-2, -2, 2, 2))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        for lane in range(32):
            if self.lane_rect(lane).contains(event.position()):
                self.select_lane(None if self.selected_lane == lane else lane)
                return
        super().mousePressEvent(event)


class CoalescingView(WarpAccessView):
    def __init__(self, level_id: str = "naive", parent: QWidget | None = None) -> None:
        super().__init__(CoalescingCanvas(level_id), [], parent)
        self.store: SessionStore | None = None
        self.set_level(level_id)

    def bind(self, store: SessionStore) -> None:
        self.store = store
        self.refresh(set(Change))

    def refresh(self, changes: set[Change]) -> None:
        """The shape shown is the view state's (a shape change marks the ladder changed)."""
        if self.store is not None and Change.LADDER in changes:
            self.coalescing.set_shape(self.store.view.state.shape or DEFAULT_SHAPE)

    @property
    def coalescing(self) -> CoalescingCanvas:
        assert isinstance(self.canvas, CoalescingCanvas)
        return self.canvas

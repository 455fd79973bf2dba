"""Banks view: the 32 shared-memory banks as columns and the words one warp instruction
touches, lanes coloured; banks with more than one distinct word in a phase are the
conflict colour, with the n-way count and the wavefronts. Padding and an XOR swizzle can
be switched on to see, live, what they would change (re-placed by the Qt-free model).

One step is one shared-memory instruction of the chosen warp and K step; within a step
the wavefronts are served one after another (cells not yet served are dimmed). A legend
under the lane row says what a column, a row, a cell and a phase are (with the phases of
the instruction shown), and the rows grow with the canvas, the picture centred in it.

Under the picture, the model's whole-kernel totals stand beside the counters ncu
measured for the level, where the session holds them (``CountersPanel``), and the SASS
lines ncu measured conflicts on, each linked to its source line in the Code view
(``ConflictLinks``, from ``source_counters`` events).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QCheckBox, QSpinBox, QVBoxLayout, QWidget

from ...kernels.models import (
    IDENTITY,
    N_BANKS,
    BankReport,
    Op,
    RelayoutError,
    Swizzle,
    WarpAccess,
    bank_cells,
    wavefront_index,
)
from ...kernels.models import relayout_access as relayout
from ...kernels.results import counted
from ..core.source_heat import conflict_lines
from ..core.store import Change, SessionStore
from ..theme import ANIMATION
from ..widgets.fitting import labelled, scrolling
from .counters_panel import CountersPanel
from .playback import WarpAccessCanvas, WarpAccessView
from .source_links import ConflictLinks

WIDTH_NAMES = {1: "8-bit", 2: "16-bit", 4: "32-bit", 8: "64-bit", 16: "128-bit"}
MAX_ROW_LINES = 2.5  # a row of cells grows with the room up to this many text lines
CELLS_GAP_PX = 6  # between the bank headers and the first row
LANES_GAP_PX = 10  # between the last row and the lane row
LEGEND_GAP_PX = 8  # between the lane row and the legend
BOTTOM_PX = 6  # under the last thing drawn


class BanksCanvas(WarpAccessCanvas):
    def __init__(self, level_id: str = "register_2d", parent: QWidget | None = None) -> None:
        super().__init__(level_id, parent)
        self.extra_pad = 0
        self.swizzle: Swizzle = IDENTITY
        self.errors: dict[int, str] = {}  # instruction index -> why it was not re-placed
        self._report: BankReport | None = None
        self._rows_of: tuple[BankReport | None, int] = (None, 0)
        self._grid_of: tuple[tuple[object, ...], tuple[float, float, float]] = ((), (0, 0, 0))
        self._places = (0.0, 0.0, 0.0)  # headers' top, lanes' top, legend's height
        self._cells: dict[tuple[int, int, int], list[int]] = {}
        self._summary: tuple[object, tuple[int, int]] = (None, (0, 0))
        self._reload()

    def set_swizzle(self, swizzle: Swizzle) -> None:
        self.swizzle = swizzle
        self._reload()

    @property
    def layout_error(self) -> str | None:
        """Why the shown instruction keeps its layout (padding/swizzle would break it)."""
        return self.errors.get(self.step)

    def report(self) -> BankReport | None:
        return self._report

    def default_step(self) -> int:
        """The instruction the level's shared-memory story is about: the first with a
        bank conflict, else the first load that is no broadcast, else the first."""
        reports = [acc.banks() for acc in self.accesses]
        conflict = next((i for i, r in enumerate(reports) if r.conflicts > 0), None)
        if conflict is not None:
            return conflict
        return next((i for i, acc in enumerate(self.accesses)
                     if acc.op is Op.LOAD and not self.is_broadcast(acc)), 0)

    def _load(self) -> list[WarpAccess]:
        base = self.model.shared_accesses(self.warp, self.k_step)
        arrays = self.model.smem_arrays()
        self.errors = {}
        accesses = []
        for i, acc in enumerate(base):
            try:
                accesses.append(relayout(acc, arrays, self.extra_pad, self.swizzle))
            except RelayoutError as exc:  # this one stays as the level has it
                self.errors[i] = str(exc)
                accesses.append(acc)
        return accesses

    def _analyse(self) -> None:
        acc = self.current()
        self._report = None if acc is None else acc.banks()
        self._cells = {} if self._report is None else bank_cells(self._report)
        self.update()

    def bank_state(self, bank: int) -> str:
        """'conflict', 'ok' or 'unused': the colour name of a bank's header."""
        rep = self._report
        if rep is None or not rep.load[:, bank].any():
            return "unused"
        return "conflict" if (rep.load[:, bank] > 1).any() else "ok"

    # -- geometry -------------------------------------------------------------------
    # The picture, top to bottom: the summary (three lines), the bank headers, the rows of
    # cells (a wavefront each, a blank row between phases), the lane row, and the legend
    # saying what a column, a row and a phase are. The rows grow with the room (up to
    # MAX_ROW_LINES lines each) and the headers-cells-lanes block is centred in what is
    # left, so a tall canvas shows a larger picture, not an empty band.
    def _grid(self) -> tuple[float, float, float]:
        """(left, column width, row height), worked out once per size, type and report
        (every cell and label of a paint asks)."""
        self._layout()
        return self._grid_of[1]

    def _layout(self) -> None:
        line = self.line_px()
        legend = self.legend_text()
        key = (self.width(), self.height(), line, self._rows(), legend)
        if self._grid_of[0] == key:
            return
        rows = max(1, key[3])
        left = self.text_px("lane") + 10
        col_w = (self.width() - left - 10) / N_BANKS
        top = self._summary_bottom()
        # header, gap, cells, gap, lanes
        fixed = line + CELLS_GAP_PX + LANES_GAP_PX + line
        legend_h = self._legend_height(legend)
        room = self.height() - BOTTOM_PX - top - fixed
        # the legend where the rows still get a line each beside it, else left out
        if legend_h and room - legend_h - LEGEND_GAP_PX < rows * line:
            legend_h = 0.0
        if legend_h:
            room -= legend_h + LEGEND_GAP_PX
        row_h = max(10.0, min(MAX_ROW_LINES * line, room / rows))
        spare = max(0.0, room - rows * row_h)
        headers_top = top + spare / 2
        lanes_top = headers_top + line + CELLS_GAP_PX + rows * row_h + LANES_GAP_PX
        # (never under the canvas: with many rows at the smallest height, the lanes at
        # the bottom as before)
        lanes_top = min(lanes_top, self.height() - BOTTOM_PX - line
                        - (legend_h + LEGEND_GAP_PX if legend_h else 0.0))
        self._places = (headers_top, lanes_top, legend_h)
        self._grid_of = (key, (left, col_w, row_h))

    def _summary_bottom(self) -> float:
        return 4 + 3 * self.line_px() + 4  # under the three lines of the summary

    def _headers_top(self) -> float:
        self._layout()
        return self._places[0]

    def _cells_top(self) -> float:
        return self._headers_top() + self.line_px() + CELLS_GAP_PX

    def _rows(self) -> int:
        rep = self._report
        if rep is None:
            return 0
        if self._rows_of[0] is not rep:  # counted once per report, not per cell drawn
            self._rows_of = (rep, int(rep.load.max(axis=1).sum()) + rep.phases - 1)
        return self._rows_of[1]

    def legend_text(self) -> str:
        """What the picture's columns, rows, cells and phases are, for the instruction
        shown ("" with none)."""
        rep = self._report
        if rep is None:
            return ""
        if rep.phases > 1:
            width = WIDTH_NAMES.get(rep.width_bytes, "wide")
            phase = (f"A phase (ph0-ph{rep.phases - 1}): the {counted(rep.phase_lanes, 'lane')} "
                     f"the hardware serves together for a {width} access; the phases are "
                     "served one after another, a blank row apart.")
        else:
            phase = "One phase (ph0): all 32 lanes are served together."
        return ("A column: one of the 32 banks (a 4-byte word's bank is its address / 4 "
                "mod 32). A row: one wavefront, a pass in which each bank serves one "
                "word; a cell: a word a lane touches, numbered by its lane (12+3: lane "
                f"12 and 3 more read one word, a broadcast). {phase} Two different words "
                "in one bank within a phase: a conflict (red), one wavefront more.")

    def _legend_height(self, text: str) -> float:
        """The legend's height wrapped to the canvas at the canvas font (0: none)."""
        if not text:
            return 0.0
        rect = QRectF(10, 0, max(self.width() - 20, 40), 10_000)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
                    | Qt.TextFlag.TextWordWrap)
        return float(self._metrics().boundingRect(rect, flags, text).height()) + 2

    def legend_rect(self) -> QRectF | None:
        """Where the legend is drawn (None: left out for want of room)."""
        self._layout()
        legend_h = self._places[2]
        if not legend_h:
            return None
        return QRectF(10, self.lane_rect(0).bottom() + LEGEND_GAP_PX,
                      self.width() - 20, legend_h)

    def bank_header_rect(self, bank: int) -> QRectF:
        left, w, _ = self._grid()
        return QRectF(left + bank * w, self._headers_top(), w - 1, self.line_px())

    def cell_rect(self, phase: int, rank: int, bank: int) -> QRectF:
        left, w, h = self._grid()
        rep = self._report
        assert rep is not None
        row = wavefront_index(rep, phase, rank) + phase  # one blank row between phases
        return QRectF(left + bank * w, self._cells_top() + row * h, w - 1, h - 1)

    def lane_rect(self, lane: int) -> QRectF:
        left, w, _ = self._grid()
        return QRectF(left + lane * w, self._places[1], w - 1, self.line_px())

    # -- drawing --------------------------------------------------------------------
    def draw(self, painter: QPainter) -> None:
        self.draw_summary(painter)
        self.draw_bank_headers(painter)
        self.draw_cells(painter)
        self.draw_lanes(painter)
        self.draw_legend(painter)

    def draw_legend(self, painter: QPainter) -> None:
        rect = self.legend_rect()
        if rect is not None:
            self.draw_text(painter, rect, self.legend_text(), "muted_text", wrap=True,
                           optional=True)

    def draw_summary(self, painter: QPainter) -> None:
        acc, rep = self.current(), self._report
        if acc is None or rep is None:
            others = self.warps_with_accesses()
            text = (f"warp {self.warp} issues no shared-memory instruction here; warps "
                    f"{others[0]}-{others[-1]} do" if others else
                    f"{self.level_id} uses no shared memory: nothing reaches the banks "
                    "(see the coalescing view).")
            self.draw_text(painter, QRectF(10, 8, self.width() - 20, 3 * self.line_px()), text,
                           "muted_text", wrap=True)
            return
        kind = {"ld": "load", "st": "store", "ldgsts": "cp.async write"}[acc.op.value]
        head = (f"{acc.label}   [{WIDTH_NAMES.get(acc.width_bytes, '?')} {kind}, "
                f"warp {self.warp}, K step {self.k_step + 1}]")
        verdict = (f"{rep.n_way}-way conflict: {rep.wavefronts} wavefronts, ideal "
                   f"{rep.ideal}, {rep.conflicts} conflicts" if rep.conflicts else
                   f"no conflict: {rep.wavefronts} wavefront(s), the ideal")
        if rep.width_bytes > 4:
            verdict += (f"; {counted(rep.phases, 'phase')} of "
                        f"{counted(rep.phase_lanes, 'lane')}")
            if rep.width_bytes == 16 and rep.phase_lanes == 16:
                verdict += " (lane pairs read the same float4)"
        line = self.line_px()
        self.draw_text(painter, QRectF(10, 4, self.width() - 20, line), head)
        self.draw_text(painter, QRectF(10, 4 + line, self.width() - 20, line), verdict,
                       "conflict" if rep.conflicts else "ok")
        ld_wf, ld_cf = self.step_summary()
        self.draw_text(painter, QRectF(10, 4 + 2 * line, self.width() - 20, line),
                       f"all shared loads of this warp in this K step: {ld_wf} wavefronts, "
                       f"{ld_cf} conflicts", "muted_text")

    def step_summary(self) -> tuple[int, int]:
        """(wavefronts, conflicts) of every shared load of the warp in this K step, under
        the layout shown (padding and swizzle included). Kept until the accesses change
        (a reload makes a new list): every paint asks, and analysing them all took ~30
        bank analyses a frame."""
        if self._summary[0] is not self.accesses:
            wf = cf = 0
            for acc in self.accesses:
                if acc.op is Op.LOAD:
                    rep = acc.banks()
                    wf, cf = wf + rep.wavefronts, cf + rep.conflicts
            self._summary = (self.accesses, (wf, cf))
        return self._summary[1]

    def draw_bank_headers(self, painter: QPainter) -> None:
        if self._report is None:
            return
        for b in range(N_BANKS):
            rect = self.bank_header_rect(b)
            state = self.bank_state(b)
            painter.fillRect(rect, ANIMATION.color(state if state != "unused" else "unused"))
            label = str(b)
            if state == "conflict":
                label = f"{int(self._report.load[:, b].max())}×"
            self.draw_text(painter, rect, label, "text", Qt.AlignmentFlag.AlignCenter,
                           on=ANIMATION.color(state))

    def draw_cells(self, painter: QPainter) -> None:
        rep = self._report
        if rep is None:
            return
        served = self.progress * rep.wavefronts
        for (p, b, r), lanes in self._cells.items():
            rect = self.cell_rect(p, r, b)
            color = QColor(ANIMATION.lane(lanes[0]))
            if wavefront_index(rep, p, r) >= served:
                color.setAlpha(70)
            painter.fillRect(rect, color)
            if rep.load[p, b] > 1:
                painter.setPen(QPen(ANIMATION.color("conflict"), 2))
                painter.drawRect(rect.adjusted(1, 1, -1, -1))
            if self.selected_lane in lanes:
                painter.setPen(QPen(ANIMATION.color("selection"), 2))
                painter.drawRect(rect.adjusted(2, 2, -2, -2))
            self.draw_cell_lanes(painter, rect, lanes, color)
        left, _, h = self._grid()
        for p in range(rep.phases):
            if rep.load[p].any():
                y = self.cell_rect(p, 0, 0).top()
                place = QRectF(2, y, left - 4, h)
                flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                # "ph1", else "1" where the rows are too low for it; else the tooltip
                label = f"ph{p}" if self._fitting_size(place, f"ph{p}", flags) > 0 else str(p)
                if self._fitting_size(place, label, flags) < 0:
                    self._cut_places.append((QRectF(place), f"phase {p}"))
                self.draw_text(painter, place, label, "muted_text", optional=True)

    def draw_cell_lanes(self, painter: QPainter, rect: QRectF, lanes: list[int],
                        fill: QColor) -> None:
        """The lanes served by a cell: "12", or "12+3" where 4 lanes read one word (a
        broadcast). Where "12+3" does not fit, "12" and a tooltip naming them all; in
        black or white, whichever reads on the cell's ``fill``."""
        black, center = QColor("black"), Qt.AlignmentFlag.AlignCenter
        if len(lanes) > 1:
            full = f"{lanes[0]}+{len(lanes) - 1}"
            if self._fitting_size(rect, full, int(center | Qt.AlignmentFlag.AlignVCenter)) > 0:
                self.draw_text(painter, rect, full, black, center, on=fill)
                return
            self._cut_places.append((QRectF(rect), "one word, read by lanes "
                                     + ", ".join(map(str, lanes))))
        elif self._fitting_size(rect, str(lanes[0]),
                                int(center | Qt.AlignmentFlag.AlignVCenter)) < 0:
            # a cell too small for its lane's number (many wavefronts on a small stage):
            # the lane's colour and the lane row above say it; the tooltip names it
            self._cut_places.append((QRectF(rect), f"lane {lanes[0]}"))
        self.draw_text(painter, rect, str(lanes[0]), black, center, optional=True, on=fill)

    def draw_lanes(self, painter: QPainter) -> None:
        rep = self._report
        if rep is None:
            return
        left, _, _ = self._grid()
        self.draw_text(painter, QRectF(2, self.lane_rect(0).top(), left - 4,
                                       self.lane_rect(0).height()), "lane", "muted_text")
        for lane in range(32):
            rect = self.lane_rect(lane)
            if not rep.active[lane]:
                painter.fillRect(rect, ANIMATION.color("unused"))
                continue
            painter.fillRect(rect, ANIMATION.lane(lane))
            self.draw_text(painter, rect, str(lane), QColor("black"),
                           Qt.AlignmentFlag.AlignCenter, on=ANIMATION.lane(lane))
            if lane == self.selected_lane:
                target = self.cell_rect(int(rep.lane_phase[lane]),
                                        int(rep.lane_wavefront[lane]),
                                        int(rep.lane_bank[lane]))
                painter.setPen(QPen(ANIMATION.color("selection"), 2))
                painter.drawLine(QPointF(rect.center().x(), rect.top()),
                                 QPointF(target.center().x(), target.bottom()))

    # -- mouse ----------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        for lane in range(32):
            if self.lane_rect(lane).contains(pos):
                self.select_lane(None if self.selected_lane == lane else lane)
                return
        for (p, b, r), lanes in self._cells.items():
            if self.cell_rect(p, r, b).contains(pos):
                self.select_lane(lanes[0])
                return
        super().mousePressEvent(event)


class BanksView(WarpAccessView):
    def __init__(self, level_id: str = "register_2d", parent: QWidget | None = None) -> None:
        pad_check, pad_box = QCheckBox("pad rows by"), QSpinBox()
        swizzle_check = QCheckBox("XOR swizzle B,M,S")
        swz_boxes = [QSpinBox() for _ in range(3)]
        canvas = BanksCanvas(level_id)
        super().__init__(canvas, [labelled("", pad_check, pad_box),
                                  labelled("", swizzle_check, *swz_boxes)], parent)
        self.store: SessionStore | None = None
        self.counters = CountersPanel()
        self.links = ConflictLinks()
        self.links.chosen.connect(self._open_code)
        self._show_code_line: Callable[[str, str, int], bool] | None = None
        lay = self.layout()
        assert isinstance(lay, QVBoxLayout)
        # the table can be taller than a small screen leaves it: it scrolls
        self.counters_area = scrolling(self.counters)
        lay.insertWidget(lay.indexOf(self.message), self.counters_area)
        lay.insertWidget(lay.indexOf(self.message), self.links)
        self.optional.insert(0, self.counters_area)
        self.optional.insert(1, self.links)
        self.pad_check, self.pad_box = pad_check, pad_box
        self.swizzle_check, self.swz_boxes = swizzle_check, swz_boxes
        self.pad_box.setRange(1, 32)
        self.pad_box.setValue(1)
        for box, value in zip(self.swz_boxes, (3, 2, 3), strict=True):
            box.setRange(0, 12)
            box.setValue(value)
        self.pad_check.toggled.connect(self._on_layout)
        self.pad_box.valueChanged.connect(self._on_layout)
        self.swizzle_check.toggled.connect(self._on_layout)
        for box in self.swz_boxes:
            box.valueChanged.connect(self._on_layout)
        canvas.stepChanged.connect(self._show_message)
        self.set_level(level_id)

    def bind(self, store: SessionStore) -> None:
        """The session whose counters (ncu) are shown beside the model."""
        self.store = store
        self._show_counters()

    def refresh(self, changes: set[Change]) -> None:
        if changes & {Change.COUNTERS, Change.HEADER}:
            self._show_counters()

    def set_level(self, level_id: str) -> bool:
        followed = super().set_level(level_id)
        self._show_counters()
        return followed

    def bind_navigation(self, show_code_line: Callable[[str, str, int], bool]) -> None:
        self._show_code_line = show_code_line

    def _show_counters(self) -> None:
        self.counters.show_level(self.store, self.banks.level_id)
        level_id = self.banks.level_id
        event = self.store.source_counters.get(level_id) if self.store is not None else None
        build = self.store.build_for(level_id) if self.store is not None else None
        coming = self.store is not None and self.store.not_replayed_yet("source_counters",
                                                                        level_id)
        self.links.show_rows(level_id, event, conflict_lines(event, build), coming)

    def _open_code(self, path: str, line_no: int) -> None:
        """A conflicting line was chosen: the Code view at its source line."""
        if self._show_code_line is not None:
            self._show_code_line(self.banks.level_id, path, line_no)

    @property
    def banks(self) -> BanksCanvas:
        assert isinstance(self.canvas, BanksCanvas)
        return self.canvas

    def select_instruction(self, start: str) -> int:
        """Show the first instruction whose label starts with ``start``; its index."""
        for i, acc in enumerate(self.banks.accesses):
            if acc.label.startswith(start):
                self.banks.set_step(i)
                return i
        raise KeyError(start)

    def _message(self) -> str:
        error = self.banks.layout_error
        return f"⚠ kept as written: {error}" if error else self.banks.model.notes

    def _show_message(self, *_: object) -> None:
        self.message.setText(self._message())

    def _on_layout(self, *_: object) -> None:
        self.banks.extra_pad = self.pad_box.value() if self.pad_check.isChecked() else 0
        swz = IDENTITY
        if self.swizzle_check.isChecked():
            b, m, s = (box.value() for box in self.swz_boxes)
            try:
                swz = Swizzle(b, m, s)
            except ValueError as exc:
                self.message.setText(str(exc))
                return
        self.banks.set_swizzle(swz)  # reloads with the padding too

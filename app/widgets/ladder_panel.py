"""The ladder panel: every level with its numbers at the shape and in the mode shown, what
the selected one adds, and the selectors of the view state (shape, mode, GPU).

The selectors and the table write the window's view state (``store.view``); the panel
shows what the state says, so a replay that brings more shapes adds them to the shape
selector without changing the one chosen."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...kernels.ladder import Shape
from ...kernels.protocol import THROTTLE_MARK, Mode
from ...kernels.results import (
    DASH,
    NOT_THROTTLED,
    NUMBER_COLUMNS,
    THROTTLE_COLUMNS,
    Column,
    not_run_texts,
    params_ran,
    sustained_texts,
)
from ..core.baseline_run import baseline_cell, baseline_details, baseline_text
from ..core.levels import LevelInfo, cannot_run_here
from ..core.recording_contents import NOT_REPLAYED  # a result the replay has not reached
from ..core.store import Change, SessionStore
from ..core.view_state import shape_text, sorted_shapes
from ..theme import FAILED_COLOR, THROTTLE_COLOR, precision_color
from .fitting import FittedColumns, scrolling
from .plain import plain_tooltip

COLUMNS = (Column.LEVEL, Column.PRECISION, Column.SHAPE, Column.TFLOPS,
           Column.SUSTAINED_TFLOPS, Column.POWER_LIMITED,
           Column.PCT_OF_REFERENCE, Column.BASELINE, Column.PCT_OF_PEAK, Column.SM_CLOCK,
           Column.ENERGY, Column.GFLOP_PER_J,
           Column.THROTTLED, Column.VERIFIED)
# the columns a narrow panel keeps, most wanted first (the rest show as it widens: at
# 1280x720 the level, TFLOPS, % of cuBLAS and verified; at 1920x1080, where the window
# widens the dock (presentation.fit_side_docks), the precision, SM clock and energy too;
# the shape last: the selector above the table says it)
PRIORITY = (Column.LEVEL, Column.TFLOPS, Column.PCT_OF_REFERENCE, Column.VERIFIED,
            Column.BASELINE,
            Column.PRECISION, Column.SM_CLOCK, Column.ENERGY, Column.PCT_OF_PEAK,
            Column.SUSTAINED_TFLOPS, Column.POWER_LIMITED, Column.THROTTLED,
            Column.GFLOP_PER_J, Column.SHAPE)
# while a baseline recording is open it is what the person opened it for: its column
# comes right after TFLOPS, ahead of % of cuBLAS and verified (the default dock at
# 1280x720 has room for three numbers beside the level, not four)
BASELINE_PRIORITY = (Column.LEVEL, Column.TFLOPS, Column.BASELINE,
                     *(c for c in PRIORITY if c not in (Column.LEVEL, Column.TFLOPS,
                                                        Column.BASELINE)))
MARKED_COLUMNS = (*THROTTLE_COLUMNS, Column.THROTTLED)  # orange, with the note, if throttled
SUSTAINED_COLUMNS = (Column.SUSTAINED_TFLOPS, Column.POWER_LIMITED)  # tooltip: the run


class LadderPanel(QWidget):
    level_selected = Signal(str)
    device_changed = Signal(int)  # the GPU whose ladder is shown (several in a session)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.store: SessionStore | None = None
        self.level_ids: list[str] = []
        # per level, what its row was last filled from (results compared by identity: a
        # store keeps a result object as it is), so an unchanged row costs no texts
        self._filled_from: dict[str, tuple[object, ...]] = {}
        # which GPU's ladder (and stream, telemetry): shown only with several GPUs
        self.device_box = QComboBox()
        self.device_box.setToolTip("the GPU whose ladder, run stream and telemetry are shown")
        self.device_box.setVisible(False)
        self.device_box.activated.connect(self._device_chosen)
        self._device_ids: list[int] = []
        # the shape and the mode the table, the charts and the exports show
        self.shape_box = QComboBox()
        self.shape_box.setObjectName("shape_box")
        self.shape_box.setToolTip("the shape every table, chart and export shows "
                                  "([ and ]: smaller, larger)")
        self.shape_box.activated.connect(self._shape_chosen)
        self._shapes: list[Shape] = []
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("mode_box")
        self.mode_box.addItems(list(Mode))
        self.mode_box.setToolTip("burst or sustained results (M switches)")
        self.mode_box.activated.connect(self._mode_chosen)
        for box in (self.shape_box, self.mode_box):  # they never widen the panel
            box.setMinimumContentsLength(3)
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        # sized to contents when texts change, not on every update (that is slow)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._header_tip(Column.PCT_OF_REFERENCE,
                         "against cuBLAS of the same precision at the same shape")
        self._header_tip(Column.ENERGY, "energy of one GEMM: NVML energy counter over the "
                         "timed repeats, divided by the repeats")
        self._header_tip(Column.BASELINE, "the baseline recording's TFLOPS (File ▸ Open "
                         "baseline…) and this session's change against it; its tooltip has "
                         "every compared value and what differs between the two runs")
        self._header_tip(Column.SM_CLOCK, "the SM clock (NVML), averaged over the timed "
                         "repeats")
        self._header_tip(Column.GFLOP_PER_J, "2·M·N·K / 10⁹ per joule of one GEMM")
        self._header_tip(Column.SUSTAINED_TFLOPS, "launched back to back for seconds "
                         "(sustained mode, median over trials) at the same shape")
        self._header_tip(Column.POWER_LIMITED, "the sustained run hit the power cap "
                         "(SwPowerCap) or its SM clock fell more than 5% under the max; "
                         "the percentage is sustained against burst TFLOPS")
        self._header_tip(Column.THROTTLED, f"{THROTTLE_MARK}: clocks were held back during "
                         "the run; its numbers are orange (their tooltips say why)")
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.fitted = FittedColumns(self.table, [COLUMNS.index(c) for c in PRIORITY])
        self._asked_columns: tuple[str, ...] | None = None  # the stage's, or all
        self._baseline_shown = False
        self._allow_columns()  # no baseline yet: its column hidden
        self.detail = QLabel("Select a level to see what it adds.")
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.detail.setMargin(6)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(scrolling(self.detail))  # a long description scrolls, never cut
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        # one row, no labels (the texts say what they are: "4096³", "burst"; the tooltips
        # and the keys [ ] M say more), so the panel stays as narrow as the stage's table
        choices = QHBoxLayout()
        choices.setContentsMargins(2, 2, 2, 2)
        for name, box in (("shape shown", self.shape_box), ("mode shown", self.mode_box)):
            box.setAccessibleName(name)
            choices.addWidget(box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(choices)
        layout.addWidget(self.device_box)
        layout.addWidget(split)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # presentation mode: wider columns
            self.fit_columns()

    def show_columns(self, columns: tuple[str, ...] | None) -> None:
        """Show only ``columns`` (None: every column), as many as fit (PRIORITY); on
        stage the table keeps the columns that tell the story. The baseline's column
        shows only while a baseline recording is open, and then right after TFLOPS
        (BASELINE_PRIORITY)."""
        self._asked_columns = columns
        self._allow_columns()

    def _allow_columns(self) -> None:
        columns = self._asked_columns
        allowed = set(range(len(COLUMNS))) if columns is None else \
            {COLUMNS.index(c) for c in columns if c in COLUMNS}
        self._baseline_shown = self.store is not None and self.store.baseline is not None
        if not self._baseline_shown:
            allowed.discard(COLUMNS.index(Column.BASELINE))
        priority = BASELINE_PRIORITY if self._baseline_shown else PRIORITY
        self.fitted.priority = [COLUMNS.index(c) for c in priority]
        self.fitted.allow(allowed)

    def fit_columns(self) -> None:
        """Columns as wide as their contents, those that fit shown (FittedColumns)."""
        self.table.resizeColumnsToContents()
        self.fitted.fit()

    def needed_width(self) -> int:
        """The width that shows every column allowed whole (and the vertical scroll bar)."""
        t = self.table
        allowed = self.fitted.allowed
        columns = sum(self.fitted.width_of(i) for i in range(t.columnCount())
                      if allowed is None or i in allowed)
        return columns + t.verticalScrollBar().sizeHint().width() + 2 * t.frameWidth() + 4

    def width_within(self, most: int) -> int:
        """The width that shows whole the most wanted columns that fit in ``most`` pixels
        (at least the first), and the vertical scroll bar: a dock widened to it has no
        empty strip right of the last column."""
        t = self.table
        extra = t.verticalScrollBar().sizeHint().width() + 2 * t.frameWidth() + 4
        used = 0
        allowed = self.fitted.allowed
        for column in self.fitted.priority:
            if allowed is not None and column not in allowed:
                continue
            width = self.fitted.width_of(column)
            if used and used + width + extra > most:
                break
            used += width
        return used + extra

    def _header_tip(self, column: Column, text: str) -> None:
        header = self.table.horizontalHeaderItem(COLUMNS.index(column))
        assert header is not None  # (every column has its header item)
        header.setToolTip(text)

    def bind(self, store: SessionStore) -> None:
        self.store = store

    # ------------------------------------------------------------- selection
    def selected_level(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.level_ids[rows[0].row()]

    def select_level(self, level_id: str) -> None:
        if level_id in self.level_ids:
            self.table.selectRow(self.level_ids.index(level_id))

    def step(self, offset: int) -> None:
        """Select the previous (-1) or next (+1) level."""
        if not self.level_ids:
            return
        current = self.selected_level()
        i = self.level_ids.index(current) if current in self.level_ids else -offset
        self.table.selectRow(min(max(i + offset, 0), len(self.level_ids) - 1))

    def _selection_changed(self) -> None:
        level_id = self.selected_level()
        if level_id is None:
            return
        self._show_detail(level_id)
        self.level_selected.emit(level_id)
        if self.store is not None:
            self.store.view.set(level=level_id)

    def show_state(self) -> None:
        """Select the view state's level, where the table has it (a level named before
        the recording's header came is selected once its row exists)."""
        if self.store is None:
            return
        level = self.store.view.state.level
        if level in self.level_ids and self.selected_level() != level:
            self.select_level(level)

    # ------------------------------------------------------------- shape and mode
    def shape_texts(self) -> list[str]:
        return [self.shape_box.itemText(i) for i in range(self.shape_box.count())]

    def _shape_chosen(self, index: int) -> None:
        if self.store is not None and 0 <= index < len(self._shapes):
            self.store.view.set(shape=self._shapes[index])

    def _mode_chosen(self, index: int) -> None:
        if self.store is not None and index >= 0:
            self.store.view.set(mode=self.mode_box.itemText(index))

    def _fill_choices(self) -> None:
        """The session's shapes so far (and the chosen one, said when it has no result
        yet), smallest first; the chosen shape and mode current."""
        assert self.store is not None
        store = self.store
        chosen = store.ladder_shape()
        shapes = sorted_shapes([*store.shapes(), *([chosen] if chosen else [])])
        texts = []
        for shape in shapes:
            text = shape_text(shape)
            if shape not in store.levels_at():
                coming = store.coming()
                text += " (not replayed yet)" if coming is not None and \
                    shape in coming.levels_at else " (no results)"
            texts.append(text)
        if shapes != self._shapes or texts != self.shape_texts():
            self._shapes = shapes
            self.shape_box.clear()
            self.shape_box.addItems(texts)  # plain text: a QComboBox renders no markup
        if chosen in shapes:
            self.shape_box.setCurrentIndex(shapes.index(chosen))
        self.mode_box.setCurrentText(store.mode)

    # --------------------------------------------------------------- drawing
    def shown_device_text(self) -> str:
        """Which GPU the ladder shows ("" with one GPU in the session)."""
        return self.device_box.currentText() if not self.device_box.isHidden() else ""

    def _device_chosen(self, index: int) -> None:
        if self.store is not None and 0 <= index < len(self._device_ids):
            self.store.view.set(device=self._device_ids[index])
            self.device_changed.emit(self._device_ids[index])

    def _fill_devices(self) -> None:
        assert self.store is not None
        ids = self.store.device_ids()
        texts = [f"Ladder of {self.store.device_text(d)}" for d in ids]
        if ids != self._device_ids or texts != [self.device_box.itemText(i)
                                                for i in range(self.device_box.count())]:
            self._device_ids = ids
            self.device_box.clear()
            self.device_box.addItems(texts)  # plain text: a QComboBox renders no markup
        if self.store.device in ids:
            self.device_box.setCurrentIndex(ids.index(self.store.device))
        self.device_box.setVisible(len(ids) > 1)

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None:
            return
        if Change.HEADER in changes or Change.LADDER in changes:
            self._fill_devices()
            self._fill_choices()
        if Change.HEADER in changes or len(self.level_ids) != len(self.store.levels):
            self._rebuild_rows()
        if changes & {Change.LADDER, Change.HEADER}:
            self._fill_numbers()
        self.show_state()

    def _rebuild_rows(self) -> None:
        assert self.store is not None
        selected = self.selected_level()
        levels = self.store.levels
        self.level_ids = [lv.id for lv in levels]
        self._filled_from.clear()
        self.table.setRowCount(len(levels))
        for row, lv in enumerate(levels):
            name = QTableWidgetItem(lv.id)
            name.setToolTip(plain_tooltip(lv.title))
            if lv.is_reference:
                font = QFont()
                font.setItalic(True)
                name.setFont(font)
            self.table.setItem(row, 0, name)
            prec = QTableWidgetItem(lv.precision.upper())
            prec.setForeground(QBrush(QColor(precision_color(lv.precision))))
            self.table.setItem(row, 1, prec)
            for col in range(2, len(COLUMNS)):
                self.table.setItem(row, col, QTableWidgetItem(""))
        self.fit_columns()
        if selected in self.level_ids:
            self.select_level(selected)

    def _fill_numbers(self) -> None:
        assert self.store is not None
        store = self.store
        changed = False
        clock = store.sm_clock_max_mhz()
        shape, coming = store.ladder_shape(), store.coming()
        for row_index, level_id in enumerate(self.level_ids):
            r = store.ladder_result(level_id)
            burst = store.burst_result(level_id, shape)
            sustained = store.sustained_result(level_id, shape) if shape else None
            later = coming is not None and r is None and \
                coming.has_result(level_id, shape, store.mode, store.device)
            against = baseline_text(store, level_id)  # None without a baseline
            source = (r, burst, sustained, clock, later,
                      None if r is None else store.reference_result(r),
                      None if r is None else store.peak_tflops(r.precision), against)
            last = self._filled_from.get(level_id)
            if last is not None and all(a is b or a == b for a, b in zip(last, source,
                                                                         strict=True)):
                continue  # the same results against the same references: the same texts
            self._filled_from[level_id] = source
            note = tip = ref_note = sustained_note = ""
            failed = False
            if r is None:
                lv = store.level(level_id)
                texts = not_run_texts(level_id, lv.precision if lv is not None else "?")
                if later:  # the recording has it; the replay has not reached it
                    texts[Column.VERIFIED] = NOT_REPLAYED
                texts.update(sustained_texts(burst, sustained, clock))
            else:
                row = store.row(r)
                texts = row.texts()
                note = row.throttle_note(clock)  # marks the cells orange
                # the tooltip also says where the launches changed speed mid-burst
                tip = "\n".join(text for text in (note, row.step_note()) if text)
                ref_note = f"vs {row.reference}" if row.reference else \
                    f"no cuBLAS {r.precision.upper()} result at {r.shape}"
                clocks = row.clock_comparison()  # a ratio across clocks is partly the clock
                if clocks is not None:
                    ref_note += ", same SM clock" if clocks == "same" else f", {clocks}"
                failed = not r.verified
                texts.update(sustained_texts(burst, sustained, clock))
                if sustained is not None:
                    sustained_note = "sustained: " + store.row(sustained).summary()
            self._item(row_index, COLUMNS.index(Column.PCT_OF_REFERENCE)
                            ).setToolTip(plain_tooltip(ref_note))
            texts[Column.BASELINE] = baseline_cell(store, level_id)
            self._item(row_index, COLUMNS.index(Column.BASELINE)).setToolTip(
                plain_tooltip("\n".join(baseline_details(store, level_id))))
            if against is not None:  # on the name: the TFLOPS cell's tooltip is its note
                lv = store.level(level_id)
                title = lv.title if lv is not None else level_id
                self._item(row_index, 0).setToolTip(plain_tooltip(f"{title}\n{against}"))
            for column in COLUMNS[2:]:
                item = self._item(row_index, COLUMNS.index(column))
                text = texts[column]
                restyle = item.text() != text
                if column in MARKED_COLUMNS and item.toolTip() != plain_tooltip(tip):
                    item.setToolTip(plain_tooltip(tip))
                    restyle = True  # marked or unmarked, the text may be the same
                if column in SUSTAINED_COLUMNS and \
                        item.toolTip() != plain_tooltip(sustained_note):
                    item.setToolTip(plain_tooltip(sustained_note))
                if not restyle:
                    continue
                changed = True
                item.setText(text)
                align = Qt.AlignmentFlag.AlignRight if column in NUMBER_COLUMNS else \
                    Qt.AlignmentFlag.AlignLeft
                item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
                color = None
                if column == Column.VERIFIED and failed:
                    color = FAILED_COLOR
                elif column in MARKED_COLUMNS and note:
                    color = THROTTLE_COLOR
                elif column == Column.POWER_LIMITED and text not in (DASH, NOT_THROTTLED):
                    color = THROTTLE_COLOR
                item.setData(Qt.ItemDataRole.ForegroundRole,
                             QBrush(QColor(color)) if color else None)
        if (store.baseline is not None) != self._baseline_shown:
            self._allow_columns()  # a baseline opened: its column shows
        if changed:
            self.fit_columns()
            current = self.selected_level()
            if current is not None:
                self._show_detail(current)  # its "last result" may have changed

    def _item(self, row: int, column: int) -> QTableWidgetItem:
        item = self.table.item(row, column)
        assert item is not None  # (every cell of a level's row is made with the row)
        return item

    def cell_text(self, level_id: str, column: str) -> str:
        """The text shown for a level in a column (for tests and exports)."""
        return self.cell(level_id, column).text()

    def cell(self, level_id: str, column: str) -> QTableWidgetItem:
        return self._item(self.level_ids.index(level_id), COLUMNS.index(column))

    def _show_detail(self, level_id: str) -> None:
        assert self.store is not None
        lv: LevelInfo | None = self.store.level(level_id)
        if lv is None:
            return
        index = self.store.levels.index(lv)
        # a user's kernel adds to no level before it: it says what it is
        previous = self.store.levels[index - 1].id if index > 0 and not lv.is_reference \
            and not lv.is_user else None
        # a recording's catalog is data: every text from it is escaped, never markup
        esc = html.escape
        over = f" over <i>{esc(previous)}</i>" if previous else ""
        parts = [f"<b>{esc(lv.title)}</b> ({esc(lv.precision.upper())})",
                 f"<p><b>Adds{over}:</b> {esc(lv.adds)}</p>",
                 f"<p><b>Tile parameters:</b> {esc(lv.params_text())}</p>"]
        if lv.arch_need:
            device = self.store.device_entry(self.store.device)
            why = cannot_run_here(lv, device.cc if device is not None else None)
            parts.append(f"<p><b>Needs:</b> {esc(lv.arch_need)}"
                         + (f" (<b>cannot run on this GPU</b>: {esc(why)})" if why else "")
                         + "</p>")
        if lv.follows:
            parts.append(f"<p><b>Follows:</b> {esc(lv.follows)}</p>")
        if lv.notes:
            parts.append(f"<p><b>Notes:</b> {esc(lv.notes)}</p>")
        r = self.store.ladder_result(level_id)
        if r is not None:
            parts.append(f"<p><b>Last result:</b> {esc(self.store.row(r).summary())}</p>")
            ran = params_ran(r, lv.params)  # given by the run, or the level's pick
            if ran:
                parts.append(f"<p><b>This run used:</b> {esc(ran)}</p>")
            sustained = self.store.sustained_result(level_id, r.shape)
            if sustained is not None and sustained is not r:
                parts.append(f"<p><b>Sustained:</b> "
                             f"{esc(self.store.row(sustained).summary())}</p>")
        against = baseline_text(self.store, level_id)
        if against is not None:
            parts.append(f"<p><b>Baseline:</b> {esc(against)}</p>")
        self.detail.setText("".join(parts))

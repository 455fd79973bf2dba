"""The Code tab: inside the selected level, from its ``build`` event.

Its source (highlighted), a side-by-side diff against the previous level of the ladder, the
main loop's SASS coloured by instruction class (clicking a source line selects the
instructions compiled from it), the occupancy and what would change it, and the main-loop
instruction mix of every level. A recording made before build events existed says so.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..core import builds
from ..core.store import Change, SessionStore
from ..plots.instruction_mix import InstructionMixChart
from ..theme import Theme
from ..widgets.fitting import scrolling
from .base import View
from .code_panels import DiffPanel, SassPanel, SourcePanel


def plain_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # recording text is data, never markup
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class CodeView(QWidget, View):
    """Registered as the view ``code``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store: SessionStore | None = None
        self.level_id: str | None = None
        # (not "event": that name would shadow QWidget.event(), which Qt calls)
        self.build: dict[str, Any] | None = None
        self.source_path: str | None = None
        self._mix_drawn: tuple[list[Any], str | None] | None = None
        self.notice = plain_label()
        self.file_box = QComboBox()
        self.file_box.currentTextChanged.connect(self._show_file)
        self.source = SourcePanel()
        self.source.line_clicked.connect(self.select_source_line)
        self.diff = DiffPanel()
        self.tabs = QTabWidget()
        self.tabs.addTab(_column(self.file_box, self.source), "Source")
        self.tabs.addTab(self.diff, "Diff")
        self.sass_title = plain_label("SASS of the main loop")
        self.sass = SassPanel()
        sass_box = _column(self.sass_title, self.sass)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.tabs)
        top.addWidget(sass_box)
        self.occupancy = plain_label()
        self.mix = InstructionMixChart()
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(scrolling(self.occupancy))  # long on a short screen: it scrolls
        bottom.addWidget(self.mix)
        bottom.setStretchFactor(1, 2)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QGridLayout(self)
        layout.addWidget(self.notice, 0, 0)
        layout.addWidget(split, 1, 0)
        layout.setRowStretch(1, 1)
        self._show()

    # ------------------------------------------------------------------ View
    def bind(self, store: SessionStore) -> None:
        self.store = store
        self._show()

    def refresh(self, changes: set[Change]) -> None:
        if changes & {Change.BUILD, Change.HEADER}:
            self.build = None  # redraw all: the previous level's build may be new
        if changes & {Change.BUILD, Change.HEADER, Change.LADDER}:
            self._show()

    def set_level(self, level_id: str) -> bool:
        if level_id != self.level_id:
            self.level_id = level_id
            self._show()
        return True

    def charts(self) -> dict[str, pg.PlotWidget]:
        return {"instruction_mix": self.mix}

    def apply_theme(self, theme: Theme) -> None:
        self.mix.apply_theme(theme)

    # ------------------------------------------------------------------ drawing
    def _show(self) -> None:
        store, level_id = self.store, self.level_id
        event = store.build_for(level_id) if store and level_id else None
        self._show_mix()
        if event is self.build and event is not None:
            return
        self.build = event
        if event is None:
            text = (builds.no_build_text(level_id) if level_id
                    else "select a level to see its code")
            self.notice.setText(text)
            self.source_path = None
            self.file_box.blockSignals(True)
            self.file_box.clear()
            self.file_box.blockSignals(False)
            self.source.show_text(text)
            self.diff.show_message(text)
            self.tabs.setTabText(1, "Diff")
            self.sass.show_message(text)
            self.occupancy.setText(text)
            return
        self.notice.setText(f"{level_id}: {event.get('kernel') or ''} ({event['variant']}, "
                            f"{event.get('arch') or '?'}, {event.get('compiler') or '?'})")
        sources = event.get("sources") or {}
        self.file_box.blockSignals(True)
        self.file_box.clear()
        self.file_box.addItems(list(sources))
        self.file_box.blockSignals(False)
        main = builds.main_source(event)
        if main is None:
            self.source_path = None
            self.source.show_text(str(event.get("sources_reason") or "no sources recorded"))
        else:
            self.file_box.setCurrentText(main)
            self._show_file(main)
        self._show_diff(event)
        lines = builds.main_loop_lines(event)
        if lines:
            self.sass.show_lines(lines)
        else:
            self.sass.show_message(str(event.get("sass_reason") or "no SASS recorded"))
        self.sass_title.setText("SASS of the main loop" if event.get("main_loop")
                                else "SASS (no main loop found: the whole kernel)")
        self.occupancy.setText("\n".join(builds.occupancy_lines(event)))

    def _show_file(self, path: str) -> None:
        sources = (self.build or {}).get("sources") or {}
        if path in sources:
            self.source_path = path
            self.source.show_text(str(sources[path]))

    def _show_diff(self, event: dict[str, Any]) -> None:
        prev = self.previous_level()
        this = builds.source_text(event) or ""
        if prev is None:
            self.tabs.setTabText(1, "Diff")
            self.diff.show_message("the first level of the ladder: nothing before it")
            return
        self.tabs.setTabText(1, f"Diff against {prev}")
        before = builds.source_text(self.store.build_for(prev) if self.store else None)
        if before is None:
            self.diff.show_message(builds.no_build_text(prev))
        else:
            self.diff.show_rows(builds.diff_rows(before, this))

    def previous_level(self) -> str | None:
        """The level before this one in the catalog's ladder order."""
        if self.store is None:
            return None
        ids = [lv.id for lv in self.store.ladder_levels()]
        if self.level_id not in ids:
            return None
        i = ids.index(self.level_id)
        return ids[i - 1] if i > 0 else None

    def _show_mix(self) -> None:
        if self.store is None:
            return
        pairs = [(lv.id, ev) for lv in self.store.ladder_levels()
                 if (ev := self.store.build_for(lv.id)) is not None]
        rows = builds.mix_rows(pairs)
        if (rows, self.level_id) != self._mix_drawn:
            self._mix_drawn = (rows, self.level_id)
            self.mix.set_rows(rows, selected=self.level_id)

    def select_source_line(self, line_no: int) -> list[int]:
        """Select the SASS lines compiled from the shown file's line; their indexes."""
        found = (builds.lines_at(self.sass.lines, self.source_path, line_no)
                 if self.source_path else [])
        self.sass.select(found)
        return found


def _column(*widgets: QWidget) -> QWidget:
    """The widgets one above the other, without margins."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return box

"""Under the banks view: the SASS lines where ncu measured excess shared-memory wavefronts
(bank conflicts) for the level, each with its source line; choosing one opens the Code
view there. The rows come from :func:`gemmscope.app.core.source_heat.conflict_lines`;
items are plain text (a recording's text is data, never markup).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from ...kernels.protocol import SourceCounters
from ..core.source_heat import ConflictLine, no_counters_text

MAX_ROWS = 50


class ConflictLinks(QWidget):
    """A heading and one row per conflicting SASS line; ``chosen(path, line)`` on a click
    (or Enter) of a row with a source line."""

    chosen = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setWordWrap(True)
        self.list = QListWidget()
        self.list.setMaximumHeight(110)
        self.list.itemActivated.connect(self._activate)
        self.list.itemClicked.connect(self._activate)
        self.rows: list[ConflictLine] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.list)

    def show_rows(self, level_id: str, event: SourceCounters | None,
                  rows: list[ConflictLine], coming: bool = False) -> None:
        """``coming``: without an event, the replay has not reached the level's yet."""
        self.rows = rows[:MAX_ROWS]
        self.list.clear()
        if event is None:
            self.heading.setText(no_counters_text(level_id, coming))
        elif event.lines is None:
            self.heading.setText(f"no per-line counters for {level_id}: ncu "
                                 f"{event.status}: {event.reason or '?'}")
        elif not rows:
            self.heading.setText(f"ncu measured no bank conflict on any SASS line of "
                                 f"{level_id} ({event.M}×{event.N}×{event.K})")
        else:
            more = f" (the {MAX_ROWS} largest shown)" if len(rows) > MAX_ROWS else ""
            self.heading.setText(f"bank conflicts measured per SASS line by ncu at "
                                 f"{event.M}×{event.N}×{event.K}: {len(rows)} "
                                 f"line(s){more}; click one to see its source")
        for row in self.rows:
            item = QListWidgetItem(row.text())
            if row.source is None:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.list.addItem(item)
        self.list.setVisible(bool(self.rows))

    def _activate(self, item: QListWidgetItem) -> None:
        row = self.rows[self.list.row(item)]
        if row.source is not None:
            self.chosen.emit(row.source[0], row.source[1])

"""The messages list: the session's errors and info lines, plus the app's own notes.

A recording can hold any number of messages; the list shows the newest MAX_SHOWN (and
says how many earlier ones it left out), adds new ones in one batch per redraw, and cuts
each line at MAX_CHARS, so a long or chatty recording never slows the GUI. A replay's
lines say "in the recording, at T s:": a newcomer reads a restart or a failed probe as the
recording's history, not as a fault of their install.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from ...kernels.results import counted
from ..core.store import SessionStore

FROM_STORE = "store"  # items made from the store's messages (cleared when it is reset)
ELIDED = "elided"  # the line that counts the messages left out
MAX_SHOWN = 1000
MAX_CHARS = 500
ERROR_ROLE = Qt.ItemDataRole.UserRole + 1  # True on an error's line


class MessagesPanel(QListWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._shown = 0  # store messages already listed
        self._left_out = 0  # store messages too old to list
        self._generation = -1  # the store.generation they came from
        self._last: object | None = None  # the store's last message listed

    def sync(self, store: SessionStore) -> None:
        """List the store's messages not listed yet (all again after a reset)."""
        if store.generation != self._generation:
            for i in reversed(range(self.count())):
                if self.item(i).data(Qt.ItemDataRole.UserRole) in (FROM_STORE, ELIDED):
                    self.takeItem(i)
            self._shown = self._left_out = 0
            self._last = None
            self._generation = store.generation
        recorded = store.contents is not None  # a replay: the recording's history
        if self._shown and store.messages[self._shown - 1] is not self._last:
            # the store folded a message into its last line (runner starts in a row)
            self._relist_last(store.messages[self._shown - 1].describe(recorded))
        new = store.messages[self._shown:]
        self._shown = len(store.messages)
        self._last = store.messages[-1] if store.messages else None
        if not new:
            return
        if len(new) > MAX_SHOWN:
            self._left_out += len(new) - MAX_SHOWN
            new = new[-MAX_SHOWN:]
        self.setUpdatesEnabled(False)
        try:
            for m in new:
                self.addItem(_item(m.describe(recorded), m.is_error, FROM_STORE))
            self._trim()
        finally:
            self.setUpdatesEnabled(True)
        self.scrollToBottom()

    def _relist_last(self, text: str) -> None:
        """Show the newest store line's new text in place."""
        for i in reversed(range(self.count())):
            item = self.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == FROM_STORE:
                shown = _item(text, bool(item.data(ERROR_ROLE)), FROM_STORE).text()
                item.setText(shown)
                return

    def append(self, text: str, error: bool, tag: str = "app") -> None:
        self.addItem(_item(text, error, tag))
        self._trim()
        self.scrollToBottom()

    def has_errors(self) -> bool:
        """Whether an error is listed (info lines alone open no panel on stage)."""
        return any(self.item(i).data(ERROR_ROLE) for i in range(self.count()))

    def texts(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())]

    def _trim(self) -> None:
        """Keep at most MAX_SHOWN store messages, oldest out first, and count them."""
        rows = [i for i in range(self.count())
                if self.item(i).data(Qt.ItemDataRole.UserRole) == FROM_STORE]
        extra = len(rows) - MAX_SHOWN
        for i in reversed(rows[:max(extra, 0)]):
            self.takeItem(i)
        self._left_out += max(extra, 0)
        if self._left_out:
            text = f"… {counted(self._left_out, 'earlier message')} not listed"
            first = self.item(0)
            if first is not None and first.data(Qt.ItemDataRole.UserRole) == ELIDED:
                first.setText(text)
            else:
                self.insertItem(0, _item(text, False, ELIDED, mark=""))


def _item(text: str, error: bool, tag: str, mark: str | None = None) -> QListWidgetItem:
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 1] + "…"
    prefix = ("⚠ " if error else "ℹ ") if mark is None else mark
    item = QListWidgetItem(prefix + text)
    item.setData(Qt.ItemDataRole.UserRole, tag)
    item.setData(ERROR_ROLE, bool(error))
    if error:
        item.setForeground(Qt.GlobalColor.red)
    return item

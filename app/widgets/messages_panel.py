"""The messages list: the session's errors and info lines, plus the app's own notes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from ..core.store import SessionStore

FROM_STORE = "store"  # items made from the store's messages (cleared when it is reset)


class MessagesPanel(QListWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._shown = 0  # store messages already listed
        self._generation = -1  # the store.generation they came from

    def sync(self, store: SessionStore) -> None:
        """List the store's messages not listed yet (all again after a reset)."""
        if store.generation != self._generation:
            for i in reversed(range(self.count())):
                if self.item(i).data(Qt.ItemDataRole.UserRole) == FROM_STORE:
                    self.takeItem(i)
            self._shown = 0
            self._generation = store.generation
        for m in store.messages[self._shown:]:
            self.append(m.describe(), error=m.is_error, tag=FROM_STORE)
        self._shown = len(store.messages)

    def append(self, text: str, error: bool, tag: str = "app") -> None:
        item = QListWidgetItem(("⚠ " if error else "ℹ ") + text)
        item.setData(Qt.ItemDataRole.UserRole, tag)
        if error:
            item.setForeground(Qt.GlobalColor.red)
        self.addItem(item)
        self.scrollToBottom()

    def texts(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())]

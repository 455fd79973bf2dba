"""The window's status bar as one row of parts that never overlap: the passing message
(``showMessage``) in a label of its own at the left, then the standing parts (what runs,
what feeds the window), each an ElidedLabel with at most its share of the width, cut with
"…" where it does not fit (the tooltip then says it all).

A plain QStatusBar paints its message itself, in the room left of the first standing
widget, clipped and with no ellipsis: a long message ran up to the next part ("…picture/r
running naive at …") and read as one sentence with it, and standing parts as wide as
the bar left the message no room at all. Here the message is a widget in the bar's
layout like the others, so Qt's layout keeps every part in its own rectangle."""

from __future__ import annotations

from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QStatusBar, QStyle, QStyleOption, QWidget

from .fitting import ElidedLabel

MESSAGE_SHARE = 0.4  # of the bar's width kept for a message while there is one
PART_PAD_PX = 6  # each side of a part's text: the parts read apart


class StatusLine(QStatusBar):
    """A status bar whose message and standing parts sit side by side, each elided."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message_label = ElidedLabel("")
        self.message_label.setObjectName("status_message")
        self.message_label.setContentsMargins(PART_PAD_PX, 0, PART_PAD_PX, 0)
        self.addPermanentWidget(self.message_label, 1)
        self.parts: list[tuple[ElidedLabel, float]] = []
        self.messageChanged.connect(self._show_message)

    def add_part(self, label: ElidedLabel, share: float) -> None:
        """A standing part right of the message, at most ``share`` of the bar's width
        (of what a message leaves while one is shown)."""
        label.setContentsMargins(PART_PAD_PX, 0, PART_PAD_PX, 0)
        self.addPermanentWidget(label)
        self.parts.append((label, share))
        self._fit()

    def part_labels(self) -> list[ElidedLabel]:
        """The message's label and the standing parts, left to right."""
        return [self.message_label, *(label for label, _ in self.parts)]

    def _show_message(self, text: str) -> None:
        self.message_label.setText(text)
        self._fit()

    def _fit(self) -> None:
        """Each standing part's widest: its share of the bar, less the message's share
        while a message is shown."""
        room = self.width() * ((1 - MESSAGE_SHARE) if self.currentMessage() else 1.0)
        for label, share in self.parts:
            width = max(int(room * share), label.minimumSizeHint().width())
            if label.maximumWidth() != width:
                label.setMaximumWidth(width)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._fit()
        super().resizeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        """The bar's panel only: the message is its label's (QStatusBar would paint it
        again, unelided, under the parts)."""
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option,
                                   painter, self)

"""A talk's caption under the views: large plain text and the scene's number."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QWidget

from ..theme import NORMAL, Theme
from .plain import plain_label

# the caption's size against the theme's text: readable from the back of a room, and
# still leaving the views most of a 1280×720 projector in presentation mode
CAPTION_SCALE = 1.2
MIN_CAPTION_PT = 18
MAX_HEIGHT = 0.3  # of the window


class CaptionBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("talk_caption")
        self.text = plain_label()  # a caption holds the recording's text: never markup
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.number = plain_label()
        self.number.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 6)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.number, 0, Qt.AlignmentFlag.AlignTop)
        self.apply_theme(NORMAL)

    def show_scene(self, caption: str, index: int, count: int) -> None:
        """Scene ``index`` (0-based) of ``count``, with its caption."""
        self.text.setText(caption)
        self.number.setText(f"{index + 1} / {count}")
        self._fit()

    def caption_pt(self) -> int:
        """The caption's type size when it fits (see :meth:`_fit`)."""
        return max(MIN_CAPTION_PT, round(self.font_pt * CAPTION_SCALE))

    def _fit(self) -> None:
        """As tall as the wrapped caption at the present width, at most MAX_HEIGHT of the
        window: a long caption is set smaller (down to the theme's size) rather than cut
        or let grow the window. A dock does not ask its widget's height for a width, so
        the caption says it as a minimum."""
        margins = self.layout().contentsMargins()
        window = self.window()
        budget = int(MAX_HEIGHT * window.height()) if window is not self else 10_000
        width = max(self.text.width(), 200)
        height = 0
        for pt in range(self.caption_pt(), self.font_pt - 1, -1):
            self.shown_pt = pt
            self.text.setStyleSheet(f"font-size: {pt}pt;")
            height = self.text.heightForWidth(width)
            if height <= budget:
                break
        self.setMinimumHeight(max(min(height, budget), self.number.sizeHint().height())
                              + margins.top() + margins.bottom())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()

    def apply_theme(self, theme: Theme) -> None:
        """Colours of the theme; type larger than the theme's (its own style sheet wins
        over the window's, which sets every widget's size)."""
        self.font_pt = theme.font_pt
        self.setStyleSheet(
            f"QWidget#talk_caption {{ background: {theme.background}; }} "
            f"QLabel {{ color: {theme.foreground}; background: {theme.background}; "
            f"font-size: {self.caption_pt()}pt; }}")
        self.shown_pt = self.caption_pt()
        self._fit()

"""Text from a recording or a runner is data: shown as written, never as markup.

Qt renders a label or a tooltip as rich text when the string looks like HTML, so a
recording could show HTML or load a local image into the window. Labels that show such
text are plain-text labels; tooltips are escaped inside a paragraph (rich text whose every
character is literal).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from ..core.plain_text import MAX_TOOLTIP_CHARS, html_text, plain_tooltip

__all__ = ["MAX_TOOLTIP_CHARS", "html_text", "plain_label", "plain_tooltip"]


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label that never interprets its text as markup."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label

"""Pieces that let a panel fit any screen: a plain-text label that elides (its tooltip then
holds the whole text), option rows that wrap onto more lines, and a frameless scroll area
for panels whose content can be taller than the room they get.

Qt's font metrics do the eliding (``QFontMetrics.elidedText``); superqt's ``QFlowLayout``
does the wrapping. superqt is imported where a flow row is made, not here: importing it
loads all of its widgets (70-80 ms on the 2-CPU dev machine), and the window's first paint
needs only the eliding labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QWidget

from .plain import plain_tooltip

if TYPE_CHECKING:
    from superqt import QFlowLayout


class ElidedLabel(QLabel):
    """One line of plain text, cut with "…" where it does not fit; the tooltip then says
    the whole text (a recording's text stays plain: never markup). ``text()`` is the
    whole text; the label shows the part that fits its width."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._full = ""
        self.setText(text)

    def text(self) -> str:
        return self._full

    def setText(self, txt: str) -> None:
        self._full = txt
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:
        """Room for the whole text (the layout may give less: then it is cut)."""
        hint = super().sizeHint()
        m = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self._full) + m.left() + m.right()
        return QSize(width + 2 * self.margin(), hint.height())

    def minimumSizeHint(self) -> QSize:
        """As narrow as the ellipsis alone."""
        m = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance("…") + m.left() + m.right()
        return QSize(width + 2 * self.margin(), super().minimumSizeHint().height())

    def _fit(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight,
                                              max(width, 0))
        super().setText(shown)
        self.setToolTip(plain_tooltip(self._full) if shown != self._full else "")


def labelled(text: str, *widgets: QWidget) -> QWidget:
    """A caption and its controls, kept on one line when a flow row wraps."""
    box = QWidget()
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    if text:
        lay.addWidget(QLabel(text))
    for w in widgets:
        lay.addWidget(w)
    return box


def flow_layout(owner: QWidget) -> QFlowLayout:
    """``owner``'s layout: a row of controls that wraps onto the next line when the panel
    is narrow."""
    from superqt import QFlowLayout

    flow = QFlowLayout(owner)
    flow.setContentsMargins(0, 0, 0, 0)
    return flow


def flow_row() -> tuple[QWidget, QFlowLayout]:
    """A new wrapping row (see :func:`flow_layout`) and its layout."""
    row = QWidget()
    return row, flow_layout(row)


def scrolling(widget: QWidget, horizontal: bool = False) -> QScrollArea:
    """``widget`` in a frameless scroll area: the panel may be shorter than its content
    (and narrower, with ``horizontal``) on a small screen."""
    area = QScrollArea()
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidgetResizable(True)
    if not horizontal:
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setWidget(widget)
    return area

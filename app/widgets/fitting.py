"""Pieces that let a panel fit any screen: a plain-text label that elides (its tooltip then
holds the whole text), option rows that wrap onto more lines, and a frameless scroll area
for panels whose content can be taller than the room they get.

Qt's font metrics do the eliding (``QFontMetrics.elidedText``); superqt's ``QFlowLayout``
does the wrapping. superqt is imported where a flow row is made, not here: importing it
loads all of its widgets (70-80 ms on the 2-CPU dev machine), and the window's first paint
needs only the eliding labels.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QFontMetricsF, QHelpEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QTableView,
    QToolTip,
    QWidget,
)

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

    def changeEvent(self, event: QEvent) -> None:
        """A new type (a style sheet's, the stage's) cuts the text elsewhere: a text cut
        for the stage's larger type stayed cut in the smaller one at the same width."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit()

    def sizeHint(self) -> QSize:
        """Room for the whole text (the layout may give less: then it is cut)."""
        hint = super().sizeHint()
        m = self.contentsMargins()
        # (a pixel over the advance: elidedText measures in fractions, and cut a text
        # given exactly its rounded width)
        width = math.ceil(QFontMetricsF(self.font()).horizontalAdvance(self._full)) + 1 \
            + m.left() + m.right()
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


def scrolling(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area (:class:`ScrollPanel`)."""
    return ScrollPanel(widget)


class ScrollPanel(QScrollArea):
    """A frameless scroll area for a panel: shorter than its content on a small screen, it
    scrolls; narrower than its content's least width (a person narrowed its dock), a scroll
    bar shows below it, where the right edge had cut the content with the bar kept off.
    Wider than that, the content takes the panel's width, its rows wrapping and its labels
    eliding, and the bar is off: it then asks for no room (a scroll area whose bar may
    show adds the bar's height to its least height, which the panels beside it give up,
    the Code tab's source and SASS above its occupancy panel among them)."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(widget)
        widget.installEventFilter(self)
        self.viewport().installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Resize):
            self._fit()
        return super().eventFilter(obj, event)

    def _fit(self) -> None:
        inner = self.widget()
        needed = inner is not None and \
            inner.minimumSizeHint().width() > self.viewport().width() > 0
        policy = (Qt.ScrollBarPolicy.ScrollBarAsNeeded if needed
                  else Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        if self.horizontalScrollBarPolicy() != policy:
            self.setHorizontalScrollBarPolicy(policy)


class FittedColumns(QObject):
    """A table's columns fitted to its width, never cut by its edge: the columns of
    ``priority`` (most wanted first) that fit whole at their contents' width show, the
    rest hide until the table is wider (a wider dock shows % of cuBLAS and verified;
    scrolling sideways showed "296." for 296.3). Where even the first does not fit it
    takes the width and its cells are cut with "…", the whole text in the tooltip."""

    def __init__(self, table: QTableView, priority: list[int]) -> None:
        super().__init__(table)
        self.table = table
        self.priority = list(priority)
        self.allowed: set[int] | None = None  # None: every column may show
        self.room_hidden: list[int] = []  # columns hidden for want of room
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.setProperty("tooltips_cut_cells", True)  # (tests/support/layout_check.py reads it)
        table.viewport().installEventFilter(self)

    def allow(self, columns: set[int] | None) -> None:
        self.allowed = columns
        self.fit()

    def width_of(self, column: int) -> int:
        t = self.table
        header = t.horizontalHeader()
        return max(t.sizeHintForColumn(column), header.sectionSizeFromContents(column).width())

    def fit(self) -> None:
        t = self.table
        room = t.viewport().width()
        if room <= 1:
            return
        shown: list[tuple[int, int]] = []
        used = 0
        for column in self.priority:
            if self.allowed is not None and column not in self.allowed:
                continue
            width = self.width_of(column)
            if shown and used + width > room:
                break  # (the next wanted does not fit: none after it shows instead)
            shown.append((column, width))
            used += width
        keep = {c for c, _ in shown}
        self.room_hidden = []
        for column in range(t.model().columnCount()):
            hide = column not in keep
            if hide and (self.allowed is None or column in self.allowed):
                self.room_hidden.append(column)
            if t.isColumnHidden(column) != hide:
                t.setColumnHidden(column, hide)
        for column, width in shown:
            if t.columnWidth(column) != width:
                t.setColumnWidth(column, width)
        if used > room:  # the first alone is wider than the table: it takes the width
            t.setColumnWidth(shown[0][0], room)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        elif event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index = self.table.indexAt(event.pos())
            if index.isValid():
                text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
                need = self.table.fontMetrics().horizontalAdvance(text) + 8
                if text and need > self.table.columnWidth(index.column()):
                    # the whole text, then the cell's own tooltip (a level's title,
                    # already made plain by plain_tooltip)
                    own = str(index.data(Qt.ItemDataRole.ToolTipRole) or "")
                    QToolTip.showText(event.globalPos(), plain_tooltip(text) + own,
                                      self.table)
                    return True
        return False

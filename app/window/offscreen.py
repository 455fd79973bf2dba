"""A widget drawn at a size of its own, off screen: the size an export asks for, not the
room the window happens to give it.

:func:`drawn_at` lends the widget to a host window that is never shown on a screen
(``WA_DontShowOnScreen``), sized to the output, lays it out there (the charts place their
legends, names and value labels for that size; the canvases lay their pictures out),
and gives it back to where it sat: its place in a layout, a splitter or a tab, with a
picture of it standing in meanwhile, so the window does not change while it is away.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QMessageLogContext, QSize, Qt, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QApplication,
    QLayout,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QWidget,
)

QWIDGETSIZE_MAX = (1 << 24) - 1
SETTLE_ROUNDS = 4  # event rounds for a layout to settle (graphics layouts take two)


def _layout_holding(layout: QLayout, widget: QWidget) -> QLayout | None:
    if layout.indexOf(widget) >= 0:
        return layout
    for i in range(layout.count()):
        item = layout.itemAt(i)
        child = item.layout() if item is not None else None
        if child is not None:
            found = _layout_holding(child, widget)
            if found is not None:
                return found
    return None


class _Picture(QWidget):
    """Stands in for a widget: paints its picture, and asks its layout for exactly what
    the widget asks (so nothing around it moves, and the window keeps its size)."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.picture = widget.grab()
        self._hint, self._least = widget.sizeHint(), widget.minimumSizeHint()
        self.setSizePolicy(widget.sizePolicy())
        self.setMinimumSize(widget.minimumSize())
        self.setMaximumSize(widget.maximumSize())

    def sizeHint(self) -> QSize:
        return self._hint

    def minimumSizeHint(self) -> QSize:
        return self._least

    def paintEvent(self, event: object) -> None:
        painter = QPainter(self)
        painter.drawPixmap(self.rect(), self.picture)
        painter.end()


class _Place:
    """Where a widget sits, so that it can go back there: a tab of a QTabWidget, a
    pane of a QSplitter, or an item of a layout (a placeholder takes its place)."""

    def __init__(self, widget: QWidget) -> None:
        self.widget = widget
        self.parent = widget.parentWidget()
        self.visible = not widget.isHidden()
        self.minimum, self.maximum = widget.minimumSize(), widget.maximumSize()
        self.tabs: QTabWidget | None = None
        self.splitter: QSplitter | None = None
        self.layout: QLayout | None = None
        self.placeholder: QWidget | None = None
        parent = self.parent
        if isinstance(parent, QStackedWidget) and isinstance(parent.parentWidget(), QTabWidget):
            self.tabs = parent.parentWidget()  # type: ignore[assignment]
        elif isinstance(parent, QSplitter):
            self.splitter = parent
        elif parent is not None and (layout := parent.layout()) is not None:
            self.layout = _layout_holding(layout, widget)

    def take(self) -> None:
        w = self.widget
        if self.tabs is not None:
            tabs = self.tabs
            self.index = tabs.indexOf(w)
            self.text, self.tip = tabs.tabText(self.index), tabs.tabToolTip(self.index)
            self.current = tabs.currentIndex()
            tabs.blockSignals(True)  # (the window follows tab changes: none happens)
            try:
                tabs.removeTab(self.index)
            finally:
                tabs.blockSignals(False)
        elif self.splitter is not None or self.layout is not None:
            # a picture of the widget holds its place (the window looks the same)
            holder = self.placeholder = _Picture(w)
            if self.splitter is not None:
                self.sizes = self.splitter.sizes()
                self.splitter.replaceWidget(self.splitter.indexOf(w), holder)
            else:
                assert self.layout is not None
                self.layout.replaceWidget(w, holder)

    def give_back(self) -> None:
        w = self.widget
        w.setMinimumSize(self.minimum)
        w.setMaximumSize(self.maximum)
        if self.tabs is not None:
            tabs = self.tabs
            tabs.blockSignals(True)
            try:
                tabs.insertTab(self.index, w, self.text)
                tabs.setTabToolTip(self.index, self.tip)
                tabs.setCurrentIndex(self.current)
            finally:
                tabs.blockSignals(False)
        elif self.placeholder is not None:
            if self.splitter is not None:
                self.splitter.replaceWidget(self.splitter.indexOf(self.placeholder), w)
                self.splitter.setSizes(self.sizes)
            elif self.layout is not None:
                self.layout.replaceWidget(self.placeholder, w)
            self.placeholder.deleteLater()
            self.placeholder = None
        else:
            w.setParent(self.parent)
        w.setVisible(self.visible)


def settle_events(rounds: int = SETTLE_ROUNDS) -> None:
    app = QApplication.instance()
    if app is not None:
        for _ in range(rounds):
            app.processEvents()


@contextmanager
def drawn_at(widget: QWidget, size: QSize, settle: Callable[[], None] | None = None
             ) -> Iterator[QWidget]:
    """``widget`` laid out at ``size`` (device-independent pixels) in a window off
    screen, for the ``with`` block; back in its place after. ``settle`` brings what the
    widget shows up to date once it is laid out (the window's ``flush_views``)."""
    place = _Place(widget)
    origin = widget.window()
    host = QWidget(None, Qt.WindowType.Tool)
    host.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    host.setObjectName("export_host")
    if origin is not widget:  # the window's look (presentation mode's style sheet)
        host.setStyleSheet(origin.styleSheet())
        host.setPalette(origin.palette())
    place.take()
    try:
        widget.setParent(host)
        widget.setMinimumSize(0, 0)
        widget.setMaximumSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX)
        host.resize(size)
        widget.setGeometry(0, 0, size.width(), size.height())
        host.show()
        widget.show()
        settle_events()
        if settle is not None:
            settle()
        widget.setGeometry(0, 0, size.width(), size.height())  # (a layout may have asked)
        settle_events()
        yield widget
    finally:
        widget.hide()
        place.give_back()
        host.hide()
        host.deleteLater()
        settle_events(1)


@contextmanager
def without_chrome(widget: QWidget, settle: Callable[[], None] | None = None
                   ) -> Iterator[QWidget]:
    """``widget`` without its controls for the ``with`` block: the widgets its
    ``picture_chrome()`` names (a view's buttons and option boxes, which are the desk's,
    not the picture's) hidden, the layout given their room, shown again after."""
    chrome = getattr(widget, "picture_chrome", None)
    hidden = [w for w in (chrome() if callable(chrome) else ()) if not w.isHidden()]
    for w in hidden:
        w.setVisible(False)
    try:
        if hidden:
            settle_events()
            if settle is not None:
                settle()
        yield widget
    finally:
        for w in hidden:
            w.setVisible(True)
        if hidden:
            settle_events(1)


# what Qt's offscreen platform plugin says of window calls it has nothing to do for (the
# window is drawn in memory): not a fault of the picture, and noise on a headless export
OFFSCREEN_NOOPS = ("This plugin does not support propagateSizeHints()",
                   "This plugin does not support raise()",
                   "This plugin does not support grabbing the keyboard",
                   "This plugin does not support setParent!")


def quiet_offscreen_plugin() -> None:
    """On the offscreen platform, Qt's messages less the plugin's no-op notices
    (``OFFSCREEN_NOOPS``); every other message goes to stderr as Qt writes it."""
    app = QApplication.instance()
    if app is None or QApplication.platformName() != "offscreen":
        return

    def handler(kind: QtMsgType, _context: QMessageLogContext, message: str) -> None:
        if kind == QtMsgType.QtWarningMsg and message.strip() in OFFSCREEN_NOOPS:
            return
        sys.stderr.write(message + "\n")

    qInstallMessageHandler(handler)

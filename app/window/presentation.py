"""Presentation mode (full screen, large fonts, high contrast).

Entering it keeps the window's geometry and which panels were open; leaving restores
both, so F11 twice puts the window back where it was. On stage the view on screen gets
the window: the docked panels (ladder, run form, messages) and the toolbars (the replay
bar) hide, the menu and status bars stay one line each; the views say the level, and
Left/Right, P and F11 work without the panels. A panel opened again on stage (View ▸
Panels) shows the ladder's story columns only. Leaving gives every widget its own style
back (fonts, pens, panels).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QByteArray, QRect, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLayout,
    QTabWidget,
    QToolBar,
    QWidget,
)

from ...kernels.results import Column
from ..plots.plot_style import style_plots
from ..theme import NORMAL, PRESENTATION, Theme
from ..views.base import View
from ..widgets.ladder_panel import LadderPanel

if TYPE_CHECKING:
    from .view_tabs import ViewTabs

STAGE_COLUMNS = (Column.LEVEL, Column.TFLOPS)  # the bars say the rest, in large type
DOCK_SHARE = 0.36  # of the window's width, at most, for the side panels on a resize
# of the window's width the ladder's dock widens to, at most, when the window widens, so
# that a wide screen shows more of the ladder's columns (at 1920 px: 576 px, the SM clock
# and J/GEMM beside % of cuBLAS; at 1280 px: 384, less than the dock's default 440)
LADDER_SHARE = 0.3
ON_STAGE = "gemmscope_on_stage"  # a toolbar or dock with this property True stays on stage


def fit_side_docks(window: Stage, widened: bool = False) -> None:
    """Narrow the left panels to DOCK_SHARE of the window where a resize (a small screen)
    left them wider, so the views keep the room. Where the window was ``widened`` (off
    stage), widen the ladder's dock to show more of its columns: as many whole as fit in
    LADDER_SHARE of the window (a dock the person narrowed stays so until
    the window widens again)."""
    cap = int(DOCK_SHARE * window.width())
    docks = [d for d in (window.ladder_dock, window.run_dock) if d.isVisible()]
    if docks and max(d.width() for d in docks) > cap:
        window.resizeDocks(docks, [cap] * len(docks), Qt.Orientation.Horizontal)
        return
    dock = window.ladder_dock
    if not widened or window.theme is not NORMAL or not dock.isVisible() or dock.isFloating():
        return
    frame = max(dock.width() - window.ladder.table.width(), 0)  # the dock's edges
    want = window.ladder.width_within(int(LADDER_SHARE * window.width()) - frame) + frame
    if dock.width() < want:
        window.resizeDocks([dock], [want], Qt.Orientation.Horizontal)


def off_stage(window: Stage) -> list[QWidget]:
    """What hides on stage: the window's docked panels, those opened later too (a Tune or
    kernel panel, which the stage's type would cut at its edge), and its toolbars (a
    talk's caption, marked ON_STAGE, stays)."""
    panels: list[QWidget] = [*window.findChildren(QDockWidget), *window.findChildren(QToolBar)]
    return [p for p in panels if not p.property(ON_STAGE)]


class Stage(Protocol):
    """What presentation mode changes in the main window (the window is one)."""

    theme: Theme
    views: ViewTabs
    ladder: LadderPanel
    ladder_dock: QDockWidget
    run_dock: QDockWidget
    messages_dock: QDockWidget
    tabs: QTabWidget

    def setStyleSheet(self, sheet: str) -> None: ...
    def saveState(self, version: int = 0) -> QByteArray: ...
    def restoreState(self, state: QByteArray, version: int = 0) -> bool: ...
    def resizeDocks(self, docks: list[QDockWidget], sizes: list[int],
                    orientation: Qt.Orientation) -> None: ...
    def findChildren(self, kind: type) -> list: ...
    def layout(self) -> QLayout | None: ...
    def geometry(self) -> QRect: ...
    def setGeometry(self, rect: QRect) -> None: ...
    def isMaximized(self) -> bool: ...
    def showMaximized(self) -> None: ...
    def isFullScreen(self) -> bool: ...
    def width(self) -> int: ...
    def showFullScreen(self) -> None: ...
    def showNormal(self) -> None: ...
    def remember_presentation(self, on: bool) -> None: ...
    def saveGeometry(self) -> QByteArray: ...


class AppFontOnStage:
    """The application's font is the whole process's: the first window to go on stage
    keeps the font it had, the last to leave (or close) gives it back. With two windows
    on stage, the second must not take the stage's font for the one to restore."""

    def __init__(self) -> None:
        self.before: QFont | None = None
        self.on_stage: set[int] = set()

    def enter(self, app: QApplication, who: object, point_size: int) -> None:
        if not self.on_stage:
            self.before = app.font()
        self.on_stage.add(id(who))
        font = app.font()
        font.setPointSize(point_size)
        app.setFont(font)

    def leave(self, app: QApplication, who: object) -> None:
        if id(who) not in self.on_stage:
            return
        self.on_stage.discard(id(who))
        if not self.on_stage and self.before is not None:
            app.setFont(self.before)
            self.before = None


APP_FONT = AppFontOnStage()


class PresentationMode:
    """Turns presentation mode on and off in a window, and undoes what it changed."""

    def __init__(self, window: Stage) -> None:
        self.window = window
        self.geometry: QRect | None = None  # the window before it went on stage
        self.maximized = False
        self.state: QByteArray | None = None  # its panels: which were open, their sizes
        self.saved_geometry: QByteArray | None = None  # the geometry as the window saves it

    @property
    def on(self) -> bool:
        return self.window.theme is PRESENTATION

    def set(self, on: bool, full_screen: bool = True) -> None:
        w = self.window
        if on and not self.on:
            # the rectangle itself: restoreGeometry would fit it to the current screen
            self.geometry, self.state = w.geometry(), w.saveState()
            self.saved_geometry = w.saveGeometry()
            self.maximized = w.isMaximized()
        leaving = self.on and not on
        w.theme = PRESENTATION if on else NORMAL
        w.remember_presentation(on)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            if on:
                APP_FONT.enter(app, self, w.theme.font_pt)
            else:
                APP_FONT.leave(app, self)
        w.setStyleSheet(w.theme.stylesheet())
        if on:
            for panel in off_stage(w):
                panel.hide()
        w.ladder.show_columns(STAGE_COLUMNS if on else None)
        w.ladder.fit_columns()
        if on:  # the ladder's columns, whole, and no more (again once laid out)
            self._fit_ladder()
            QTimer.singleShot(0, self._fit_ladder)
        w.views.tell("theme", functools.partial(_restyle, theme=w.theme))
        if on and full_screen:
            w.showFullScreen()
        elif leaving:
            if w.isFullScreen():
                w.showNormal()
            if self.maximized:
                w.showMaximized()
            elif self.geometry is not None:
                w.setGeometry(self.geometry)
            if self.state is not None:  # the panels, in the window's own size again
                _restore_panels(w, self.state)
            self.geometry = self.state = self.saved_geometry = None

    def off_stage_layout(self) -> tuple[bytes | None, bytes] | None:
        """The window's geometry and panels as they were before the stage, which a window
        closed on stage must keep for the next start (else it opens again, and leaves
        the stage, with the stage's panels hidden); None off stage."""
        if not self.on or self.state is None:
            return None
        geometry = bytes(self.saved_geometry.data()) if self.saved_geometry is not None \
            else None
        return geometry, bytes(self.state.data())

    def release(self) -> None:
        """The window closes: the application's font is the whole process's, so it goes
        back to what it was before the stage (the next window must not open in it)."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            APP_FONT.leave(app, self)

    def _fit_ladder(self) -> None:
        w = self.window
        if self.on:
            w.resizeDocks([w.ladder_dock], [w.ladder.needed_width()],
                          Qt.Orientation.Horizontal)


def _restore_panels(w: Stage, state: QByteArray) -> None:
    """The panels as they were, once the window is laid out in the normal type: restored
    before, the panels met the stage's minimum widths. Invalidating the layouts is not
    enough: a tab not shown kept the minimum width its layout had on stage (the Timeline's
    row of buttons, 701 px for 429) until each widget's minimum was asked again, from the
    leaves up, so that the second time off stage the side panels came back ~100 px
    narrower."""
    QApplication.sendPostedEvents()
    for layout in w.findChildren(QLayout):
        layout.invalidate()
    widgets = w.findChildren(QWidget)  # parents before their children
    for widget in reversed(widgets):  # children first
        widget.minimumSizeHint()
    top = w.layout()
    if top is not None:
        top.activate()
    w.restoreState(state)
    # the panels just shown again: a hidden widget's layout does not run (Qt drops its
    # layout request), so their contents kept the places the stage's type gave them, cut
    # at the dock's right edge; each laid out now, parents first
    for widget in widgets:
        layout = widget.layout()
        if layout is not None and widget.isVisible():
            layout.invalidate()
            layout.activate()


def _restyle(view: View, theme: Theme) -> None:
    view.apply_theme(theme)
    assert isinstance(view, QWidget)
    style_plots(view, theme)

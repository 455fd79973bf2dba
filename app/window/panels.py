"""The window's docked panels (the ladder, the run form, the messages) and its status bar
(status_line.py: the message, the runs, and what feeds the window, side by side). The
Messages panel takes no room until it has something to say (:meth:`Panels.show_messages`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow, QToolBar, QWidget

from ...kernels.ladder import Shape
from ..core.store import SessionStore
from ..widgets.fitting import ElidedLabel, scrolling
from ..widgets.ladder_panel import LadderPanel
from ..widgets.messages_panel import MessagesPanel
from ..widgets.run_controls import RunControls
from ..widgets.status_line import StatusLine


class Panels:
    """Made into ``window``: the ladder bound to ``store``, the run form at ``shape`` and
    ``repeats``, the messages; each in a dock named ``dock_<name>``."""

    def __init__(self, window: QMainWindow, store: SessionStore, shape: Shape,
                 repeats: int):
        self.window = window
        self.ladder = LadderPanel()
        self.ladder.bind(store)
        self.controls = RunControls()
        self.controls.set_values(shape, repeats)
        self.messages = MessagesPanel()
        ladder = self.ladder_dock = self._dock("Ladder", "ladder", self.ladder,
                                               Qt.DockWidgetArea.LeftDockWidgetArea)
        self.run_dock = self._dock("Run", "run", scrolling(self.controls),
                                   Qt.DockWidgetArea.LeftDockWidgetArea)
        messages = self.messages_dock = self._dock("Messages", "messages", self.messages,
                                                   Qt.DockWidgetArea.BottomDockWidgetArea)
        window.resizeDocks([ladder], [440], Qt.Orientation.Horizontal)
        window.resizeDocks([messages], [110], Qt.Orientation.Vertical)
        self._messages_shown = False
        messages.hide()  # until there is a message (show_messages)

        # cut with "…" (the tooltip says it all) rather than widen the window; the
        # message, the runs and the source side by side, never over each other
        self.status_bar = StatusLine()
        window.setStatusBar(self.status_bar)
        self.run_label = ElidedLabel("")
        self.mode_label = ElidedLabel("no session")
        self.status_bar.add_part(self.run_label, 0.6)
        self.status_bar.add_part(self.mode_label, 0.4)

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea
              ) -> QDockWidget:
        dock = QDockWidget(title, self.window)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(widget)
        self.window.addDockWidget(area, dock)
        return dock

    def show_messages(self, quiet: bool) -> None:
        """The Messages panel shows once it has something to say (closed by the user
        later, it stays closed: View ▸ Panels brings it back). ``quiet`` (on stage, during
        a replay): only an error opens it; info lines (a recording has dozens) wait in the
        panel for whoever opens it."""
        if self._messages_shown or not self.messages.count():
            return
        if quiet and not self.messages.has_errors():
            return
        self._messages_shown = True
        self.messages_dock.show()

    def actions(self, toolbar: QToolBar) -> list[QAction]:
        """Show/hide actions of the docked panels and ``toolbar`` (View ▸ Panels)."""
        docks = [self.ladder_dock, self.run_dock, self.messages_dock]
        return [*(d.toggleViewAction() for d in docks), toolbar.toggleViewAction()]

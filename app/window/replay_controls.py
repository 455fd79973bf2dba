"""The replay bar in its toolbar at the bottom of the window, and the one replay speed:
what the bar shows and every replay plays at, a replay opened later included; the
preferences remember only the person's choice (on the bar)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QToolBar

from ..core.replay import Speed
from ..sources.replay import ReplaySource
from ..widgets.replay_bar import ReplayBar
from .preferences import Preferences
from .sources import WindowSources


class ReplayControls:
    """The bar plays, pauses and seeks ``sources``' replay; the toolbar shows while a
    replay is open (:meth:`opened`)."""

    def __init__(self, window: QMainWindow, prefs: Preferences):
        self.prefs = prefs
        self.speed: Speed = prefs.speed
        self.sources: WindowSources | None = None  # (the window's, once it has them)
        self.bar = ReplayBar()
        self.bar.set_speed(self.speed)
        self.bar.speed_chosen.connect(self.set_speed)
        self.bar.toggled.connect(self.toggle)
        self.bar.seek_requested.connect(self.seek_fraction)
        toolbar = QToolBar("Replay")
        toolbar.setObjectName("replay_toolbar")
        toolbar.addWidget(self.bar)
        window.addToolBar(Qt.ToolBarArea.BottomToolBarArea, toolbar)
        self.toolbar = toolbar
        toolbar.hide()

    def toggle(self) -> None:
        if self.sources is not None:
            self.sources.toggle()

    def seek_fraction(self, fraction: float) -> None:
        if self.sources is not None:
            self.sources.seek_fraction(fraction)

    def set_speed(self, speed: Speed | str, remember: bool = True) -> None:
        """Play the replay, and every replay opened after it, at ``speed``, shown on the
        bar; ``remember``: keep it in the preferences too (the person chose it on the bar;
        the command line, a talk's scene, a picture or a test do not)."""
        speed = Speed(speed)
        self.speed = speed
        if remember:
            self.prefs.speed = str(speed)
        if self.bar.current_speed() is not speed:
            # shown on the bar without its speed_chosen, which would remember it
            blocked = self.bar.speed.blockSignals(True)
            try:
                self.bar.set_speed(speed)
            finally:
                self.bar.speed.blockSignals(blocked)
        if self.sources is not None:
            self.sources.set_speed(speed)

    def opened(self, replay: ReplaySource) -> None:
        """A replay opened: the bar follows its position, the toolbar shows."""
        replay.position_changed.connect(self.bar.show_position)
        self.toolbar.show()

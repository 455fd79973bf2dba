"""Coalesced redraws: many store changes, at most one view refresh per interval, and
only of the tab on screen."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QElapsedTimer, QObject, QTimer
from PySide6.QtWidgets import QTabWidget

from ..core.store import Change
from ..views.base import View

DEFAULT_INTERVAL_MS = 33  # at most 30 redraws a second


class RedrawThrottle(QObject):
    """Call ``poke()`` whenever data changed; ``callback`` runs at most once per interval.

    The first poke after a quiet spell redraws on the next event-loop turn; pokes during
    the interval fold into one redraw at its end (leading and trailing edge).
    """

    def __init__(self, callback: Callable[[], None], interval_ms: int = DEFAULT_INTERVAL_MS,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.callback = callback
        self.interval_ms = interval_ms
        self.redraws = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._fire)
        self._since = QElapsedTimer()

    def poke(self) -> None:
        if self._timer.isActive():
            return
        if not self._since.isValid():
            wait = 0
        else:
            wait = max(0, self.interval_ms - self._since.elapsed())
        self._timer.start(int(wait))

    def flush(self) -> None:
        """Redraw now (used before screenshots and exports)."""
        self._timer.stop()
        self._fire()

    def stop(self) -> None:
        self._timer.stop()

    def _fire(self) -> None:
        self._since.restart()
        self.redraws += 1
        self.callback()


class ShownViews:
    """The tabs' views, refreshed only while shown: a hidden view keeps what changed and
    catches up when its tab is shown, or when everything is brought up to date
    (screenshots, exports). A frame then pays for the tab on screen, not for all seven."""

    def __init__(self, tabs: QTabWidget, views: Mapping[str, View]):
        self.tabs = tabs
        self.views = views
        self.owed: dict[str, set[Change]] = {}  # per hidden view: changes not yet shown
        tabs.currentChanged.connect(self._tab_shown)

    def refresh(self, changes: set[Change], everything: bool = False) -> None:
        shown = self.tabs.currentWidget()
        for name, view in self.views.items():
            owed = self.owed.pop(name, set()) | changes
            if everything or view is shown:
                if owed:
                    view.refresh(owed)
            elif owed:
                self.owed[name] = owed

    def _tab_shown(self, _index: int) -> None:
        shown = self.tabs.currentWidget()
        for name, view in self.views.items():
            if view is shown and (owed := self.owed.pop(name, None)):
                view.refresh(owed)

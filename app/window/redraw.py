"""Coalesced redraws: many store changes, at most one view refresh per interval."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer

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

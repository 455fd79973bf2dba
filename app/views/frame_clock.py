"""The animations' frame clock, and a step animation that runs on it.

Qt keeps a precise timer to the millisecond, not better. Its own animation timer, which a
QPropertyAnimation runs on, ticks every 16 ms; its expiries land on whole milliseconds, so
every eighth or ninth interval comes out near 16.9 ms (measured offscreen on an empty
widget: p50 16.0 ms, p99 16.9-17.0 ms): a frame late for a 60 Hz screen, a visible judder
in a slow sweep. Ticking every 15 ms keeps each interval between about 14.9 and 15.9 ms,
under the 16.7 ms of a 60 Hz frame. An animation here reads its progress from the time
elapsed since it started, not from the tick count, so the extra ticks draw in-between
positions; an animation never runs faster for them.
"""

from __future__ import annotations

from collections.abc import Callable

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QEasingCurve,
    QElapsedTimer,
    QObject,
    Qt,
    QTimer,
    Signal,
)

FRAME_TICK_MS = 15


class FrameTicks(QObject):
    """Told of every tick of every frame timer: the paint that follows a tick is a frame
    (what the redraw throttle keeps time with); a paint no tick asked for (the replay's
    time slider, a status line) is not."""

    ticked = Signal()


_ticks: list[FrameTicks] = []


def frame_ticks() -> FrameTicks:
    """The application's FrameTicks (made on first use, owned by the application)."""
    if not _ticks or not shiboken6.isValid(_ticks[0]):
        _ticks[:] = [FrameTicks(QCoreApplication.instance())]
    return _ticks[0]


def frame_timer(parent: QObject | None = None) -> QTimer:
    """A repeating precise timer at the frame clock's interval (not started), whose ticks
    :func:`frame_ticks` announces."""
    timer = QTimer(parent)
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(FRAME_TICK_MS)
    ticks = frame_ticks()
    timer.timeout.connect(ticks.ticked)
    return timer


class StepAnimation(QObject):
    """Runs ``apply(progress)`` on each frame tick while progress goes from 0 to 1 over a
    duration along an easing curve (InOutCubic: a step eases in and out); the last call
    is always ``apply(1.0)``."""

    def __init__(self, apply: Callable[[float], None], parent: QObject | None = None,
                 curve: QEasingCurve.Type = QEasingCurve.Type.InOutCubic) -> None:
        super().__init__(parent)
        self._apply = apply
        self._curve = QEasingCurve(curve)
        self._duration_ms = 0.0
        self._elapsed = QElapsedTimer()
        self._timer = frame_timer(self)
        self._timer.timeout.connect(self._tick)

    def start(self, duration_ms: float) -> None:
        """Progress 0 now, 1 after ``duration_ms`` (at once when that is 0 or less)."""
        self._timer.stop()
        self._duration_ms = float(duration_ms)
        if self._duration_ms <= 0:
            self._apply(1.0)
            return
        self._elapsed.start()
        self._apply(0.0)
        self._timer.start()

    def stop(self) -> None:
        """Stop where it is (progress stays at its last value)."""
        self._timer.stop()

    def is_running(self) -> bool:
        return self._timer.isActive()

    def _tick(self) -> None:
        t = self._elapsed.nsecsElapsed() / 1e6 / self._duration_ms
        if t >= 1.0:
            self._timer.stop()
            self._apply(1.0)
        else:
            self._apply(self._curve.valueForProgress(t))

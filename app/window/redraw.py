"""Coalesced redraws: many store changes, at most one view refresh per interval, and
only of the tab on screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QTabWidget, QWidget

from ..core.store import Change
from ..views.base import View
from ..views.frame_clock import FRAME_TICK_MS, frame_ticks

if TYPE_CHECKING:
    from .view_tabs import ViewTabs

DEFAULT_INTERVAL_MS = 33  # at most 30 redraws a second
FRAME_MS = FRAME_TICK_MS
NEXT_PART_MS = 0.75 * FRAME_MS  # a redraw spread over frames: one part per frame


class RedrawThrottle(QObject):
    """Call ``poke()`` whenever data changed; ``callback`` runs at most once per interval.

    The first poke after a quiet spell redraws on the next event-loop turn; pokes during
    the interval fold into one redraw at its end (leading and trailing edge).

    With :meth:`follow_frames` the redraws keep time with the window's frames: one that
    falls due while frames come (an animation on the frame clock, app/views/frame_clock.py)
    runs right after the next frame's paint, so its work and the repaint it asks for are
    done before the frame after; a redraw due at a random moment would hold up the paint
    that falls due during it, and that late frame is the stutter a 16x replay showed. A
    frame is the window's first paint after a tick of the frame clock: the other paints
    (the replay's time slider, a status line, a redraw's own repaint) come at any moment,
    and a redraw that followed one of them ran into the next tick. Without frames it runs
    on its timer, as before.
    """

    def __init__(self, callback: Callable[[], None], interval_ms: int = DEFAULT_INTERVAL_MS,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.callback = callback
        self.interval_ms = interval_ms
        self.redraws = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._fire)
        self._clock = QElapsedTimer()
        self._clock.start()
        self._last_fire_ms: float | None = None
        self._last_frame_ms = -1e9
        self._ticked = False  # the frame clock ticked: the window's next paint is a frame
        self._due_ms: float | None = None  # armed: the earliest moment to fire
        self._posted = False  # a fire is queued behind a paint

    def follow_frames(self, window: QWidget) -> None:
        """Fire right after the frames of ``window`` (a top-level widget)."""
        window.installEventFilter(self)
        frame_ticks().ticked.connect(self._tick)

    def _tick(self) -> None:
        self._ticked = True

    def poke(self, soon: bool = False) -> None:
        """Data changed. ``soon``: a redraw left parts for later frames; the next part
        runs after the next frame, not a whole interval later."""
        now = self._clock.nsecsElapsed() / 1e6
        gap = NEXT_PART_MS if soon else self.interval_ms
        due = now if self._last_fire_ms is None else max(now, self._last_fire_ms + gap)
        if self._due_ms is not None and self._due_ms <= due:
            return  # already armed, as early or earlier
        self._due_ms = due
        # painting at a frame rate: wait for the paint after ``due`` (the fallback a frame
        # later only if none comes); else fire when due
        painting = now - self._last_frame_ms < 2 * FRAME_MS
        self._timer.start(int(due - now + (FRAME_MS if painting else 0)))

    def flush(self) -> None:
        """Redraw now (used before screenshots and exports)."""
        self._timer.stop()
        self._fire()

    def stop(self) -> None:
        self._timer.stop()
        self._due_ms = None

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest and self._ticked:  # a frame's paint
            self._ticked = False
            now = self._last_frame_ms = self._clock.nsecsElapsed() / 1e6
            if self._due_ms is not None and not self._posted \
                    and now >= self._due_ms - FRAME_MS / 2:
                self._posted = True
                QTimer.singleShot(0, self, self._fire_after_paint)  # queued behind it
        return False

    def _fire_after_paint(self) -> None:
        self._posted = False
        if self._due_ms is not None:
            self._timer.stop()
            self._fire()

    def _fire(self) -> None:
        self._due_ms = None
        self._last_fire_ms = self._clock.nsecsElapsed() / 1e6
        self.redraws += 1
        self.callback()


class ShownViews:
    """The tabs' views, refreshed only while shown: a hidden view keeps what changed and
    catches up when its tab is shown, or when everything is brought up to date
    (screenshots, exports). A frame then pays for the tab on screen, not for all seven.
    A view not made yet (:class:`~gemmscope.app.window.view_tabs.ViewTabs`) is owed
    what changed like a hidden one, and catches up the same way once made."""

    def __init__(self, tabs: QTabWidget, views: ViewTabs):
        self.tabs = tabs
        self.views = views
        self.owed: dict[str, set[Change]] = {}  # per hidden view: changes not yet shown
        tabs.currentChanged.connect(self._tab_shown)

    def refresh(self, changes: set[Change], everything: bool = False) -> None:
        shown = self.tabs.currentWidget()
        made = self.views.made
        for name in self.views:
            owed = self.owed.pop(name, set()) | changes
            view = made.get(name)
            if view is not None and (everything or view is shown):
                if owed:
                    view.refresh(owed)
            elif owed:
                self.owed[name] = owed

    def shown_view(self) -> View | None:
        view = self.tabs.currentWidget()
        return view if isinstance(view, View) else None

    def _tab_shown(self, _index: int) -> None:
        shown = self.tabs.currentWidget()
        for name, view in self.views.made.items():
            if view is shown and (owed := self.owed.pop(name, None)):
                view.refresh(owed)

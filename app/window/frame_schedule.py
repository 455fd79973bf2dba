"""What one coalesced frame of the window draws: the store's changes gathered between
frames, the per-repeat stream every frame, the slow parts (tables, bars, the sweep) at
most every SLOW_INTERVAL_MS and never in the same frame as the stream, and a redraw too
large for one frame drawn in parts, one a frame, each right after a paint."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from PySide6.QtCore import QElapsedTimer

from ..core.store import Change
from ..views.base import View
from .redraw import RedrawThrottle, ShownViews

FAST_CHANGES = frozenset({Change.STREAM, Change.RUN})
SLOW_INTERVAL_MS = 200  # tables, bars, sweep: at most 5 redraws a second
LADDER_TABLE_CHANGES = frozenset({Change.LADDER, Change.HEADER})  # what fills the table


class FrameSchedule:
    """The window's redraws: ``take_changes`` gives the store's changes since the last
    frame, ``refresh`` draws a set of them (the window's panels and the tab on screen,
    through :meth:`refresh_shown`), ``throttle`` asks for the next frame."""

    def __init__(self, take_changes: Callable[[], set[Change]],
                 refresh: Callable[[set[Change]], None], shown_views: ShownViews,
                 throttle: RedrawThrottle):
        self.take_changes = take_changes
        self.refresh = refresh
        self.shown_views = shown_views
        self.throttle = throttle
        self.pending: set[Change] = set()
        self.later: set[Change] = set()  # for the tab, a frame after the table
        self.flushing = False
        self._frame_clock = QElapsedTimer()
        self._frame_clock.start()
        self._last_slow_ms = -SLOW_INTERVAL_MS
        self.observer: Callable[[float], None] | None = None  # told each redraw's ms

    def timed_redraw(self, paint: Callable[[], None]) -> None:
        """A redraw, then ``paint`` (one paint per redraw, not two), timed for the
        observer (benchmarks)."""
        t0 = time.perf_counter()
        self.redraw()
        paint()
        if self.observer is not None:
            self.observer((time.perf_counter() - t0) * 1e3)

    def redraw(self) -> None:
        """One coalesced frame. The per-repeat stream may redraw every frame (≤ 30 Hz);
        tables, bars and the sweep at most every SLOW_INTERVAL_MS, and never in the same
        frame as the stream, so no single frame does both. What one frame would not have
        time for is drawn in parts, one a frame, each right after a paint: the ladder
        table, then the tab on screen, then the parts that tab left for later frames; new
        changes wait until the parts are done."""
        self.pending |= self.take_changes()
        if self.flushing:  # everything now, in one go
            self.pending |= self.later
            self.later = set()
        elif self.next_part():
            if self.parts_left() or self.pending:
                self.throttle.poke(soon=self.parts_left())
            return
        if not self.pending:
            return
        slow = self.pending - FAST_CHANGES
        now_ms = self._frame_clock.elapsed()
        if slow and (self.flushing or Change.HEADER in slow
                     or now_ms - self._last_slow_ms >= SLOW_INTERVAL_MS):
            changes = set(self.pending) if self.flushing else slow
            self._last_slow_ms = now_ms
        elif self.pending & FAST_CHANGES:
            changes = self.pending & FAST_CHANGES
        else:
            changes = set()
        self.pending -= changes
        if changes:
            self.refresh(changes)
        if self.parts_left():
            self.throttle.poke(soon=True)  # the next part after the next frame
        elif self.pending:
            self.throttle.poke()  # the rest in a later frame

    def refresh_shown(self, changes: set[Change]) -> None:
        """The tab on screen: this frame, or (when the ladder table fills this frame) the
        next one."""
        if changes & LADDER_TABLE_CHANGES and not self.flushing:
            self.later |= changes  # the table fills this frame; the tab the next
        else:
            self.shown_views.refresh(changes | self.later, everything=self.flushing)
            self.later = set()

    def parts_left(self) -> bool:
        view = self.shown_views.shown_view()
        return bool(self.later) or (view is not None and view.parts_left())

    def next_part(self) -> bool:
        """Draw the next part of a redraw spread over frames; False if none was left."""
        if self.later:
            changes, self.later = self.later, set()
            self.shown_views.refresh(changes)
            return True
        view = self.shown_views.shown_view()
        if view is not None and view.parts_left():
            view.step()
            return True
        return False

    def flush(self, views: Iterable[View]) -> None:
        """Every change drawn now, in one go, and ``views`` settled (no parts left)."""
        self.flushing = True
        try:
            self.throttle.flush()
            for view in views:
                view.settle()
        finally:
            self.flushing = False

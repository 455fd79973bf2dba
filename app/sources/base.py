"""What every event source offers the window: start, stop, and events into one sink.

Two sources exist: :class:`~gemmscope.app.sources.live.LiveSource` (a runner process,
local or started by a command line the user gave) and
:class:`~gemmscope.app.sources.replay.ReplaySource` (a recording played in time). Both
deliver validated events, already on the session's time axis, to the sink they were made
with; the window never knows which one feeds its store except to offer what only one can
do (runs, or play/pause/seek).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

EventSink = Callable[[dict[str, Any]], None]


class EventSource(Protocol):
    def start(self) -> None:
        """Begin delivering events."""

    def stop(self) -> None:
        """Stop delivering events and release what the source holds (bounded wait)."""

    def describe(self) -> str:
        """One line for the status bar: what feeds the window."""

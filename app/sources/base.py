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
from typing import Protocol

from ...kernels.protocol import EventRecord, TelemetryBlock

# the one sink: event records, and (from a recording) blocks of its NVML samples
EventSink = Callable[[EventRecord | TelemetryBlock], None]


class EventSource(Protocol):
    def start(self) -> None:
        """Begin delivering events."""

    def stop(self) -> None:
        """Stop delivering events and release what the source holds (bounded wait)."""

    def describe(self) -> str:
        """One line for the status bar: what feeds the window."""

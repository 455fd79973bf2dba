"""Replay of a recorded session: which events are due at a given play position.

Qt-free: the app's replay controller ticks it from a QTimer with wall-clock seconds.
Times come from the events' ``t``, which the reader has already put on the session's time
axis (``kernels.protocol.Timeline`` joins runner restarts); play times only never go
backwards (telemetry, sampled on its own thread, can arrive a little out of order).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any


class Speed(StrEnum):
    X1 = "1x"
    X4 = "4x"
    X16 = "16x"
    INSTANT = "instant"

    @property
    def factor(self) -> float:
        return {"1x": 1.0, "4x": 4.0, "16x": 16.0, "instant": math.inf}[self.value]


def timeline(events: Sequence[dict[str, Any]]) -> list[float]:
    """Play time of each event: its ``t``, never earlier than the event before it."""
    times: list[float] = []
    last = 0.0
    for ev in events:
        last = max(last, float(ev["t"]))
        times.append(last)
    return times


class ReplayClock:
    """Play position over a list of events; delivers due events to a sink."""

    def __init__(self, events: Sequence[dict[str, Any]], sink: Callable[[dict[str, Any]], None]):
        self.events = list(events)
        self.times = timeline(self.events)
        self.sink = sink
        self.speed = Speed.X1
        self.playing = False
        self.position_s = 0.0
        self.next_index = 0  # events before this index were delivered

    @property
    def duration_s(self) -> float:
        return self.times[-1] if self.times else 0.0

    @property
    def finished(self) -> bool:
        return self.next_index >= len(self.events)

    def play(self) -> None:
        self.playing = True
        if self.speed is Speed.INSTANT:
            self.advance(0.0)

    def pause(self) -> None:
        self.playing = False

    def set_speed(self, speed: Speed) -> None:
        self.speed = Speed(speed)
        if self.playing and self.speed is Speed.INSTANT:
            self.advance(0.0)

    def advance(self, wall_dt_s: float) -> int:
        """Move the position by wall time × speed; deliver due events; returns how many."""
        if not self.playing:
            return 0
        if self.speed is Speed.INSTANT:
            self.position_s = self.duration_s
        else:
            self.position_s = min(self.duration_s,
                                  self.position_s + max(0.0, wall_dt_s) * self.speed.factor)
        n = self._deliver_until(self.position_s)
        if self.finished:
            self.playing = False
        return n

    def seek(self, position_s: float, reset_sink: Any = None) -> None:
        """Jump to a play position. Going back replays from the start into a fresh sink.

        ``reset_sink`` is called (no arguments) before replaying from the start; it is
        how the owner clears the store the sink feeds.
        """
        position_s = min(max(0.0, position_s), self.duration_s)
        if position_s < self.position_s or self.next_index == 0:
            if reset_sink is not None:
                reset_sink()
            self.next_index = 0
        self.position_s = position_s
        self._deliver_until(position_s)

    def _deliver_until(self, position_s: float) -> int:
        end = bisect.bisect_right(self.times, position_s)
        start = self.next_index
        for ev in self.events[start:end]:
            self.sink(ev)
        self.next_index = max(start, end)
        return end - start

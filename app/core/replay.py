"""Replay of a recorded session: which events are due at a given play position.

Qt-free: the app's replay controller ticks it from a QTimer with wall-clock seconds.
Times come from the events' ``t``, which the reader has already put on the session's time
axis (``kernels.protocol.timeline`` joins runner restarts); play times only never go
backwards (telemetry, sampled on its own thread, can arrive a little out of order). A
recording's NVML samples come as blocks of columns; a block is delivered in parts, each
part the samples due by then.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, Protocol

import numpy as np

from ...kernels.protocol import TelemetryBlock


class Timed(Protocol):
    @property
    def t(self) -> float: ...


class Speed(StrEnum):
    X1 = "1x"
    X4 = "4x"
    X16 = "16x"
    INSTANT = "instant"

    @property
    def factor(self) -> float:
        return {"1x": 1.0, "4x": 4.0, "16x": 16.0, "instant": math.inf}[self.value]


def timeline(events: Sequence[Timed]) -> list[float]:
    """Play time of each event (of a block: its first sample's), never earlier than the
    event before it."""
    times: list[float] = []
    last = 0.0
    for ev in events:
        t = ev.t
        if t > last:
            last = t
        times.append(last)
    return times


class ReplayClock:
    """Play position over a list of events; delivers due events to a sink."""

    def __init__(self, events: Sequence[Any], sink: Callable[[Any], None],
                 times: list[float] | None = None):
        """``times``: :func:`timeline` of the events, where a worker has made it already."""
        self.events = events if isinstance(events, list) else list(events)
        self.times = times if times is not None and len(times) == len(self.events) \
            else timeline(self.events)
        self.sink = sink
        self.speed = Speed.X1
        self.playing = False
        self.position_s = 0.0
        self.next_index = 0  # events before this index were delivered
        # a block delivered in part: (its index, the next sample) and its play times
        self._part: tuple[int, int] | None = None
        self._part_times: np.ndarray | None = None
        self._times_of: TelemetryBlock | None = None
        columns = {id(b.columns): b.columns for b in self.events
                   if isinstance(b, TelemetryBlock) and b.stop > b.start}
        ends = [float(np.max(c.t[:len(c)])) for c in columns.values()]
        self._end_s = max([self.times[-1], *ends]) if self.times else 0.0

    # a call delivers events for at most this long when given a budget; the rest follow
    # on later calls, so a big recording never holds the GUI thread
    CHECK_EVERY = 32  # events between two looks at the clock (a block of samples is one)

    @property
    def duration_s(self) -> float:
        return self._end_s

    @property
    def finished(self) -> bool:
        return self.next_index >= len(self.events)

    @property
    def behind(self) -> bool:
        """Events are due at the position but not delivered yet (a budget ran out)."""
        end = bisect.bisect_right(self.times, self.position_s)
        if self.next_index >= end:
            return False
        if self._part is not None and self._part[0] == self.next_index == end - 1:
            return self._due(self.events[self.next_index], self.position_s) > self._part[1]
        return True

    def play(self, deliver: bool = True) -> None:
        self.playing = True
        if self.speed is Speed.INSTANT and deliver:
            self.advance(0.0)

    def pause(self) -> None:
        self.playing = False

    def set_speed(self, speed: Speed, deliver: bool = True) -> None:
        self.speed = Speed(speed)
        if self.playing and self.speed is Speed.INSTANT and deliver:
            self.advance(0.0)

    def advance(self, wall_dt_s: float, budget_s: float | None = None) -> int:
        """Move the position by wall time × speed; deliver due events (for at most
        ``budget_s`` of wall time when given); returns how many were delivered."""
        if not self.playing:
            return 0
        if self.speed is Speed.INSTANT:
            self.position_s = self.duration_s
        else:
            self.position_s = min(self.duration_s,
                                  self.position_s + max(0.0, wall_dt_s) * self.speed.factor)
        n = self._deliver_until(self.position_s, budget_s)
        if self.finished:
            self.playing = False
        return n

    def catch_up(self, budget_s: float | None = None) -> int:
        """Deliver events due at the position that a budget left over."""
        return self._deliver_until(self.position_s, budget_s)

    def seek(self, position_s: float, reset_sink: Any = None,
             budget_s: float | None = None) -> None:
        """Jump to a play position. Going back replays from the start into a fresh sink.

        ``reset_sink`` is called (no arguments) before replaying from the start; it is
        how the owner clears the store the sink feeds. With ``budget_s`` the events up to
        the position may arrive over several calls (:meth:`catch_up`).
        """
        position_s = min(max(0.0, position_s), self.duration_s)
        if position_s < self.position_s or self.next_index == 0:
            if reset_sink is not None:
                reset_sink()
            self.next_index = 0
            self._part = None
        self.position_s = position_s
        self._deliver_until(position_s, budget_s)

    def _deliver_until(self, position_s: float, budget_s: float | None = None) -> int:
        end = bisect.bisect_right(self.times, position_s)
        start = i = self.next_index
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        while i < end:
            stop = end if deadline is None else min(end, i + self.CHECK_EVERY)
            while i < stop:
                ev = self.events[i]
                if isinstance(ev, TelemetryBlock) and not self._deliver_block(i, ev,
                                                                              position_s):
                    stop = end = i  # the rest of this block is not due yet
                    break
                if not isinstance(ev, TelemetryBlock):
                    self.sink(ev)
                i += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.next_index = max(start, i)
        return i - start

    def _deliver_block(self, index: int, block: TelemetryBlock, position_s: float) -> bool:
        """Deliver the block's samples due at the position; True when it is done."""
        first = self._part[1] if self._part is not None and self._part[0] == index \
            else block.start
        due = self._due(block, position_s)
        if due > first:
            self.sink(block.part(first, due))
        if due >= block.stop:
            self._part = None
            return True
        self._part = (index, max(first, due))
        return False

    def _due(self, block: TelemetryBlock, position_s: float) -> int:
        """The end of the block's samples due at the position (play times never go back)."""
        if position_s >= self._end_s:
            return block.stop
        if self._times_of is not block:
            self._times_of = block
            self._part_times = np.maximum.accumulate(block.times())
        assert self._part_times is not None
        return block.start + int(np.searchsorted(self._part_times, position_s, "right"))

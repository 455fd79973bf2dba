"""The GPU idling on purpose: a sustained trial's cool-down, a burst run's settle. Either
says it is still going at least every HEARTBEAT_S, because the session's watchdog ends
a runner that says nothing for a minute."""

from __future__ import annotations

from collections.abc import Callable

HEARTBEAT_S = 10.0


def idle(seconds: float, say: Callable[[float], None], sleep: Callable[[float], None],
         clock: Callable[[], float]) -> float:
    """Do nothing on the GPU for ``seconds``, calling ``say(seconds left)`` first and
    every HEARTBEAT_S; returns the time it took on ``clock``."""
    t0 = clock()
    left = seconds
    while left > 0:
        say(left)
        step = min(left, HEARTBEAT_S)
        sleep(step)
        left -= step
    return clock() - t0

"""The words of a runner session's interface: its states and defaults, where its events
go (the sink, the tap), and a failure with who explains one (a transport that knows more
than an exit code). :mod:`.session` drives the runner with them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ..protocol.decoding import EventRecord

EventSink = Callable[[EventRecord], None]
DEFAULT_WATCHDOG_S = 60.0
DEFAULT_START_TIMEOUT_S = 180.0  # the first compile of CuPy's own kernels takes a while
MAX_CONSECUTIVE_FAILURES = 3
# a runner whose stdout closed has this long to exit, and one that exited this long for
# its pipes to close (a child of it may hold them), before its process group is ended
EXIT_GRACE_S = 2.0
# events that do not show the run is progressing: the NVML sampler is its own thread and
# keeps sampling while the run's thread is stuck in a kernel
WATCHDOG_IGNORES = frozenset({"telemetry", "info"})


def default_runner_command(telemetry_hz: float | None = None) -> list[str]:
    """This Python's runner: ``python -m gemmscope.kernels runner``."""
    argv = [sys.executable, "-m", "gemmscope.kernels", "runner"]
    if telemetry_hz is not None:
        argv += ["--telemetry-hz", f"{telemetry_hz:g}"]
    return argv


class Tap(Protocol):
    """Where every event line goes (``app.core.session_file.SessionWriter``)."""

    def write_line(self, line: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a runner stopped; ``permanent``: starting it again will not help."""

    message: str
    permanent: bool


class FailureExplainer(Protocol):
    """Says why the runner failed, where its transport knows better than an exit code
    (``kernels/drive/remote.py``: a runner over ssh)."""

    def exited(self, exit_code: int | None, stderr_tail: str,
               header_seen: bool) -> Failure: ...

    def incompatible(self, reason: str) -> str: ...


class SessionState(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    RUNNING = "running"
    FAILED = "failed"  # gave up after repeated failures; submit() tries again

"""What drives the runners of one session, whether one GPU's (:class:`~.session.RunnerSession`)
or several's (:class:`~.devices.DeviceSet`): the one interface the CLI's ``bench`` and
``record`` and the app's live source use, so neither needs to know which it has."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ..protocol.plan import RunRequest
from ..protocol.records import Session
from .session_types import FailureExplainer, SessionState


class Driver(Protocol):
    state_listeners: list[Callable[[SessionState], None]]

    @property
    def state(self) -> SessionState: ...

    @property
    def header(self) -> Session | None:
        """The session's header, once written."""

    @property
    def idle(self) -> bool:
        """Nothing queued or in flight (or given up)."""

    @property
    def pending_runs(self) -> int: ...

    @property
    def restarts(self) -> int: ...

    @property
    def lost_runs(self) -> int:
        """Runs that ended in a runner failure (crash, watchdog)."""

    @property
    def failure_text(self) -> str:
        """The latest failure's message ("no reason given" while none)."""

    @property
    def explainer(self) -> FailureExplainer | None:
        """Says why a runner failed, where its transport knows (ssh); None for a local one."""

    def describe(self) -> str: ...

    def now(self) -> float:
        """Seconds since the session started: the time axis of every event."""

    def start(self) -> None: ...

    def submit(self, requests: Iterable[RunRequest]) -> None: ...

    def stop_runs(self) -> None: ...

    def send(self, command: dict[str, Any]) -> None:
        """A command that is not a run (``ping``, ``levels``, ``telemetry``)."""

    def emit(self, event: dict[str, Any]) -> None:
        """An event of the session's own, on the session clock."""

    def pump(self, timeout_s: float = 0.0) -> int: ...

    def wait_ready(self, poll_s: float = 0.1) -> Session: ...

    def wait_idle(self, poll_s: float = 0.1) -> None: ...

    def close(self, wait_s: float = 5.0) -> None: ...

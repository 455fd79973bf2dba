"""The live source: a :class:`~gemmscope.kernels.drive.session.RunnerSession` adapted to Qt.

The session (Qt-free, shared with ``gemmscope bench`` and ``record``) owns the runner
process, the queue, the watchdog, restarts, the clock and the recording tap. This adapter
only pumps it on the GUI thread: the session's reader thread wakes it through a queued
signal, and a slow timer checks the watchdog when the runner is silent.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from ...kernels import drive as ssh
from ...kernels import protocol as rec
from ...kernels.drive import (
    DEFAULT_WATCHDOG_S,
    MAX_CONSECUTIVE_FAILURES,
    DeviceSet,
    DeviceSpec,
    Driver,
    RunnerSession,
    RunRequest,
    SessionState,
    Tap,
)
from ...kernels.protocol import EventRecord, RecordingFailed
from ...kernels.results import counted
from .base import EventSink

WATCHDOG_TICK_MS = 250


class LiveSource(QObject):
    notice = Signal(str)  # a readable line for the status bar
    state_changed = Signal(str)  # a SessionState value
    idle = Signal()  # nothing queued and nothing in flight (or given up)
    _woken = Signal()  # from the session's reader thread

    def __init__(self, sink: EventSink, command: list[str] | None = None,
                 tap: Tap | None = None, watchdog_s: float = DEFAULT_WATCHDOG_S,
                 remote: str | None = None, devices: list[DeviceSpec] | None = None,
                 split: bool = False, parent: QObject | None = None):
        super().__init__(parent)
        self.sink = sink
        self.remote = remote  # the host, when ``command`` is ssh to it
        self.session: Driver
        # a runner may take ``watchdog_s`` to start, three times: the whole start's bound
        start_s = watchdog_s * MAX_CONSECUTIVE_FAILURES
        if devices:  # one runner per GPU, one session (``command`` is in each spec)
            self.session = DeviceSet(self._on_event, devices, tap=tap, split=split,
                                     watchdog_s=watchdog_s, start_timeout_s=start_s,
                                     wakeup=self._wake)
        else:
            options = ssh.session_options(remote) if remote else {}
            self.session = RunnerSession(self._on_event, command, tap=tap,
                                         watchdog_s=watchdog_s, start_timeout_s=start_s,
                                         wakeup=self._wake, **options)
        self.session.state_listeners.append(self._on_state)
        self._wake_pending = False
        self._was_busy = False
        self._woken.connect(self._pump, Qt.ConnectionType.QueuedConnection)
        self._timer = QTimer(self)
        self._timer.setInterval(WATCHDOG_TICK_MS)
        self._timer.timeout.connect(self._pump)

    # ----------------------------------------------------------------- EventSource
    def start(self) -> None:
        self.session.start()
        self._timer.start()

    def stop(self) -> None:
        """Quit the runner, keeping every line it writes up to its exit (bounded wait)."""
        self._timer.stop()
        self.session.close(wait_s=2.0)

    def describe(self) -> str:
        if isinstance(self.session, DeviceSet):
            return f"runners on {self.session.describe()}"
        if self.remote:
            return f"runner on {self.remote} over ssh"
        return f"runner: {self.session.describe()}"

    # ----------------------------------------------------------------- runs
    @property
    def state(self) -> SessionState:
        return self.session.state

    @property
    def pending_runs(self) -> int:
        return self.session.pending_runs

    @property
    def restarts(self) -> int:
        return self.session.restarts

    def submit(self, requests: Iterable[RunRequest]) -> None:
        self._was_busy = True  # idle is said once the runs end, however they end
        self.session.submit(requests)
        self._timer.start()
        self._after_pump()

    def stop_runs(self) -> None:
        self.session.stop_runs()
        self._after_pump()

    # ----------------------------------------------------------------- plumbing
    def _wake(self) -> None:
        if not self._wake_pending:
            self._wake_pending = True
            self._woken.emit()

    def _pump(self) -> None:
        self._wake_pending = False
        try:
            self.session.pump()
        except RecordingFailed as exc:  # a full disk: said; the runs go on, unrecorded
            self.notice.emit(f"recording stopped: {exc.strerror}")
        self._after_pump()

    def _after_pump(self) -> None:
        if self.session.idle and self._was_busy:
            self._was_busy = False
            self.idle.emit()
        elif not self.session.idle:
            self._was_busy = True

    def _on_state(self, state: SessionState) -> None:
        self.state_changed.emit(str(state))

    def _on_event(self, event: EventRecord) -> None:
        if isinstance(event, rec.Session):
            name = event.device.name if event.device is not None else None
            on = f" on {self.remote}" if self.remote else ""
            if event.devices is not None and len(event.devices) > 1:
                name = counted(len(event.devices), "GPU")
            self.notice.emit(f"runner started{on} ({name or 'no GPU'})")
        elif isinstance(event, rec.Restart):
            self.notice.emit(f"runner restarted ({event.restarts} so far)")
        elif isinstance(event, rec.Error):
            where = f" ({event.level})" if event.level is not None else ""
            self.notice.emit(f"{event.kind}{where}: {event.message}")
        elif isinstance(event, rec.Info) and event.gave_up:
            # over ssh the reason (host unreachable, connection lost: Run again to
            # reconnect) says more than the count of failures
            self.notice.emit(self.session.failure_text if self.remote else event.message)
        self.sink(event)

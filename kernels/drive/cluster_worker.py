"""The worker side of the cluster engine (kernels/drive/cluster.py): one runner per Dask worker.

Needs Dask distributed (the ``cluster`` extra); imported by the workers when they unpickle
the plugin and the task, and by the client only when ``--cluster`` is given. No Qt.

Each worker drives one GPU (``CUDA_VISIBLE_DEVICES`` set when it was started) through one
:class:`~gemmscope.kernels.drive.session.RunnerSession`, kept by :class:`RunnerPlugin` across
tasks, so the runner (and CuPy's compile cache) lives as long as the worker. A task,
:func:`run_on_worker`, is one run: it returns every event the runner wrote since the
previous task (telemetry included), its runner's header and where it ran.
"""

from __future__ import annotations

import os
import socket
import threading
from collections import deque
from typing import Any

from distributed import WorkerPlugin, get_worker

from ..protocol.decoding import EventRecord, to_builtins
from ..protocol.plan import RunRequest
from .cluster_names import PLUGIN_NAME, STARTED_TOPIC
from .session import RunnerSession, default_runner_command
from .session_types import DEFAULT_WATCHDOG_S

MAX_HELD_EVENTS = 200_000  # events a worker holds between two tasks (telemetry at 50 Hz)


class RunnerPlugin(WorkerPlugin):
    """Keeps one runner session per worker; started at the first run, closed with the
    worker. ``command``: the runner (None: the worker's own Python's runner)."""

    name = PLUGIN_NAME

    def __init__(self, command: list[str] | None = None,
                 watchdog_s: float = DEFAULT_WATCHDOG_S,
                 telemetry_hz: float | None = None) -> None:
        self.command = command
        self.watchdog_s = watchdog_s
        self.telemetry_hz = telemetry_hz

    def setup(self, worker: Any) -> None:
        # made here, on the worker: the plugin travels pickled, without them
        self._session: RunnerSession | None = None
        self._events: deque[dict[str, Any]] = deque(maxlen=MAX_HELD_EVENTS)
        self.lock = threading.Lock()  # one run at a time on this GPU

    def teardown(self, worker: Any) -> None:
        if self._session is not None:
            self._session.close(wait_s=2.0)
            self._session = None

    def session(self) -> RunnerSession:
        if self._session is None:
            command = self.command or default_runner_command(self.telemetry_hz)
            self._session = RunnerSession(self._keep, command,
                                          watchdog_s=self.watchdog_s,
                                          start_timeout_s=max(self.watchdog_s, 60.0))
        return self._session

    def _keep(self, event: EventRecord) -> None:
        """The runner's events travel to the client as JSON values (the client decodes
        them into records: its edge)."""
        self._events.append(to_builtins(event))

    def note(self, event: dict[str, Any]) -> None:
        """An event of this worker's own, sent with the run's."""
        self._events.append(event)

    def take(self) -> list[dict[str, Any]]:
        events = list(self._events)
        self._events.clear()
        return events


def run_on_worker(request: RunRequest) -> dict[str, Any]:
    """One run on this worker's runner (a Dask task); see the module docstring."""
    worker = get_worker()
    plugin = worker.plugins[PLUGIN_NAME]
    assert isinstance(plugin, RunnerPlugin)
    with plugin.lock:
        # said to the scheduler: a run lost with its worker had started (a task that
        # only waited on that worker is sent again by the client)
        worker.log_event(STARTED_TOPIC, {"key": str(worker.get_current_task())})
        session = plugin.session()
        failure = None
        try:
            session.wait_ready()
            session.submit([request])
            session.wait_idle()
        except RuntimeError as exc:  # the runner did not start: the run is lost, and said
            failure = str(exc)
            plugin.note({"type": "error", "t": session.now(), "kind": "runner_crash",
                         "message": f"{failure}; the run of {request.describe()} was not "
                                    "made", **request.where()})
        header = to_builtins(session.header) if session.header is not None else None
        return {"events": plugin.take(), "now": session.now(), "header": header,
                "failure": failure, "worker": worker.address, "host": socket.gethostname(),
                "gpu": os.environ.get("CUDA_VISIBLE_DEVICES")}

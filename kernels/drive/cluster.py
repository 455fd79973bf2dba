"""A cluster engine for sweeps: the runs of a plan spread over Dask workers, one per GPU,
their events merged into one session as each run completes. No Qt.

Dask distributed is optional (the ``cluster`` extra) and imported only here and in
:mod:`cluster_worker`, when ``--cluster`` is given; the GPU machines need it only where
they run a worker. docs/cluster.md says how to start the scheduler and the workers
(kernels/drive/cluster_serve.py), and who can run code on them: the address and its TLS
settings are checked before anything connects (kernels/drive/cluster_address.py).

The client (``gemmscope record --cluster ADDRESS``) registers
:class:`~gemmscope.kernels.drive.cluster_worker.RunnerPlugin` (each worker keeps its own runner
across tasks), submits one task per (level, shape) run asking for one ``GPU`` resource,
and takes the results in the order they complete (``as_completed``). Each run's events
come back as a batch and are written at once, on the client's time axis (the worker's
session time shifted so that the batch ends when it arrived), each with the ``device``
(an index into the session's ``devices``), ``host`` and ``worker`` it ran on. The first
batch's runner header becomes the file's header; a GPU seen later is announced by a
``device`` event. A worker lost with a run in flight is an ``error`` event (kind
``worker_lost``) naming the run and the worker; the other runs go on. Runs that were only
queued on the lost worker (the scheduler hands a worker more than it runs at once) had
not begun, so they are sent again (at most ``MAX_SENDS`` times); the workers say when a
run begins (the ``gemmscope-run-started`` event topic), which tells the two apart.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..protocol import records as rec
from ..protocol.decoding import encode, from_builtins, of
from ..protocol.events import PROTOCOL_VERSION, ErrorKind, ProtocolError
from ..protocol.plan import RunRequest
from ..protocol.text_safety import shown
from .cluster_address import SchedulerAddress
from .cluster_names import PLUGIN_NAME, STARTED_TOPIC
from .devices import HEADER_FIELDS
from .session_types import DEFAULT_WATCHDOG_S, EventSink, Tap

CONNECT_TIMEOUT_S = 30.0
MAX_SENDS = 3  # a run whose worker died before it began is sent again, at most this often
ALLOWED_FAILURES = "distributed.scheduler.allowed-failures"


class ClusterError(RuntimeError):
    """The cluster cannot take the runs (no Dask, no scheduler, no GPU worker)."""


@dataclass(slots=True)
class Merger:
    """Writes the batches of several workers as one session (see the module docstring)."""

    on_event: EventSink
    tap: Tap | None = None
    t0: float = field(default_factory=time.monotonic)
    devices: dict[str, int] = field(default_factory=dict)  # worker address -> index
    hosts: dict[str, str] = field(default_factory=dict)  # worker address -> host
    header: dict[str, Any] | None = None
    _held: list[dict[str, Any]] = field(default_factory=list)

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 6)

    def emit(self, event: dict[str, Any]) -> None:
        """An event of the client's own, on its clock (held until the header exists)."""
        event = {"type": event["type"], "t": self.now(),
                 **{k: v for k, v in event.items() if k not in ("type", "t")}}
        if self.header is None:
            self._held.append(event)
        else:
            self._pass(event)

    def batch(self, out: dict[str, Any]) -> None:
        """One task's answer: the device it ran on (announced when new), then its events
        shifted onto this clock."""
        index = self._device(out)
        shift = self.now() - float(out["now"])
        place = {"device": index, "host": out.get("host"), "worker": out.get("worker")}
        for event in out["events"]:
            if event["type"] == "session":
                continue  # its runner's header: the device entry has it
            self._pass({**event, "t": round(max(0.0, float(event["t"]) + shift), 6),
                        **place})

    def where(self, worker: str | None) -> dict[str, Any]:
        """The place fields of a worker seen before (for a lost run's error)."""
        if worker is None or worker not in self.devices:
            return {"worker": worker} if worker else {}
        return {"device": self.devices[worker], "host": self.hosts.get(worker),
                "worker": worker}

    def close(self) -> None:
        """Nothing ran (every worker failed before a header): the held events still go
        out, under a header that lists no GPU."""
        if self.header is None and self._held:
            self._write_header({"type": "session", "t": 0.0, "protocol": PROTOCOL_VERSION,
                                "created": "", "levels": {}, "device": None, "devices": []})

    # ------------------------------------------------------------------ plumbing
    def _device(self, out: dict[str, Any]) -> int:
        worker = str(out["worker"])
        if worker in self.devices:
            return self.devices[worker]
        index = len(self.devices)
        self.devices[worker] = index
        self.hosts[worker] = str(out.get("host"))
        runner = out.get("header") or {}
        found = runner.get("device")
        device: dict[str, Any] = found if isinstance(found, dict) else {}
        entry = {"id": index, "gpu": out.get("gpu"), "host": out.get("host"),
                 "worker": worker, **{k: v for k, v in device.items()
                                      if k not in ("id", "gpu", "host", "worker")},
                 "telemetry": runner.get("telemetry")}
        entry.setdefault("name", None)
        if out.get("failure"):
            entry["no_gpu_reason"] = out["failure"]
        if self.header is None:
            self._write_header({
                "type": "session", "t": 0.0, "protocol": PROTOCOL_VERSION,
                **{k: runner[k] for k in HEADER_FIELDS if k in runner},
                "created": runner.get("created") or "", "levels": runner.get("levels") or {},
                "device": device or None, "devices": [entry]})
        else:
            self._pass({"type": "device", "t": self.now(), "device": index,
                        **{k: v for k, v in entry.items() if k != "id"}})
        return index

    def _write_header(self, header: dict[str, Any]) -> None:
        self.header = header
        self._pass(header)
        held, self._held = self._held, []
        for event in held:
            self._pass(event)

    def _pass(self, event: dict[str, Any]) -> None:
        """The edge of a cluster session: a worker's event, as JSON values, into its
        record; one that does not read is said, not passed on."""
        try:
            record = from_builtins(event)
        except ProtocolError as exc:
            record = of({"type": "info", "t": self.now(),
                         "message": f"a worker sent an event that cannot be read: {exc}"})
        if self.tap is not None:
            self.tap.write_line(encode(record))
        self.on_event(record)


def connect(address: SchedulerAddress, security: Any = None,
            timeout_s: float = CONNECT_TIMEOUT_S) -> Any:
    """A Dask client of the scheduler at ``address`` (ClusterError when it cannot be);
    ``security``: Dask's TLS settings for a tls:// address (kernels/drive/cluster_address.py)."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise ClusterError(f"--cluster needs Dask distributed ({exc.name} is missing): "
                           "pip install 'gemmscope[cluster]'") from None
    _reachable(address, timeout_s)
    try:
        return Client(str(address), timeout=timeout_s, security=security)
    except (OSError, TimeoutError) as exc:
        tls = " (a TLS handshake refused or not answered?)" if address.scheme == "tls" else ""
        raise ClusterError(f"no Dask scheduler answered at {address} within "
                           f"{timeout_s:g} s{tls}: {shown(exc, 160)}") from None


def _reachable(address: SchedulerAddress, timeout_s: float) -> None:
    """A scheduler address that refuses connections is said at once (Dask's client
    would try again until its timeout)."""
    import socket

    try:
        socket.create_connection((address.host, address.port), timeout=timeout_s).close()
    except OSError as exc:
        raise ClusterError(f"no Dask scheduler answered at {address} "
                           f"({exc.strerror or exc})") from None


def gpu_workers(client: Any, wait_s: float = CONNECT_TIMEOUT_S) -> list[str]:
    """The workers that offer a ``GPU`` resource (waiting up to ``wait_s`` for one)."""
    deadline = time.monotonic() + wait_s
    while True:
        workers = client.scheduler_info(n_workers=-1)["workers"]
        found = [a for a, w in workers.items() if (w.get("resources") or {}).get("GPU")]
        if found:
            return found
        if time.monotonic() > deadline:
            raise ClusterError(
                f"no worker offers a GPU ({len(workers)} worker(s) without one): start one "
                "per GPU with `gemmscope worker ADDRESS --device N` (docs/cluster.md)")
        time.sleep(0.2)


def run_sweep(client: Any, runs: Iterable[RunRequest], merger: Merger,
              command: list[str] | None = None, watchdog_s: float = DEFAULT_WATCHDOG_S,
              telemetry_hz: float | None = None,
              on_done: Callable[[RunRequest], None] | None = None) -> int:
    """Every run once on the cluster's GPU workers, merged as they complete; returns
    the number of runs lost with their worker."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    from .cluster_worker import RunnerPlugin, run_on_worker

    gpu_workers(client)
    client.register_plugin(RunnerPlugin(command, watchdog_s, telemetry_hz), name=PLUGIN_NAME)
    try:  # by value (a lambda): the scheduler need not have gemmscope installed
        retries = client.run_on_scheduler(lambda dask_scheduler: int(
            dask_scheduler.allowed_failures))
    except Exception:
        retries = None
    if retries:
        merger.emit({"type": "info", "message": (
            f"the scheduler runs a run again on another worker when its worker is lost, "
            f"up to {retries} times ({ALLOWED_FAILURES}); start it with "
            f"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0 to have each lost run said "
            f"as an error instead")})
    tag = uuid.uuid4().hex[:8]
    counter = itertools.count()

    def send(req: RunRequest) -> Any:
        return client.submit(run_on_worker, req, key=f"gemmscope-{tag}-{next(counter)}",
                             resources={"GPU": 1}, pure=False)

    futures = {send(req): (req, 1) for req in runs}
    lost = 0
    pending = as_completed(list(futures))
    for future in pending:
        req, sends = futures.pop(future)
        try:
            merger.batch(future.result())
        except KilledWorker as exc:
            worker = getattr(exc.last_worker, "address", None)
            if not _started(client, future.key) and sends < MAX_SENDS:
                again = send(req)  # it never began: nothing was measured or lost
                futures[again] = (req, sends + 1)
                pending.add(again)
            else:
                lost += 1
                merger.emit({"type": "error", "kind": str(ErrorKind.WORKER_LOST),
                             "message": f"worker {worker} was lost during the run of "
                                        f"{req.describe()}; the other runs go on",
                             **req.where(), **merger.where(worker)})
        except Exception as exc:  # the task itself failed: said, the rest go on
            merger.emit({"type": "error", "kind": str(ErrorKind.INTERNAL),
                         "message": f"the run of {req.describe()} failed on the cluster: "
                                    f"{exc!r}", **req.where()})
        future.release()
        if on_done is not None and future not in futures:
            on_done(req)
    return lost


def _started(client: Any, key: Any) -> bool:
    """Whether a worker said it began the task ``key`` (its event reached the scheduler)."""
    try:
        events = client.get_events(STARTED_TOPIC)
    except Exception:
        return True  # cannot tell: the run may have begun, so it is said lost
    return any(isinstance(msg, dict) and msg.get("key") == str(key) for _, msg in events)


def record_plan(address: SchedulerAddress, runs: list[RunRequest], out_path: str | None,
                stderr: TextIO, command: list[str] | None = None,
                watchdog_s: float = DEFAULT_WATCHDOG_S, telemetry_hz: float | None = None,
                security: Any = None) -> tuple[list[rec.Result], int]:
    """``record --cluster``: the runs to ``out_path`` (a session file), progress on
    ``stderr``; returns the results and the number of runs lost with their worker."""
    from ..protocol.session_file import SessionWriter
    from ..results.progress import Progress

    results: list[rec.Result] = []
    writer = SessionWriter(out_path) if out_path else None
    try:
        lost = record(address, runs, Progress(stderr, len(runs)).sink(results), writer,
                      command, watchdog_s, telemetry_hz, security=security)
    finally:
        if writer is not None:
            writer.close()
    return results, lost


def record(address: SchedulerAddress, runs: list[RunRequest], on_event: EventSink,
           tap: Tap | None, command: list[str] | None = None,
           watchdog_s: float = DEFAULT_WATCHDOG_S, telemetry_hz: float | None = None,
           connect_timeout_s: float = CONNECT_TIMEOUT_S, security: Any = None) -> int:
    """``gemmscope record --cluster ADDRESS``: the runs on the cluster, every event to
    ``on_event`` and ``tap``; returns the number of runs lost with their worker."""
    client = connect(address, security, connect_timeout_s)
    merger = Merger(on_event, tap)
    try:
        return run_sweep(client, runs, merger, command, watchdog_s, telemetry_hz)
    finally:
        merger.close()
        try:  # the workers' runners quit: the GPUs are free again
            client.unregister_worker_plugin(PLUGIN_NAME)
        except Exception:
            pass
        client.close()

"""Several GPUs as one session: one runner session per GPU, one time axis, one file. No Qt.

Each GPU has its own :class:`~gemmscope.kernels.drive.session.RunnerSession` (its runner, queue,
watchdog and restarts), all on one clock (a shared zero). :class:`DeviceSet` merges their
events into one stream:

- the file's one ``session`` header is written once every runner has said its own (or
  failed to start): the first runner's catalog and versions, plus ``devices``, one entry
  per GPU (``id``, the ``gpu`` index it was given, ``host``, and its runner's device
  fields: name, uuid, PCI bus id, limits, peaks, telemetry); events that arrive before
  it are held back and follow it in order;
- every other event says its ``device`` (the entry's ``id``) and, over ssh, its ``host``;
- runs are either split (each run goes to the next GPU that is free: every run once) or
  given to every GPU (the same list on each, to compare them).

The CLI's ``bench``/``record`` and the app's live source drive it like one
RunnerSession (``submit``, ``pump``, ``wait_idle``, ``close``...).
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..protocol import records as rec
from ..protocol.decoding import EventRecord, encode, of
from ..protocol.events import PROTOCOL_VERSION
from ..protocol.plan import RunRequest
from .session import RunnerSession, SessionState
from .session_types import (
    DEFAULT_START_TIMEOUT_S,
    DEFAULT_WATCHDOG_S,
    EventSink,
    FailureExplainer,
    Tap,
)

# the first header's fields that the merged header keeps as they are
HEADER_FIELDS = ("created", "gemmscope", "levels", "catalog", "telemetry", "remote")


@dataclass(frozen=True, slots=True)
class DeviceSpec:
    """How the runner of one GPU is started: ``gpu``, the index it is given (as
    nvidia-smi counts; None: whatever the runner finds), its command and environment,
    and the RunnerSession options of its transport (``kernels/drive/remote.py``)."""

    gpu: int | None
    command: list[str]
    env: dict[str, str] | None = None
    host: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


def device_entry(index: int, spec: DeviceSpec, header: rec.Session | None,
                 failure: str | None = None) -> rec.DeviceEntry:
    """The header's ``devices`` entry of one GPU, from its runner's own header."""
    gpu = None if spec.gpu is None else str(spec.gpu)
    if header is None:
        return rec.DeviceEntry(id=index, gpu=gpu, host=spec.host, no_gpu_reason=failure)
    device = msgspec.structs.asdict(header.device) if header.device is not None else {}
    return rec.DeviceEntry(id=index, gpu=gpu, host=spec.host, **device,
                           telemetry=header.telemetry, no_gpu_reason=header.no_gpu_reason)


def merged_header(specs: list[DeviceSpec], headers: list[rec.Session | None],
                  failures: list[str | None]) -> rec.Session:
    """One ``session`` header for several runners (see the module docstring); its
    ``device`` is the first GPU's, so a reader of one GPU reads it as before."""
    have = [h for h in headers if h is not None]
    entries = [device_entry(i, spec, h, f)
               for i, (spec, h, f) in enumerate(zip(specs, headers, failures, strict=True))]
    t = min((h.t for h in have), default=0.0)
    if not have:
        return rec.Session(t=t, protocol=PROTOCOL_VERSION, created="", levels={},
                           devices=entries)
    first = have[0]
    kept = {k: getattr(first, k) for k in HEADER_FIELDS}
    return rec.Session(t=t, protocol=PROTOCOL_VERSION, device=first.device, devices=entries,
                       **kept)


class DeviceSet:
    """Runner sessions of several GPUs driven as one; see the module docstring."""

    def __init__(self, on_event: EventSink, specs: list[DeviceSpec], *,
                 tap: Tap | None = None, split: bool = True,
                 watchdog_s: float = DEFAULT_WATCHDOG_S,
                 start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
                 wakeup: Callable[[], None] | None = None) -> None:
        if not specs:
            raise ValueError("a device set needs at least one GPU")
        self.on_event = on_event
        self.specs = list(specs)
        self.tap = tap
        self.split = split
        self.wakeup = wakeup
        self.state_listeners: list[Callable[[SessionState], None]] = []
        self.state = SessionState.STOPPED
        self._t0 = time.monotonic()
        self._woken = threading.Event()
        self._headers: list[rec.Session | None] = [None] * len(specs)
        self._held: list[EventRecord] = []  # events before the merged header
        self._header: rec.Session | None = None
        self.pending: deque[RunRequest] = deque()  # split runs not yet given to a GPU
        self.sessions = [
            RunnerSession(functools.partial(self._on_device_event, i), spec.command,
                          watchdog_s=watchdog_s, start_timeout_s=start_timeout_s,
                          wakeup=self._wake, env=spec.env, t0=self._t0,
                          run_prefix="run" if len(specs) == 1 else f"d{i}-run",
                          **spec.options)
            for i, spec in enumerate(specs)]
        for session in self.sessions:
            session.state_listeners.append(lambda _state: self._update_state())

    # ------------------------------------------------------------------ reading state
    @property
    def header(self) -> rec.Session | None:
        """The merged header, once written."""
        return self._header

    @property
    def idle(self) -> bool:
        return not self.pending and all(s.idle for s in self.sessions)

    @property
    def pending_runs(self) -> int:
        return len(self.pending) + sum(s.pending_runs for s in self.sessions)

    @property
    def restarts(self) -> int:
        return sum(s.restarts for s in self.sessions)

    @property
    def lost_runs(self) -> int:
        return sum(s.lost_runs for s in self.sessions)

    @property
    def explainer(self) -> FailureExplainer | None:
        return self.sessions[0].explainer

    @property
    def failure_text(self) -> str:
        failed = [(i, s) for i, s in enumerate(self.sessions)
                  if s.failure_text != "no reason given"]
        if not failed:
            return "no reason given"
        return "; ".join(f"{self.label(i)}: {s.failure_text}" for i, s in failed)

    def label(self, index: int) -> str:
        """How a GPU is named to the user: "GPU 1", "GPU 0 on host"."""
        spec = self.specs[index]
        name = f"GPU {spec.gpu}" if spec.gpu is not None else f"device {index}"
        return name + (f" on {spec.host}" if spec.host else "")

    def now(self) -> float:
        return round(time.monotonic() - self._t0, 6)

    def describe(self) -> str:
        return ", ".join(self.label(i) for i in range(len(self.specs)))

    # ------------------------------------------------------------------ control
    def start(self) -> None:
        for session in self.sessions:
            session.start()

    def submit(self, requests: Iterable[RunRequest]) -> None:
        """Split: each run to the next free GPU; else the whole list to every GPU."""
        requests = list(requests)
        if self.split:
            self.pending.extend(requests)
            self.start()
            self._dispatch()
        else:
            for session in self.sessions:
                session.submit(requests)

    def stop_runs(self) -> None:
        self.pending.clear()
        for session in self.sessions:
            session.stop_runs()

    def send(self, command: dict[str, Any]) -> None:
        for session in self.sessions:
            session.send(command)

    def emit(self, event: dict[str, Any]) -> None:
        """An event of the whole session's (no device), on the session clock."""
        self._pass(of({**event, "t": self.now()}))

    def pump(self, timeout_s: float = 0.0) -> int:
        """Handle what every runner wrote; waits up to ``timeout_s`` for a line."""
        if timeout_s > 0 and self._woken.wait(timeout_s):
            self._woken.clear()
        handled = sum(session.pump() for session in self.sessions)
        self._write_header_when_due()
        self._dispatch()
        return handled

    def wait_ready(self, poll_s: float = 0.1) -> rec.Session:
        """Start every runner and wait until each is ready; returns the merged header
        (RuntimeError naming the GPUs whose runner did not start)."""
        self.start()
        while not all(s.state in (SessionState.READY, SessionState.FAILED)
                      for s in self.sessions):
            self.pump(poll_s)
        self._write_header_when_due()
        failed = [i for i, s in enumerate(self.sessions) if s.state is SessionState.FAILED]
        if failed:
            raise RuntimeError("the runner did not start: " + "; ".join(
                f"{self.label(i)}: {self.sessions[i].failure_text}" for i in failed))
        assert self._header is not None
        return self._header

    def wait_idle(self, poll_s: float = 0.1) -> None:
        while not self.idle:
            self.pump(poll_s)

    def close(self, wait_s: float = 5.0) -> None:
        """Quit every runner, keeping what each writes until it exits; a header not yet
        written is written now, with what is known, so no held event is lost."""
        self.pending.clear()
        for session in self.sessions:
            session.close(wait_s)
        if self._header is None and any(h is not None for h in self._headers):
            self._write_header()
        self._update_state()

    # ------------------------------------------------------------------ plumbing
    def _wake(self) -> None:
        self._woken.set()
        if self.wakeup is not None:
            self.wakeup()

    def _on_device_event(self, index: int, event: EventRecord) -> None:
        if isinstance(event, rec.Session):
            self._headers[index] = event
            return
        host = self.specs[index].host
        if isinstance(event, rec.Placed):
            event = msgspec.structs.replace(event, device=index,
                                            **({"host": host} if host else {}))
        elif isinstance(event, rec.Other):  # a type this reader does not know: its fields
            # say where, all the same
            event.fields.update({"device": index, **({"host": host} if host else {})})
        if self._header is None:
            self._held.append(event)
        else:
            self._pass(event)

    def _write_header_when_due(self) -> None:
        if self._header is None and all(
                h is not None or s.state is SessionState.FAILED
                for h, s in zip(self._headers, self.sessions, strict=True)):
            self._write_header()

    def _write_header(self) -> None:
        failures = [None if h is not None else s.failure_text
                    for h, s in zip(self._headers, self.sessions, strict=True)]
        self._header = merged_header(self.specs, self._headers, failures)
        self._pass(self._header)
        held, self._held = self._held, []
        for event in held:
            self._pass(event)

    def _pass(self, event: EventRecord) -> None:
        if self._header is None and not isinstance(event, rec.Session):
            self._held.append(event)
            return
        if self.tap is not None:
            self.tap.write_line(encode(event))
        self.on_event(event)

    def _dispatch(self) -> None:
        """Split runs: the next pending run to each GPU that is ready and has nothing;
        when every GPU has given up, the rest are dropped, and said."""
        if not self.pending:
            return
        for session in self.sessions:
            if not self.pending:
                break
            if session.state is SessionState.READY and not session.queue.busy \
                    and not session.queue.pending:
                session.submit([self.pending.popleft()])
        if all(s.state is SessionState.FAILED for s in self.sessions):
            dropped = len(self.pending)
            self.pending.clear()
            self.emit({"type": "info", "gave_up": True,
                       "message": f"every GPU's runner gave up; {dropped} queued runs "
                                  "dropped"})

    def _update_state(self) -> None:
        states = {s.state for s in self.sessions}
        for state in (SessionState.RUNNING, SessionState.STARTING, SessionState.READY,
                      SessionState.STOPPED, SessionState.FAILED):
            if state in states:
                break
        if state is not self.state:
            self.state = state
            for listener in list(self.state_listeners):
                listener(state)

"""One runner session: a runner process driven over JSON lines, with no Qt.

A session owns everything between the runner's pipes and the event sink:

- the queue of runs and the ids sent with them (one run in flight at a time; the next is
  sent after the previous run's ``done``);
- the watchdog: a runner that says nothing but telemetry for ``watchdog_s`` during a run,
  or says nothing at all for ``watchdog_s`` after it was started, is killed; the runner
  must be ready within ``start_timeout_s`` of the first start, every attempt included
  (so a runner that never speaks is given up after at most ``start_timeout_s``, and at
  most ``max_failures`` × ``watchdog_s``);
- a runner that closes its stdout and runs on, or exits while a child of it holds the
  pipes, is noticed within ``EXIT_GRACE_S``; a runner is always ended with its whole
  process group (it starts in a session of its own);
- the restart and give-up policy: a runner that exits or is killed is started again; after
  ``max_failures`` failures in a row the session gives up and drops the queue. Every
  failure is an ``error`` event naming the run (level and shape) it cost;
- the session clock: every event is placed on one time axis across restarts
  (:class:`~gemmscope.kernels.protocol.timeline.Timeline`);
- the edge: each line the runner writes is decoded once into its record
  (:mod:`~gemmscope.kernels.protocol.decoding`), and the sink gets records;
- the tap: every event, the runner's and the session's own, is written to the session file
  as it arrives, up to the runner's last line.

``gemmscope bench`` and ``record`` drive it with :meth:`RunnerSession.wait_idle`; the app
(``app/sources/live.py``) calls :meth:`RunnerSession.pump` from its event loop, woken by
the reader thread. Both therefore write files of the same shape.
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..protocol import records as rec
from ..protocol.decoding import EventRecord, encode, of
from ..protocol.events import ErrorKind, ProtocolError, dumps
from ..protocol.plan import RunQueue, RunRequest
from ..protocol.timeline import Timeline
from .runner_lines import TOO_LONG, Incompatible, exit_text, not_an_event_text, runner_event
from .runner_process import EOF, Line, RunnerProcess, spawn
from .session_types import (
    DEFAULT_START_TIMEOUT_S,
    DEFAULT_WATCHDOG_S,
    EXIT_GRACE_S,
    MAX_CONSECUTIVE_FAILURES,
    WATCHDOG_IGNORES,
    EventSink,
    FailureExplainer,
    SessionState,
    Tap,
    default_runner_command,
)


class RunnerSession:
    """Drives runner processes for one session; see the module docstring."""

    def __init__(self, on_event: EventSink, command: list[str] | None = None, *,
                 tap: Tap | None = None, watchdog_s: float = DEFAULT_WATCHDOG_S,
                 start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
                 max_failures: int = MAX_CONSECUTIVE_FAILURES,
                 wakeup: Callable[[], None] | None = None,
                 env: dict[str, str] | None = None,
                 explainer: FailureExplainer | None = None,
                 header_extra: dict[str, Any] | None = None,
                 header_timeout_s: float | None = None, t0: float | None = None,
                 run_prefix: str = "run") -> None:
        self.command = list(command or default_runner_command())
        self.on_event = on_event
        self.tap = tap
        self.watchdog_s = watchdog_s
        self.start_timeout_s = start_timeout_s
        self.max_failures = max_failures
        self.wakeup = wakeup
        self.env = env
        self.explainer = explainer
        # the runner must say its header within this (over ssh: the host answered and runs
        # the runner), then has the rest of start_timeout_s to get ready (compiles)
        self.header_timeout_s = header_timeout_s
        self._spoke = False  # the current runner has said its header
        # fields added to the first runner's header as recorded (``remote``: the host)
        self.header_extra = dict(header_extra or {})
        self.queue = RunQueue(run_prefix)  # run ids: "run-1", ... (unique per session)
        self.state = SessionState.STOPPED
        self.timeline = Timeline()
        self.restarts = 0
        self.failures = 0  # consecutive failed runs and starts
        self.state_listeners: list[Callable[[SessionState], None]] = []
        # the clock's zero (time.monotonic()); sessions of one multi-GPU session share it
        self._t0 = time.monotonic() if t0 is None else t0
        self._lines: queue.Queue[Line] = queue.Queue()
        self._proc: RunnerProcess | None = None
        self._generation = 0
        self._deadline: float | None = None  # the watchdog
        self._expect_exit: set[int] = set()  # generations killed on purpose
        self._refused: set[int] = set()  # generations whose protocol this reader refused
        self._closed = False
        self._failure_text = "no reason given"
        self._ready_by: float | None = None  # the start budget, all attempts together
        # of that budget, what the attempts so far left: only the time a runner had to
        # start counts, not killing and reaping one (which a loaded machine stretches)
        self._budget_left = 0.0
        self._started = 0.0  # when the current runner was started (time.monotonic())
        self._attempt_s = 0.0  # how long the current start may take, for the message
        self.lost_runs = 0  # runs that ended in a runner failure (crash, watchdog)
        self._hopeless = False  # the last failure is one a restart cannot cure
        self._captures: list[list[EventRecord]] = []

    # ------------------------------------------------------------------ reading state
    @property
    def header(self) -> rec.Session | None:
        """The first runner's ``session`` header, once it has arrived."""
        return self.timeline.header

    @property
    def pending_runs(self) -> int:
        return len(self.queue.pending)

    @property
    def idle(self) -> bool:
        """Nothing queued or in flight (or given up)."""
        return self.state is SessionState.FAILED or (
            not self.queue.busy and not self.queue.pending
            and self.state in (SessionState.READY, SessionState.STOPPED))

    def now(self) -> float:
        """Seconds since the session started: the time axis of every event."""
        return round(time.monotonic() - self._t0, 6)

    @property
    def failure_text(self) -> str:
        """The latest failure's message ("no reason given" while none)."""
        return self._failure_text

    def describe(self) -> str:
        """The runner command, for a status line."""
        return " ".join(self.command)

    # ------------------------------------------------------------------ control
    def start(self) -> None:
        """Start a runner (no-op while one runs); it answers ``session`` then ``ready``."""
        if self._proc is not None or self._closed:
            return
        self._set_state(SessionState.STARTING)
        self._generation += 1
        try:
            proc = spawn(self.command, self.env, self._generation, self._lines, self.now,
                         self.wakeup or (lambda: None))
        except OSError as exc:
            self.failures = self.max_failures
            self.emit({"type": "error", "kind": str(ErrorKind.RUNNER_CRASH),
                       "message": f"the runner could not be started ({self.describe()}): "
                                  f"{exc.strerror or exc}"})
            self._give_up()
            return
        self._proc = proc
        self._spoke = False
        now = time.monotonic()
        if self._ready_by is None:  # a new start budget
            self._budget_left = self.start_timeout_s
        self._ready_by = now + self._budget_left
        first_word = min(self.header_timeout_s or self.watchdog_s, self.watchdog_s)
        self._deadline = min(now + first_word, self._ready_by)
        self._started = now
        self._attempt_s = round(self._deadline - now, 3)

    def submit(self, requests: Iterable[RunRequest]) -> None:
        """Queue runs; they are sent one at a time. After a give-up this tries again."""
        self.queue.extend(requests)
        if self.state is SessionState.FAILED:
            self.failures = 0
            self._ready_by = None  # a new start budget
        if self._proc is None:
            self.start()
        else:
            self._send_next()

    def stop_runs(self) -> None:
        """Drop the queue and end the run in flight (its runner is restarted for that)."""
        self.queue.clear()
        req, run_id = self.queue.current, self.queue.current_id
        if req is None:
            return
        self.emit({"type": "info", "id": run_id,
                   "message": f"run of {req.describe()} stopped by the user", **req.where()})
        self.queue.finish()
        self._kill(expected=True)

    def send(self, command: dict[str, Any]) -> None:
        """Send a command that is not a run (``ping``, ``levels``, ``telemetry``)."""
        self._write(command)

    def emit(self, event: dict[str, Any]) -> None:
        """An event of the session's own (not the runner's), on the session clock, in
        order with the runner's (Timeline.stamp)."""
        self._deliver(of({**event, "t": self.timeline.stamp(self.now())}))

    # ------------------------------------------------------------------ the loop
    def pump(self, timeout_s: float = 0.0) -> int:
        """Handle what the runner wrote and check the watchdog; waits up to ``timeout_s``
        for the first line. Returns the number of lines handled."""
        handled = 0
        wait = timeout_s
        while True:
            try:
                generation, arrived, line = self._lines.get(timeout=wait) if wait > 0 \
                    else self._lines.get_nowait()
            except queue.Empty:
                break
            wait = 0.0
            handled += 1
            self._handle(generation, arrived, line)
        self._check_exited()
        self._check_watchdog()
        return handled

    def wait_ready(self, poll_s: float = 0.1) -> rec.Session:
        """Start if needed and wait for ``ready``; returns the header (RuntimeError when
        the session gave up)."""
        self.start()
        while self.state is not SessionState.READY:
            if self.state is SessionState.FAILED or self._closed:
                raise RuntimeError("the runner did not start: " + self._failure_text)
            self.pump(poll_s)
        assert self.header is not None
        return self.header

    def run(self, requests: Iterable[RunRequest]) -> list[EventRecord]:
        """Submit runs, wait until they are done, and return every event delivered
        meanwhile except telemetry (scripts and tests)."""
        seen: list[EventRecord] = []
        self._captures.append(seen)
        try:
            self.submit(requests)
            self.wait_idle()
        finally:
            self._captures.remove(seen)
        return [e for e in seen if not isinstance(e, rec.Telemetry)]

    def wait_idle(self, poll_s: float = 0.1) -> None:
        """Pump until every queued run has finished or the session gave up."""
        while not self.idle and not self._closed:
            self.pump(poll_s)

    def close(self, wait_s: float = 5.0) -> None:
        """Ask the runner to quit and keep every line it writes until it exits (``bye``,
        the last telemetry); kill it after ``wait_s``. The tap stays open (its owner
        closes it)."""
        self.queue.clear()
        self._closed = True
        proc = self._proc
        if proc is not None:
            self._expect_exit.add(proc.generation)
            self._write({"cmd": "quit"})
            with contextlib.suppress(OSError):
                if proc.popen.stdin is not None:
                    proc.popen.stdin.close()
            try:
                proc.popen.wait(wait_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.popen.wait(5.0)
            proc.kill()  # what it left behind in its process group
            for thread in proc.threads:
                thread.join(2.0)
            self.pump()  # the lines it wrote before it exited
            proc.release()
        self._proc = None
        self._deadline = None
        self._set_state(SessionState.STOPPED)

    # ------------------------------------------------------------------ plumbing
    def _set_state(self, state: SessionState) -> None:
        if state is not self.state:
            self.state = state
            for listener in list(self.state_listeners):
                listener(state)

    def _write(self, command: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.exited() or proc.popen.stdin is None:
            return
        try:
            proc.popen.stdin.write((dumps(command) + "\n").encode())
            proc.popen.stdin.flush()
        except (OSError, ValueError):
            pass  # it died; its EOF reports that

    def _deliver(self, event: EventRecord) -> None:
        if self.tap is not None:
            self.tap.write_line(encode(event))
        for seen in self._captures:
            seen.append(event)
        self.on_event(event)

    def _handle(self, generation: int, arrived: float, raw: bytes | None) -> None:
        if raw == EOF:
            self._on_exit(generation)
            return
        if generation in self._refused:
            return  # it cannot be understood; it is being killed
        if raw is None:
            self.emit({"type": "info", "message": TOO_LONG})
            return
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return
        try:
            event = self.timeline.place(
                runner_event(line, self.timeline.header is not None, self.header_extra),
                arrived)
        except Incompatible as exc:
            self._incompatible(str(exc))
            return
        except ProtocolError as exc:
            self._not_an_event(line, exc)
            return
        if isinstance(event, rec.Session | rec.Restart) and generation == self._generation \
                and not self._spoke:
            self._spoke = True
            if self.state is SessionState.STARTING:  # the rest of the start budget
                self._deadline = self._ready_by
                if self._ready_by is not None:
                    self._attempt_s = round(self._ready_by - self._started, 3)
        if isinstance(event, rec.Restart):
            self.restarts = event.restarts
        current = self._proc is not None and generation == self._proc.generation
        if current and self.queue.busy and event.type not in WATCHDOG_IGNORES:
            self._deadline = time.monotonic() + self.watchdog_s
        self._deliver(event)
        if not current:
            return  # a line the previous runner wrote before it died: kept, not acted on
        if isinstance(event, rec.Ready):
            self._set_state(SessionState.READY)
            self._deadline = None
            self._ready_by = None
            self._send_next()
        elif isinstance(event, rec.Result):
            self.failures = 0
        elif isinstance(event, rec.Done) and self.queue.busy \
                and event.id == self.queue.current_id:
            self._deadline = None
            self.queue.finish()
            self._send_next()

    def _not_an_event(self, line: str, exc: ProtocolError) -> None:
        self.emit({"type": "info", "message": not_an_event_text(line, exc)})

    def _incompatible(self, reason: str) -> None:
        """A runner this reader cannot talk to: starting it again will not help."""
        message = (self.explainer.incompatible(reason) if self.explainer is not None
                   else f"the runner speaks an incompatible protocol: {reason}")
        self.failures = self.max_failures
        self._hopeless = True
        if self._proc is not None:
            self._refused.add(self._proc.generation)
        self._report(ErrorKind.RUNNER_CRASH, message)
        self._kill(expected=True)

    def _send_next(self) -> None:
        if self.state not in (SessionState.READY, SessionState.RUNNING):
            return
        nxt = self.queue.start_next()
        if nxt is None:
            if not self.queue.busy:
                self._set_state(SessionState.READY)
            return
        run_id, req = nxt
        self._set_state(SessionState.RUNNING)
        self._write(req.command(run_id))
        self._deadline = time.monotonic() + self.watchdog_s

    def _check_watchdog(self) -> None:
        if self._deadline is None or time.monotonic() < self._deadline or self._proc is None:
            return
        self._deadline = None
        self._attempt_ended()
        if self.queue.current is not None:
            self._fail_run(ErrorKind.TIMEOUT,
                           f"the runner said nothing for {self.watchdog_s:g} s during the "
                           "run; it was killed")
        else:
            self.failures += 1
            allowed = f"{self._attempt_s:g} s"
            if not self._spoke and self.header_timeout_s is not None:
                # no header at all: the transport or the install, not a slow start
                self.failures, self._hopeless = self.max_failures, True
                message = f"the runner said nothing within {allowed}; it was killed"
            elif not self._spoke:
                message = f"the runner said nothing within {allowed}; it was killed"
            else:
                message = f"the runner was not ready within {allowed}; it was killed"
            if (self.failures < self.max_failures and self._ready_by is not None
                    and self._budget_left <= 0):
                self.failures, self._hopeless = self.max_failures, True
                message += (f" (the start timeout of {self.start_timeout_s:g} s, all "
                            "attempts together, is spent)")
            self._report(ErrorKind.TIMEOUT, message)
        self._kill(expected=True)

    def _check_exited(self) -> None:
        """A runner that exited while its pipes stay open is handled as exited within
        twice EXIT_GRACE_S (RunnerProcess.gone_after_grace)."""
        proc = self._proc
        if proc is not None and proc.gone_after_grace(EXIT_GRACE_S):
            self._on_exit(proc.generation, eof=False)

    def _on_exit(self, generation: int, eof: bool = True) -> None:
        """The runner's stdout closed (``eof``) or it exited without its pipes closing."""
        proc = self._proc
        if proc is None or generation != proc.generation:
            return  # an old runner's pipe closing
        self._attempt_ended()
        if eof:
            for thread in proc.threads:  # the stdout reader has ended (this is its EOF)
                thread.join(1.0)
        ran_on = not proc.wait_exit(EXIT_GRACE_S)  # its stdout closed, it runs on
        code = proc.reap()  # its group ended; bounded
        proc.release()
        self._proc = None
        self._deadline = None
        self._set_state(SessionState.STOPPED)
        if generation in self._expect_exit or self._closed:
            self._expect_exit.discard(generation)
        else:
            tail = "; ".join(proc.stderr_tail)
            why = exit_text(ran_on, code, tail)
            if self.explainer is not None:
                failure = self.explainer.exited(code, tail, self._spoke)
                why = failure.message
                if failure.permanent:
                    self.failures = self.max_failures - 1  # this failure makes it give up
                    self._hopeless = True
            if self.queue.current is not None:
                self._fail_run(ErrorKind.RUNNER_CRASH, why if self.explainer is not None
                               else why + " during the run")
            else:
                self.failures += 1
                self._report(ErrorKind.RUNNER_CRASH, why)
        self._start_again()

    def _report(self, kind: ErrorKind, message: str, **where: Any) -> None:
        self._failure_text = message
        self.emit({"type": "error", "kind": str(kind), "message": message, **where})

    def _fail_run(self, kind: ErrorKind, message: str) -> None:
        run_id, req = self.queue.current_id, self.queue.current
        self.queue.finish()
        self.failures += 1
        self.lost_runs += 1
        where = {"id": run_id, **req.where()} if req is not None else {}
        self._report(kind, message, **where)

    def _kill(self, expected: bool) -> None:
        proc = self._proc
        if proc is None:
            self._start_again()
            return
        if expected:
            self._expect_exit.add(proc.generation)
        proc.kill()  # its EOF arrives through the reader; _on_exit restarts

    def _attempt_ended(self) -> None:
        """A start attempt ended (its runner is about to be killed, or exited): keep what
        it left of the start budget."""
        if self._ready_by is not None and self.state is SessionState.STARTING:
            self._budget_left = max(0.0, self._ready_by - time.monotonic())

    def _start_again(self) -> None:
        if self._closed:
            return
        spent = self._ready_by is not None and self._budget_left <= 0
        if self.failures >= self.max_failures or spent:
            self._give_up()
            return
        self.start()

    def _give_up(self) -> None:
        dropped = len(self.queue.pending)
        self.queue.clear()
        self.queue.finish()
        self._deadline = None
        self._set_state(SessionState.FAILED)
        why = ("starting it again will not help" if self._hopeless
               else f"the runner failed {self.failures} times in a row")
        self._hopeless = False
        self.emit({"type": "info", "gave_up": True,
                   "message": f"{why}; stopped ({dropped} queued runs dropped). Run again "
                              "to retry."})


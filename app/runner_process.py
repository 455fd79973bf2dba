"""The live source: a runner child process driven over stdin/stdout, with a watchdog.

The runner (``python -m gemmscope.kernels runner``) reads JSON commands and writes JSON
events. This object sends one run at a time from a queue, validates every line it reads
(``gemmscope.kernels.protocol.parse_line``), appends it to the session file, and passes
the event on. A runner that exits, or says nothing for ``watchdog_s`` during a run, is
killed and started again (telemetry samples do not count as an answer: the sampler
thread keeps going while a kernel hangs); the run is recorded as an ``error`` event
(``runner_crash`` or ``timeout``) with its level and shape, and the queue goes on.
Nothing here blocks the GUI thread except :meth:`shutdown` (bounded, at exit).
"""

from __future__ import annotations

import json
import sys
from collections import deque
from enum import StrEnum
from typing import Any

from PySide6.QtCore import QElapsedTimer, QObject, QProcess, QTimer, Signal

from gemmscope.app.core.runs import RunQueue, RunRequest
from gemmscope.app.core.session_file import SessionWriter
from gemmscope.kernels.protocol import ErrorKind, ProtocolError, dumps, parse_line

DEFAULT_WATCHDOG_S = 60.0
MAX_CONSECUTIVE_FAILURES = 3
# events that do not show the run is progressing: the NVML sampler is its own thread and
# keeps sampling while the run's thread is stuck in a kernel
WATCHDOG_IGNORES = frozenset({"telemetry", "info"})


def default_runner_command() -> list[str]:
    return [sys.executable, "-m", "gemmscope.kernels", "runner"]


class RunnerState(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    RUNNING = "running"
    FAILED = "failed"  # gave up after repeated failures


class LiveRunner(QObject):
    event = Signal(dict)  # every event, the runner's and this object's own
    notice = Signal(str)  # a readable line for the status bar
    state_changed = Signal(str)
    idle = Signal()  # nothing queued and nothing in flight

    def __init__(self, command: list[str] | None = None, writer: SessionWriter | None = None,
                 watchdog_s: float = DEFAULT_WATCHDOG_S, parent: QObject | None = None):
        super().__init__(parent)
        self.command = command or default_runner_command()
        self.writer = writer
        self.watchdog_s = watchdog_s
        self.queue = RunQueue()
        self.state = RunnerState.STOPPED
        self.restarts = 0
        self.failures = 0  # consecutive failed runs / starts
        self.last_error: dict[str, Any] | None = None
        self.proc: QProcess | None = None
        self._buffer = b""
        self._stderr_tail: deque[str] = deque(maxlen=8)
        self._expect_exit = False
        self._clock = QElapsedTimer()
        self._watchdog = QTimer(self)
        self._watchdog.setSingleShot(True)
        self._watchdog.timeout.connect(self._on_watchdog)

    # ----------------------------------------------------------------- control
    def start(self) -> None:
        if self.proc is not None:
            return
        self._set_state(RunnerState.STARTING)
        self._buffer = b""
        self._stderr_tail.clear()
        self._expect_exit = False
        proc = QProcess(self)
        proc.readyReadStandardOutput.connect(self._read_stdout)
        proc.readyReadStandardError.connect(self._read_stderr)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_process_error)
        self.proc = proc
        self._clock.start()
        proc.start(self.command[0], self.command[1:])
        self._arm_watchdog()  # it must say "ready" within the watchdog time too

    def submit(self, requests: list[RunRequest]) -> None:
        self.queue.extend(requests)
        if self.state is RunnerState.FAILED:
            self.failures = 0
            self.start()
        elif self.proc is None:
            self.start()
        else:
            self._send_next()

    def stop_runs(self) -> None:
        """Drop the queue and end the run in flight (the runner is restarted for that)."""
        self.queue.clear()
        req = self.queue.current
        if req is None:
            return
        self._emit_own({"type": "info", "id": self.queue.current_id,
                        "message": f"run of {req.describe()} stopped by the user",
                        "level": req.level, "M": req.M, "N": req.N, "K": req.K})
        self.queue.finish()
        self._restart()

    def ping(self) -> None:
        self._write({"cmd": "ping"})

    def shutdown(self, wait_ms: int = 2000) -> None:
        """Ask the runner to quit, kill it if it does not; waits at most ``wait_ms``."""
        self._watchdog.stop()
        self.queue.clear()
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.finished.disconnect(self._on_finished)
            proc.errorOccurred.disconnect(self._on_process_error)
            if proc.state() != QProcess.ProcessState.NotRunning:
                self._write({"cmd": "quit"}, proc)
                proc.closeWriteChannel()
                if not proc.waitForFinished(wait_ms // 2):
                    proc.kill()
                    proc.waitForFinished(wait_ms // 2)
            proc.deleteLater()
        self._set_state(RunnerState.STOPPED)

    # ----------------------------------------------------------------- plumbing
    def _set_state(self, state: RunnerState) -> None:
        if state is not self.state:
            self.state = state
            self.state_changed.emit(str(state))

    def _write(self, command: dict[str, Any], proc: QProcess | None = None) -> None:
        proc = proc or self.proc
        if proc is not None and proc.state() == QProcess.ProcessState.Running:
            proc.write((json.dumps(command) + "\n").encode())

    def _send_next(self) -> None:
        if self.state not in (RunnerState.READY, RunnerState.RUNNING):
            return
        nxt = self.queue.start_next()
        if nxt is None:
            if not self.queue.busy:
                self._set_state(RunnerState.READY)
                self.idle.emit()
            return
        run_id, req = nxt
        self._set_state(RunnerState.RUNNING)
        self._write(req.command(run_id))
        self._arm_watchdog()

    def _arm_watchdog(self) -> None:
        self._watchdog.start(max(1, int(self.watchdog_s * 1000)))

    def _now(self) -> float:
        return round(self._clock.elapsed() / 1000.0, 6) if self._clock.isValid() else 0.0

    def _emit_own(self, event: dict[str, Any]) -> None:
        event = {"type": event["type"], "t": self._now(), **event}
        if self.writer is not None:
            self.writer.write_line(dumps(event))
        self.event.emit(event)

    def _read_stderr(self) -> None:
        if self.proc is None:
            return
        text = bytes(self.proc.readAllStandardError().data()).decode("utf-8", "replace")
        self._stderr_tail.extend(line for line in text.splitlines() if line.strip())

    def _read_stdout(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self._buffer += bytes(proc.readAllStandardOutput().data())
        *lines, self._buffer = self._buffer.split(b"\n")
        for raw in lines:
            if self.proc is not proc:
                return  # restarted while handling a line
            self._handle_line(raw.decode("utf-8", "replace").strip())

    def _handle_line(self, line: str) -> None:
        if not line:
            return
        try:
            ev = parse_line(line, source="runner")
        except ProtocolError as exc:
            short = line if len(line) <= 120 else line[:117] + "..."
            self._emit_own({"type": "info",
                            "message": f"the runner wrote a line that is not an event "
                                       f"({exc}): {short}"})
            self.notice.emit("the runner wrote a line that is not an event; see messages")
            return
        if self.queue.busy and ev["type"] not in WATCHDOG_IGNORES:
            self._arm_watchdog()
        if self.writer is not None:
            self.writer.write_line(line)
        kind = ev["type"]
        if kind == "ready":
            self._set_state(RunnerState.READY)
            if not self.queue.busy:
                self._watchdog.stop()
        self.event.emit(ev)
        if kind == "session":
            device = ev.get("device") or {}
            name = device.get("name") if isinstance(device, dict) else None
            self.notice.emit(f"runner started ({name or 'no GPU'})")
        elif kind == "result":
            self.failures = 0
        elif kind == "done" and self.queue.busy and ev.get("id") == self.queue.current_id:
            self._watchdog.stop()
            self.queue.finish()
            self._send_next()
            return
        if kind == "ready":
            self._send_next()

    # ----------------------------------------------------------------- failures
    def _on_watchdog(self) -> None:
        req = self.queue.current
        if req is None:
            if self.state is RunnerState.STARTING:
                self.failures += 1
                msg = (f"the runner did not say it was ready within {self.watchdog_s:g} s; "
                       "it was killed and started again")
                self._emit_own({"type": "error", "kind": str(ErrorKind.TIMEOUT),
                                "message": msg})
                self.notice.emit(msg)
                self._restart()
            return
        self._fail_run(ErrorKind.TIMEOUT,
                       f"the runner said nothing for {self.watchdog_s:g} s during the run; "
                       "it was killed and restarted")
        self._restart()

    def _on_finished(self, exit_code: int, _status: QProcess.ExitStatus) -> None:
        self._read_stdout()  # what it wrote before it died still counts
        self._read_stderr()
        if self._expect_exit:
            self._expect_exit = False
            self._discard_process()
            self._start_again()
            return
        tail = "; ".join(self._stderr_tail)
        why = f"the runner exited (code {exit_code})" + (f": {tail}" if tail else "")
        self._discard_process()
        if self.queue.current is not None:
            self._fail_run(ErrorKind.RUNNER_CRASH, why + " during the run; restarted")
        else:
            self.failures += 1
            self._emit_own({"type": "error", "kind": str(ErrorKind.RUNNER_CRASH),
                            "message": why})
        self.notice.emit(why)
        self._start_again()

    def _on_process_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            proc_name = " ".join(self.command)
            self._discard_process()
            self.failures = MAX_CONSECUTIVE_FAILURES
            msg = f"the runner could not be started ({proc_name})"
            self._emit_own({"type": "error", "kind": str(ErrorKind.RUNNER_CRASH),
                            "message": msg})
            self.notice.emit(msg)
            self._give_up()

    def _fail_run(self, kind: ErrorKind, message: str) -> None:
        run_id, req = self.queue.current_id, self.queue.current
        self._watchdog.stop()
        self.queue.finish()
        self.failures += 1
        event: dict[str, Any] = {"type": "error", "kind": str(kind), "message": message}
        if req is not None:
            event.update(id=run_id, level=req.level, M=req.M, N=req.N, K=req.K)
            self.notice.emit(f"{kind}: {req.describe()}: {message}")
        self.last_error = event
        self._emit_own(event)

    def _restart(self) -> None:
        """Kill the runner; the finished handler starts a fresh one."""
        proc = self.proc
        if proc is None or proc.state() == QProcess.ProcessState.NotRunning:
            self._discard_process()
            self._start_again()
            return
        self._expect_exit = True
        proc.kill()

    def _discard_process(self) -> None:
        self._watchdog.stop()
        if self.proc is not None:
            self.proc.deleteLater()
            self.proc = None
        self._set_state(RunnerState.STOPPED)

    def _start_again(self) -> None:
        if self.failures >= MAX_CONSECUTIVE_FAILURES:
            self._give_up()
            return
        self.restarts += 1
        self.start()

    def _give_up(self) -> None:
        dropped = len(self.queue.pending)
        self.queue.clear()
        self.queue.finish()
        self._set_state(RunnerState.FAILED)
        self.notice.emit(f"the runner failed {self.failures} times in a row; stopped "
                         f"({dropped} queued runs dropped). Run again to retry.")
        self.idle.emit()

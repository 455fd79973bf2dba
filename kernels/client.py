"""Driving a runner subprocess from Python without Qt (the CLI's bench and record).

The client restarts a runner that dies or stops answering, turns that into an ``error``
event naming the run, and moves every event onto its own session clock, so one recording
stays one time axis across runner restarts.
"""

from __future__ import annotations

import itertools
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from gemmscope.kernels import protocol
from gemmscope.kernels.protocol import ErrorKind, ProtocolError

EventSink = Callable[[dict[str, Any]], None]
_EOF = object()


class RunnerClient:
    def __init__(self, on_event: EventSink, telemetry_hz: float = 50.0,
                 levels_from: str | None = None, stall_timeout_s: float = 120.0,
                 start_timeout_s: float = 180.0, argv: list[str] | None = None):
        self.on_event = on_event
        self.argv = argv or [sys.executable, "-m", "gemmscope.kernels", "runner",
                             "--telemetry-hz", str(telemetry_hz)]
        if levels_from and argv is None:
            self.argv += ["--levels-from", levels_from]
        self.stall_timeout_s = stall_timeout_s
        self.start_timeout_s = start_timeout_s
        self._t0 = time.monotonic()
        self._offset = 0.0
        self._proc: subprocess.Popen[str] | None = None
        self._queue: queue.Queue[Any] = queue.Queue()
        self._ids = itertools.count(1)
        self.restarts = 0
        self.header: dict[str, Any] | None = None  # the first runner's session header
        self._last_session: dict[str, Any] | None = None

    def now(self) -> float:
        return round(time.monotonic() - self._t0, 6)

    # ------------------------------------------------------------------ process
    def start(self) -> dict[str, Any]:
        """Start the runner and wait for ``ready``; returns its session header."""
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._queue = queue.Queue()
        self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, bufsize=1, env=env)
        threading.Thread(target=self._read, args=(self._proc, self._queue), daemon=True).start()
        self._last_session = None
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            ev = self._next(deadline)
            if ev is None or ev is _EOF:
                code = self._proc.poll()
                self.kill()
                raise RuntimeError(f"the runner did not start (exit code {code})")
            if ev["type"] == "ready" and self._last_session is not None:
                return self._last_session

    def _read(self, proc: subprocess.Popen[str], q: queue.Queue[Any]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip():
                q.put(line)
        q.put(_EOF)

    def _next(self, deadline: float) -> Any:
        """The next event (time-shifted and forwarded), _EOF, or None on timeout."""
        try:
            item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if item is _EOF:
            return _EOF
        try:
            ev = protocol.parse_line(item)
        except ProtocolError as exc:
            ev = {"type": "error", "t": 0.0, "kind": str(ErrorKind.INTERNAL),
                  "message": f"unreadable line from the runner: {exc}"}
        if ev["type"] == "session":
            self._last_session = dict(ev)
            self._offset = self.now() - float(ev["t"])
            if self.header is None:
                self.header = ev
            else:
                self.restarts += 1
                ev = {"type": "info", "t": ev["t"], "message": "runner restarted",
                      "restarts": self.restarts}
        ev["t"] = round(float(ev["t"]) + self._offset, 6)
        self.on_event(ev)
        return ev

    def kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        if self._proc is not None:
            self._proc.wait()
            for f in (self._proc.stdin, self._proc.stdout):
                if f is not None:
                    f.close()
        self._proc = None

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._send({"cmd": "quit"})
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def _send(self, cmd: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(protocol.dumps(cmd) + "\n")
        self._proc.stdin.flush()

    # ------------------------------------------------------------------ commands
    def request(self, cmd: dict[str, Any]) -> list[dict[str, Any]]:
        """Send one command and return its events up to ``done``.

        A runner that exits or stops answering is killed and restarted; the failure is
        returned (and forwarded) as an ``error`` event naming the command's level and shape.
        """
        cmd = dict(cmd)
        cmd.setdefault("id", next(self._ids))
        if self._proc is None or self._proc.poll() is not None:
            self.kill()
            self.start()
        events: list[dict[str, Any]] = []
        try:
            self._send(cmd)
        except OSError:
            pass  # the process died; reading reports it
        while True:
            ev = self._next(time.monotonic() + self.stall_timeout_s)
            if ev is None or ev is _EOF:
                events.append(self._failure(cmd, timeout=ev is None))
                self.kill()
                return events
            if ev.get("id") == cmd["id"] or (ev["type"] in ("error",) and ev.get("id") is None):
                events.append(ev)
            if ev["type"] == "done" and ev.get("id") == cmd["id"]:
                return events
            if ev["type"] in ("bye",) and cmd.get("cmd") == "quit":
                return events

    def _failure(self, cmd: dict[str, Any], timeout: bool) -> dict[str, Any]:
        code = self._proc.poll() if self._proc is not None else None
        shape = {k: cmd[k] for k in ("level", "M", "N", "K") if k in cmd}
        what = (f"{shape.get('level', cmd.get('cmd'))} "
                f"{'x'.join(str(shape[k]) for k in 'MNK' if k in shape)}").strip()
        if timeout:
            msg = (f"the runner stopped answering for {self.stall_timeout_s:.0f} s during "
                   f"{what}; it was killed and will be restarted")
            kind = ErrorKind.TIMEOUT
        else:
            msg = f"the runner exited (code {code}) during {what}; it will be restarted"
            kind = ErrorKind.RUNNER_CRASH
        ev = {"type": "error", "t": self.now(), "kind": str(kind), "message": msg,
              "id": cmd.get("id"), **shape}
        self.on_event(ev)
        return ev

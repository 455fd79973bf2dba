"""One runner process and the threads that read its pipes, with no Qt.

:class:`~gemmscope.kernels.drive.session.RunnerSession` starts a runner through :func:`spawn`;
the reader threads put each stdout line on the session's queue, stamped with the session
clock when it arrived, and keep the last lines of stderr for the failure message.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..protocol.events import MAX_LINE_BYTES

STDERR_TAIL_LINES = 8
EOF = b""  # a reader's last item: the pipe closed
# (runner generation, session time it arrived, the line; None: an over-long line dropped)
Line = tuple[int, float, bytes | None]


@dataclass(slots=True)
class RunnerProcess:
    """One runner process and the threads reading its pipes."""

    popen: subprocess.Popen[bytes]
    generation: int
    threads: list[threading.Thread]
    stderr_tail: deque[str]
    exited_at: float | None = None  # it was first seen exited with its pipes still open

    def kill(self) -> None:
        """End the runner's whole process group (it was started in a session of its own):
        a child it left holding the pipes, or its ssh, goes with it."""
        with contextlib.suppress(OSError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.popen.kill()

    def exited(self) -> bool:
        """Whether the runner has exited, without reaping it: while it is not reaped its
        pid (its process group's id) cannot be taken by another process, so
        :meth:`kill` can still end what it left behind."""
        if self.popen.returncode is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self.popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        except (AttributeError, OSError):  # no waitid here: ask, reaping
            return self.popen.poll() is not None
        return info is not None

    def gone_after_grace(self, grace_s: float) -> bool:
        """Whether a runner that exited while its pipes stay open (a child of it holds
        them) is to be taken as gone without its EOF: ``grace_s`` after its exit its
        group is ended (the children's end of the pipes closes), and twice that after,
        it is gone."""
        if not self.exited():
            return False
        now = time.monotonic()
        if self.exited_at is None:
            self.exited_at = now
        elif now - self.exited_at >= 2 * grace_s:
            return True
        elif now - self.exited_at >= grace_s:
            self.kill()  # its children: their end of the pipes closes
        return False

    def wait_exit(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the runner to exit (not reaped); False if it has
        not (a runner that closed its output and runs on)."""
        deadline = time.monotonic() + timeout_s
        while not self.exited():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def reap(self, timeout_s: float = 5.0) -> int | None:
        """Its exit code, after its group was ended (None if it would not die)."""
        self.kill()  # what it left in its group (it has exited, or is made to now)
        try:
            return self.popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def release(self) -> None:
        """Close its pipes (after it exited). A pipe whose reader thread is still blocked
        (a process outside its group holds the other end) is left to that daemon thread:
        closing it under the thread would wait on the thread's lock."""
        readers = dict(zip((self.popen.stdout, self.popen.stderr), self.threads, strict=False))
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is None or (stream in readers and readers[stream].is_alive()):
                continue
            with contextlib.suppress(OSError):
                stream.close()


def spawn(command: list[str], env: dict[str, str] | None, generation: int,
          lines: queue.Queue[Line], clock: Callable[[], float],
          wake: Callable[[], None]) -> RunnerProcess:
    """Start ``command`` in its own process group with its reader threads (OSError when
    it cannot be started). ``env``: the whole environment (None: this process's)."""
    env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
    popen = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, start_new_session=True)
    proc = RunnerProcess(popen, generation, [], deque(maxlen=STDERR_TAIL_LINES))
    proc.threads = [
        threading.Thread(target=_read_stdout, args=(proc, lines, clock, wake),
                         name="gemmscope-runner-stdout", daemon=True),
        threading.Thread(target=_read_stderr, args=(proc,), name="gemmscope-runner-stderr",
                         daemon=True),
    ]
    for thread in proc.threads:
        thread.start()
    return proc


def _read_stdout(proc: RunnerProcess, out: queue.Queue[Line], clock: Callable[[], float],
                 wake: Callable[[], None]) -> None:
    """Lines from the runner, each at most MAX_LINE_BYTES (a longer one is dropped, and
    says so), so a runner that never writes a newline cannot grow a buffer without bound.
    Each line is stamped with the session clock when it arrived."""
    stream = proc.popen.stdout
    assert stream is not None
    try:
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while True:  # skip to the end of the over-long line
                    rest = stream.readline(MAX_LINE_BYTES)
                    if not rest or rest.endswith(b"\n"):
                        break
                out.put((proc.generation, clock(), None))
            else:
                out.put((proc.generation, clock(), line))
            wake()
    except (OSError, ValueError):
        pass
    out.put((proc.generation, clock(), EOF))
    wake()


def _read_stderr(proc: RunnerProcess) -> None:
    stream = proc.popen.stderr
    assert stream is not None
    with contextlib.suppress(OSError, ValueError):
        for raw in iter(lambda: stream.readline(4096), b""):
            text = raw.decode("utf-8", "replace").strip()
            if text:
                proc.stderr_tail.append(text)

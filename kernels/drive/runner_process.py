"""One runner process and the threads that read its pipes, with no Qt.

:class:`~gemmscope.kernels.drive.session.RunnerSession` starts a runner through :func:`spawn`;
the reader threads put each stdout line on the session's queue, stamped with the session
clock when it arrived, and keep the last lines of stderr for the failure message.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import threading
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

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.popen.kill()

    def release(self) -> None:
        """Close its pipes (after it exited)."""
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
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

"""A SIGTERM ends a test run and every process it started, within seconds.

pytest's default answer to SIGTERM is to die at once and leave its children: a runner
(started in a session of its own, so a process-group kill misses it), ncu and the
program it profiles, or benchmarks/energy_check.py in a subprocess with a 600 s limit,
which on the H200 held a GPU run past its `timeout 330` (issue 40). ``install()`` puts
two answers in place, both of which first kill every descendant of this process:

- a Python handler, which then raises KeyboardInterrupt so that pytest ends the session
  as an interrupted one (its summary and junit file are written);
- a thread woken by the signal itself (``signal.set_wakeup_fd``: the byte is written by
  the C-level handler, even while the main thread waits in C code and the Python handler
  cannot run yet), which kills the descendants at once and ends the process with
  ``os._exit`` if the graceful path has not ended it within ``GRACE_S``.

The thread acts on every SIGTERM the process gets, also while code under test has put a
handler of its own in place (``record``'s, which stops its runner and returns 143): the
run still ends. So a test that checks a SIGTERM handler sends the signal to a
subprocess, never to the pytest process (tests/app/window/test_files_kept.py does so).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

GRACE_S = 5.0  # for pytest to end the session and print its summary (a few seconds:
# its plugins import lazily, hypothesis's took 1.7 s on a busy CI machine)
FLUSH_S = 1.0
EXIT_CODE = 128 + signal.SIGTERM


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux /proc; none elsewhere)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, parents before their children."""
    found: list[int] = []
    todo = [pid]
    while todo:
        below = children(todo.pop())
        found += below
        todo += below
    return found


def kill_descendants(pid: int | None = None) -> list[int]:
    """SIGKILL every process below ``pid`` (this process by default), and the process
    group of each that leads one (a runner's own session), found before any is killed,
    so none is orphaned out of reach first. Returns the pids it signalled."""
    tree = descendants(os.getpid() if pid is None else pid)
    for child in tree:
        try:
            if os.getpgid(child) == child:
                os.killpg(child, signal.SIGKILL)
            else:
                os.kill(child, signal.SIGKILL)
        except OSError:
            continue  # gone already
    return tree


_installed: list[int] = []


def _on_sigterm(signum: int, frame: object) -> None:
    kill_descendants()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it outright
    raise KeyboardInterrupt(f"signal {signum}: the run and its children were ended")


def _watch(read_fd: int) -> None:
    while True:
        try:
            got = os.read(read_fd, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        if not got:
            return
        if signal.SIGTERM in got:
            kill_descendants()
            time.sleep(GRACE_S)
            kill_descendants()
            _flush(FLUSH_S)
            os._exit(EXIT_CODE)


def _flush(within_s: float) -> None:
    """What pytest has printed so far, out of the buffers: from a thread of its own, as a
    stream's lock may be held by a main thread stuck in a write."""
    import sys

    def flush() -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                continue

    worker = threading.Thread(target=flush, name="sigterm-flush", daemon=True)
    worker.start()
    worker.join(within_s)


def install() -> bool:
    """Answer SIGTERM by ending this process's children, then this process. Only in the
    main thread of a process that has not set a wakeup fd of its own; once."""
    if _installed or threading.current_thread() is not threading.main_thread():
        return False
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:
        os.close(read_fd)
        os.close(write_fd)
        return False
    if previous != -1:  # someone else's (an event loop): leave theirs in place
        signal.set_wakeup_fd(previous)
        os.close(read_fd)
        os.close(write_fd)
        return False
    signal.signal(signal.SIGTERM, _on_sigterm)
    threading.Thread(target=_watch, args=(read_fd,), name="sigterm-watch",
                     daemon=True).start()
    _installed.append(write_fd)
    return True

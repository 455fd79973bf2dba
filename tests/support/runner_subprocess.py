"""A real `python -m gemmscope.kernels runner` for tests: fed bytes, read line by line.

Standard input is bytes, so a test can send what no encoder would (invalid UTF-8, a line
of megabytes); the runner is started under a strict UTF-8 locale and I/O encoding, as a
careful user's machine would have it. A thread drains standard output into a queue, so
a test that writes a lot never blocks on a full pipe.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from gemmscope.kernels.protocol.decoding import decode


def wire(line: str | bytes) -> dict:
    """One line the runner wrote, as JSON values, after the decoder has read it as a
    valid event (what the runner writes is checked where it is read)."""
    decode(line)
    return json.loads(line)


class RunnerProcess:
    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONIOENCODING="utf-8:strict", LC_ALL="C.UTF-8",
                   PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gemmscope.kernels", "runner", "--telemetry-hz", "0", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.header = self.until(lambda e: e["type"] == "ready", timeout_s=60)[0]

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def until(self, last: Callable[[dict], bool], timeout_s: float = 30) -> list[dict]:
        """Events up to the first for which ``last`` is true, as the runner wrote them
        (each one a valid event: it decodes into its record); fails if the runner exits
        or says nothing for ``timeout_s``."""
        got: list[dict] = []
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no answer in {timeout_s} s after {got[-3:]}") from None
            assert line is not None, f"the runner exited ({self.proc.wait()}) after {got[-3:]}"
            got.append(wire(line))
            if last(got[-1]):
                return got

    def close(self) -> int:
        """End of input (the same as quit); the runner's exit code."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.reader.join(timeout=10)
        self.proc.stdout.close()
        return code

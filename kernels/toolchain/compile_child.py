"""Where a source is compiled when it may not be trusted: a child process with limits.

A user's kernel source is compiled by NVRTC, and a preprocessor can be made to work
without end in a few lines (nested macros that expand to billions of tokens). In the
process that asked, that is a command that neither ends nor answers Ctrl-C (NVRTC does
not return to Python), with gigabytes taken. So a user's source is compiled here: in
``python -m gemmscope.kernels.toolchain.build_event``, the spec as JSON on stdin and
the answer as JSON on stdout (never pickle), under :data:`USER` limits that the child
sets on itself (address space and CPU time, ``resource.setrlimit``) and a wall-clock
limit the parent keeps; the parent kills it on Ctrl-C or any other exception, and the
child dies with its parent (Linux ``PR_SET_PDEATHSIG``) if that is killed outright.
Ladder levels are the project's own code and compile in the process (or in a child
under :data:`LADDER` limits where the runner keeps NVRTC out of its own process).
docs/user-kernels.md states the same limits.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# the child's entry: build_event's __main__, which runs child_main with its compile_spec
MODULE = "gemmscope.kernels.toolchain.build_event"


@dataclass(frozen=True, slots=True)
class Limits:
    wall_s: float  # the parent's clock
    cpu_s: int  # RLIMIT_CPU in the child
    memory_bytes: int | None  # RLIMIT_AS in the child (None: none)

    def text(self) -> str:
        memory = f" and {self.memory_bytes / (1 << 30):g} GiB of memory" \
            if self.memory_bytes else ""
        return f"at most {self.wall_s:g} s, {self.cpu_s} s of CPU{memory}"


# a user's source: the kernels of resources/kernels compile in a few seconds and well
# under 1 GiB; NVRTC and the CUDA headers map about 1 GiB of address space at start
USER = Limits(wall_s=60.0, cpu_s=60, memory_bytes=2 << 30)
# a ladder level compiled in a child (the runner): the Hopper levels take longest
LADDER = Limits(wall_s=600.0, cpu_s=600, memory_bytes=None)


class ChildFailed(RuntimeError):
    """The compile process ended without an answer; the message says why, in words."""


def compile_in_child(spec: dict[str, Any], limits: Limits = USER) -> dict[str, Any]:
    """``build_event.compile_spec(spec)`` in a child process under ``limits``."""
    argv = [sys.executable, "-m", MODULE, str(limits.cpu_s), str(limits.memory_bytes or 0),
            str(os.getpid())]
    try:
        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        raise ChildFailed(f"the compile process could not start: {exc}") from None
    with child:  # (its pipes closed and the process waited for, however this ends)
        try:
            out, err = child.communicate(json.dumps(spec), timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise ChildFailed(f"the compile was stopped after {limits.wall_s:g} s: a "
                              f"compile takes {limits.text()}") from None
        except BaseException:  # Ctrl-C, SIGTERM turned exception: the compile goes too
            child.kill()
            raise
    if child.returncode != 0:
        raise ChildFailed(_why(child.returncode, err, limits))
    try:
        answer: dict[str, Any] = json.loads(out)
    except ValueError:
        raise ChildFailed("the compile process gave no answer") from None
    return answer


def _why(code: int, err: str, limits: Limits) -> str:
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"the compile was stopped at its limit: a compile takes {limits.text()}"
    if code == -signal.SIGABRT or "MemoryError" in err or "bad_alloc" in err \
            or "out of memory" in err.lower():
        return f"the compile ran out of memory: a compile takes {limits.text()}"
    tail = " ".join(err.strip().splitlines()[-1:])[:300]
    return f"the compile process exited {code}: {tail}"


# ------------------------------------------------------------------ the child

def _limit_self(cpu_s: int, memory_bytes: int, parent: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    if sys.platform.startswith("linux"):  # die with the parent, however it ends
        PR_SET_PDEATHSIG = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)


def child_main(argv: list[str], work: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """The child: limits set on itself (``argv`` as :func:`compile_in_child` gives it),
    then ``work`` on the JSON spec from stdin, its answer as JSON on stdout."""
    cpu_s, memory_bytes, parent = (int(a) for a in argv)
    _limit_self(cpu_s, memory_bytes, parent)
    spec = json.load(sys.stdin)
    try:
        answer = work(spec)
    except MemoryError:
        answer = {"error": "the compile ran out of memory", "error_kind": "compile"}
    json.dump(answer, sys.stdout)
    return 0

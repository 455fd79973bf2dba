"""Ctrl-C as the commands see it: a KeyboardInterrupt, or an error Python raised because
one arrived inside something that wraps what it catches. A class body's ``__set_name__``
is one (Python 3.11 re-raises there as RuntimeError, the interrupt as its cause): Pillow
loads its GIF plugin on the first GIF save, so a Ctrl-C at the start of an animated export
came out as a traceback and exit status 1 instead of the one line and 130 (a test that
failed once in stretch 23's CI, when its SIGINT landed in that import).

And a Ctrl-C that Python drops: the KeyboardInterrupt raised inside a finalizer or a weakref
callback (an import lock's, as an export began writing) is printed as "Exception ignored"
and the work goes on, so an interrupted export wrote its file and exited 0 (2 of 48 runs).
:func:`watch_ctrl_c` remembers every SIGINT, so that a file is not committed after one
(kernels/protocol/atomic_file.py) and the command still ends as interrupted."""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import Any

MAX_LINKS = 32  # an exception's causes followed at most (a chain may loop)
_seen: list[bool] = []  # one entry once a SIGINT arrived (after watch_ctrl_c)


def watch_ctrl_c() -> None:
    """For a process's entry, on its main thread: SIGINT raises KeyboardInterrupt as
    Python's own handler does, and is remembered (:func:`ctrl_c_seen`); a KeyboardInterrupt
    that Python drops inside a finalizer is not printed (it is remembered)."""
    signal.signal(signal.SIGINT, _on_sigint)
    default = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            default(unraisable)

    sys.unraisablehook = hook


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _seen.append(True)
    raise KeyboardInterrupt


def ctrl_c_seen() -> bool:
    """Whether a SIGINT arrived since :func:`watch_ctrl_c`."""
    return bool(_seen)


def by_ctrl_c(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a KeyboardInterrupt or was raised because of one (its explicit
    ``__cause__`` or the ``__context__`` it was raised in, followed back)."""
    for _ in range(MAX_LINKS):
        if exc is None:
            return False
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
    return False

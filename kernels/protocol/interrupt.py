"""Ctrl-C as the commands see it: a KeyboardInterrupt, or an error Python raised because
one arrived inside something that wraps what it catches. A class body's ``__set_name__``
is one (Python 3.11 re-raises there as RuntimeError, the interrupt as its cause): Pillow
loads its GIF plugin on the first GIF save, so a Ctrl-C at the start of an animated export
came out as a traceback and exit status 1 instead of the one line and 130 (a test that
failed once in stretch 23's CI, when its SIGINT landed in that import)."""

from __future__ import annotations

MAX_LINKS = 32  # an exception's causes followed at most (a chain may loop)


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

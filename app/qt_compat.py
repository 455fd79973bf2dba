"""Work-around for a reference-count bug of PySide6 6.12 on CPython 3.11.

Measured here (PySide6 6.12.0, CPython 3.11.7): every call of a Python override of a
C++ virtual that returns None (``paintEvent``, pyqtgraph's ``paint``, ``itemChange``...)
takes one reference from ``None`` that it never gave (likewise ``True``/``False``).
pyqtgraph overrides many virtuals, so a plot that repaints a hundred times drives
``None``'s count to zero and the interpreter aborts ("none_dealloc: deallocating None").
CPython 3.12 made these objects immortal (PEP 683), so the bug is harmless there.

The same drift shows, slower, on the cached small ints (0, 1) and the empty string.

The GUI's start-up (``gui_main``) calls :func:`protect_singletons` once, before any widget
paints; on CPython < 3.12 it does by hand what PEP 683 does: it raises the
reference counts of these interpreter-lifetime singletons (``None``, ``True``, ``False``,
``Ellipsis``, ``NotImplemented``, the small ints -5..256, the empty and one-character
Latin-1 strings, ``()`` and ``b""``) far out of reach (2**60; they are static and never
freed, so nothing is lost). It is a no-op on
3.12 and later. Remove it when PySide6 is fixed or Python 3.11 support is dropped.
"""

from __future__ import annotations

import ctypes
import sys

_FAR = 1 << 60
_done = False


def protect_singletons() -> bool:
    """Make None/True/False/Ellipsis effectively immortal on CPython < 3.12."""
    global _done
    if _done or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    singletons = [None, True, False, Ellipsis, NotImplemented, (), b"", ""]
    singletons += [int(i) for i in range(-5, 257)]  # the interpreter's cached small ints
    singletons += [chr(i) for i in range(256)]  # cached one-character strings
    for obj in singletons:
        refcnt = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt is the first field
        if refcnt.value < _FAR:
            refcnt.value = _FAR
    _done = True
    return True

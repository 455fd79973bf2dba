"""The views' tests: offscreen Qt, and a workaround for PySide6 6.12 on Python 3.11."""

from __future__ import annotations

import ctypes
import os
import sys

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Workaround, Python < 3.12 only: PySide6/shiboken6 6.12 drops a reference to None (and
# True/False) on every call of a void Qt method (QPainter.fillRect, QWidget.update, ...),
# as if those objects were immortal, which they are only from Python 3.12 on. A few
# thousand paints later None's count reaches zero and the interpreter aborts
# ("Fatal Python error: none_dealloc"). Seen with sys.getrefcount(None) falling by one per
# call. Give the three objects a reference count nothing can exhaust.
if sys.version_info < (3, 12):
    for _obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(_obj)).value += 1 << 40


@pytest.fixture
def code_view(qtbot):
    """A shown Code view on a store, at a level: ``code_view(store, level_id)``."""
    from gemmscope.app.views.code import CodeView

    def make(store, level_id: str = "register_2d") -> CodeView:
        v = CodeView()
        qtbot.addWidget(v)
        v.bind(store)
        v.refresh(store.take_changes())
        v.set_level(level_id)
        v.resize(1400, 900)
        v.show()
        qtbot.waitExposed(v)
        return v
    return make

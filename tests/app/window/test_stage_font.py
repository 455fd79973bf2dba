"""The application's font on stage (app/window/presentation.py, AppFontOnStage): the
first window to go on stage keeps the font the process had, the last to leave gives it
back, whichever order the windows leave or close in."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication


@pytest.mark.parametrize("first_out", ["first_on", "second_on"])
def test_two_windows_on_stage_give_the_font_back_when_the_last_leaves(make_window,
                                                                      first_out):
    app = QApplication.instance()
    before = app.font().pointSize()
    a, b = make_window(), make_window()
    a.set_presentation(True, full_screen=False)
    stage = app.font().pointSize()
    assert stage != before
    b.set_presentation(True, full_screen=False)
    out, last = (a, b) if first_out == "first_on" else (b, a)
    out.set_presentation(False)
    assert app.font().pointSize() == stage  # the other window is still on stage
    last.close()  # closing, not leaving: the same
    assert app.font().pointSize() == before


def test_a_window_that_never_went_on_stage_leaves_the_font_alone(make_window):
    app = QApplication.instance()
    before = app.font().pointSize()
    a, b = make_window(), make_window()
    a.set_presentation(True, full_screen=False)
    b.set_presentation(False)
    b.close()
    assert app.font().pointSize() != before  # a is still on stage
    a.set_presentation(False)
    assert app.font().pointSize() == before

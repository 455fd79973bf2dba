"""The status bar's parts never overlap (issue 43 item 6): the message, the runs and the
source each keep a rectangle of their own at 1024x640, 1280x720 and 1920x1080, in normal
and presentation mode, with texts longer than the bar; each text that does not fit is cut
with "…" and said whole in its tooltip; the message has room whatever the other parts
say, and goes when it is cleared or times out."""

from __future__ import annotations

from itertools import combinations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication

from gemmscope.app.widgets.status_line import MESSAGE_SHARE, StatusLine
from gemmscope.app.window.main_window import bundled_session

SIZES = ((1024, 640), (1280, 720), (1920, 1080))
MESSAGE = "saved /home/someone/a/long/path/to/the/exported/pictures/roofline-4096-burst.png"
RUNS = "running cp_async_interior at 8192×8192×8192, repeat 3 of 20, burst, GPU 0 (H200)"


def settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


def window_at(qtbot, make_window, size, presentation):
    window = make_window()
    path = bundled_session()
    if path is not None:
        assert window.open_recording(path)
        window.play_instant()
    if presentation:
        window.set_presentation(True, full_screen=False)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.resize(*size)
    window.run_label.setText(RUNS)
    window.statusBar().showMessage(MESSAGE)
    settle()
    return window


def shown_text(label) -> str:
    return super(type(label), label).text()  # what QLabel paints (the elided text)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("presentation", (False, True), ids=("normal", "stage"))
def test_the_status_bar_parts_never_overlap(qtbot, make_window, size, presentation):
    window = window_at(qtbot, make_window, size, presentation)
    bar = window.statusBar()
    assert isinstance(bar, StatusLine)
    parts = [label for label in bar.part_labels() if label.isVisible()]
    assert len(parts) == 3  # the message, the runs, the source
    rects = {label.text(): QRect(label.mapTo(window, label.rect().topLeft()), label.size())
             for label in parts}
    assert [f"{a[:12]} / {b[:12]}" for (a, ra), (b, rb) in combinations(rects.items(), 2)
            if ra.intersects(rb)] == []
    inside = QRect(0, 0, window.width(), window.height())
    assert all(inside.contains(r) for r in rects.values())
    for label in parts:
        shown = shown_text(label)
        room = label.contentsRect().width()
        assert QFontMetricsF(label.font()).horizontalAdvance(shown) <= room + 1
        if shown != label.text():  # cut: with "…", the whole text in the tooltip
            assert shown.endswith("…") and label.text() in label.toolTip()
    # the message keeps its share of the bar beside two long standing parts
    assert bar.message_label.width() >= MESSAGE_SHARE * bar.width() * 0.9
    assert shown_text(bar.message_label).startswith("saved /home/")


def test_a_cleared_message_leaves_its_room_to_the_other_parts(qtbot, make_window):
    window = window_at(qtbot, make_window, (1280, 720), False)
    bar = window.statusBar()
    narrow = window.run_label.width()
    bar.clearMessage()
    settle()
    assert bar.currentMessage() == "" and shown_text(bar.message_label) == ""
    assert window.run_label.width() > narrow


def test_a_timed_message_goes_when_its_time_is_up(qtbot, make_window):
    window = window_at(qtbot, make_window, (1280, 720), False)
    window.statusBar().showMessage("select a level first", 50)
    assert window.statusBar().message_label.text() == "select a level first"
    qtbot.waitUntil(lambda: window.statusBar().message_label.text() == "", timeout=2000)

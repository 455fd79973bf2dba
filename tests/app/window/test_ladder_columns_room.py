"""The Ladder panel shows more columns when there is room (issue 43 item 6): at 1280x720 the
essential ones (level, TFLOPS, % of cuBLAS, verified); a window widened to 1920x1080
widens the ladder's dock and shows more (the SM clock and J/GEMM among them), every column
whole, the dock with no empty strip wider than a column; on stage the dock is not
widened (the stage shows the level and TFLOPS only)."""

from __future__ import annotations

import pytest
from layout_check import _cut_cells
from PySide6.QtWidgets import QApplication

from gemmscope.app.widgets.ladder_panel import COLUMNS
from gemmscope.app.window.main_window import bundled_session
from gemmscope.app.window.presentation import LADDER_SHARE
from gemmscope.kernels.results.rows import Column

ESSENTIAL = {Column.LEVEL, Column.TFLOPS, Column.PCT_OF_REFERENCE, Column.VERIFIED}


@pytest.fixture
def window(qtbot, make_window):
    path = bundled_session()
    if path is None:
        pytest.skip("the bundled recording is not in this build")
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    window.resize(1280, 720)
    settle(window)
    return window


def settle(window) -> None:
    for _ in range(4):
        QApplication.processEvents()
    window.flush_views()
    QApplication.processEvents()


def shown(window) -> set[str]:
    table = window.ladder.table
    return {c for i, c in enumerate(COLUMNS) if not table.isColumnHidden(i)}


def test_a_wider_window_shows_more_ladder_columns(window):
    narrow = shown(window)
    assert ESSENTIAL <= narrow
    assert _cut_cells(window.ladder.table) == []
    window.resize(1920, 1080)
    settle(window)
    wide = shown(window)
    assert narrow < wide
    assert {Column.SM_CLOCK, Column.ENERGY} <= wide
    assert _cut_cells(window.ladder.table) == []
    assert window.ladder_dock.width() <= LADDER_SHARE * 1920 + 1
    # no strip left empty that the next wanted column would fit in
    table, fitted = window.ladder.table, window.ladder.fitted
    used = sum(table.columnWidth(i) for i in range(len(COLUMNS)) if not table.isColumnHidden(i))
    following = next(i for i in fitted.priority if i in fitted.room_hidden)
    assert table.viewport().width() - used < fitted.width_of(following)


def test_the_columns_go_again_when_the_window_narrows(window):
    window.resize(1920, 1080)
    settle(window)
    window.resize(1280, 720)
    settle(window)
    assert ESSENTIAL <= shown(window)
    assert _cut_cells(window.ladder.table) == []


def test_on_stage_the_ladder_dock_is_not_widened(window):
    window.set_presentation(True, full_screen=False)
    settle(window)
    before = window.ladder_dock.width()
    window.resize(1920, 1080)
    settle(window)
    assert window.ladder_dock.isHidden() or window.ladder_dock.width() <= before

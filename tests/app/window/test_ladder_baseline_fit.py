"""Beside a baseline recording the ladder dock shows the baseline's column whole at every
screen, the default window at 1280x720 included: while a baseline is open its column
comes right after TFLOPS, and the column it displaced comes back when it closes."""

from __future__ import annotations

import pytest
from layout_check import _cut_cells
from places import SESSIONS
from PySide6.QtWidgets import QApplication

from gemmscope.app.widgets.ladder_panel import COLUMNS
from gemmscope.app.window.baseline import set_baseline_now
from gemmscope.app.window.main_window import bundled_session
from gemmscope.kernels.results.rows import Column

SIZES = ((1280, 720), (1366, 768), (1920, 1080))


@pytest.fixture(scope="module")
def recordings():
    path = bundled_session()
    other = SESSIONS / "h200x2-ladder.jsonl.gz"  # the two-GPU recording, as a baseline
    if path is None or not other.is_file():
        pytest.skip("the bundled recordings are not in this build")
    return path, other


def _settle(window) -> None:
    for _ in range(3):
        QApplication.processEvents()
    window.flush_views()
    QApplication.processEvents()


def _shown(window) -> list[str]:
    table = window.ladder.table
    return [c for i, c in enumerate(COLUMNS) if not table.isColumnHidden(i)]


def _window_at(qtbot, make_window, recording, size):
    window = make_window()
    assert window.open_recording(recording)
    window.play_instant()
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.resize(*size)
    _settle(window)
    return window


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_baseline_column_shows_whole_in_the_default_dock(qtbot, make_window,
                                                             recordings, size):
    recording, baseline = recordings
    window = _window_at(qtbot, make_window, recording, size)
    assert set_baseline_now(window, str(baseline)) is None
    _settle(window)
    shown = _shown(window)
    assert {Column.LEVEL, Column.TFLOPS, Column.BASELINE} <= set(shown)
    table = window.ladder.table
    assert _cut_cells(table) == []
    # the most wanted first, by the order the panel keeps beside a baseline
    fitted = window.ladder.fitted
    priority = [COLUMNS[i] for i in fitted.priority if i in fitted.allowed]
    wanted = [c for c in priority if c in shown]
    assert wanted == priority[:len(wanted)]
    assert priority.index(Column.BASELINE) == 2
    cell = window.ladder.cell("naive", Column.BASELINE)
    assert cell.text() != "–" and "this session / baseline" in cell.toolTip()


def test_the_column_the_baseline_displaced_comes_back_when_it_closes(
        qtbot, make_window, recordings):
    recording, baseline = recordings
    window = _window_at(qtbot, make_window, recording, (1280, 720))
    alone = _shown(window)
    assert Column.BASELINE not in alone
    assert set_baseline_now(window, str(baseline)) is None
    _settle(window)
    beside = _shown(window)
    assert Column.BASELINE in beside
    displaced = [c for c in alone if c not in beside]
    assert displaced  # the default dock at 1280x720 has no room for every column
    window.store.set_baseline(None)
    _settle(window)
    assert _shown(window) == alone

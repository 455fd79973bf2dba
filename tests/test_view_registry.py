"""Views registered by other modules get a tab, a name for --view, and level changes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QLabel

from gemmscope.app import view_registry
from gemmscope.app.redraw import RedrawThrottle


class LevelView(QLabel):
    def __init__(self):
        super().__init__("tiling")
        self.levels: list[str] = []

    def set_level(self, level_id: str) -> None:
        self.levels.append(level_id)


@pytest.fixture
def tiling_view():
    view_registry.register_view("tiling_test", "Tiling (test)", LevelView)
    yield
    view_registry.unregister_view("tiling_test")


def test_a_registered_view_is_a_tab_and_follows_the_selected_level(make_window, tiling_view,
                                                                   synthetic_file):
    window = make_window()
    view = window.named_widget("tiling_test")
    assert isinstance(view, LevelView)
    assert window.tabs.tabText(window.tabs.indexOf(view)) == "Tiling (test)"
    assert "tiling_test" in window.view_names()
    window.open_recording(synthetic_file)
    window.play_instant()
    window.ladder.select_level("register_2d")
    assert view.levels[-1] == "register_2d"


def test_view_names_are_checked():
    with pytest.raises(ValueError):
        view_registry.register_view("no spaces", "x", LevelView)


def test_throttle_coalesces_pokes_into_a_bounded_rate(qtbot):
    calls = []
    pokes = []
    throttle = RedrawThrottle(lambda: calls.append(1), interval_ms=50)
    poker = QTimer()
    poker.timeout.connect(lambda: (pokes.append(1), throttle.poke()))
    clock = QElapsedTimer()
    clock.start()
    poker.start(1)  # pokes up to 1000 times a second
    qtbot.wait(500)
    poker.stop()
    throttle.stop()
    elapsed_ms = clock.elapsed()
    assert len(pokes) > 3 * len(calls)  # many pokes folded into few redraws
    assert 3 <= len(calls) <= elapsed_ms / 50 + 2  # never more than one per interval

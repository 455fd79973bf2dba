"""The replay bar shows the replay's position without a window paint for every replay
tick: at most every POSITION_MS while playing (the latest position, after the wait), at
once when paused or finished."""

from __future__ import annotations

from gemmscope.app.widgets.replay_bar import ReplayBar


def test_while_playing_the_position_moves_at_most_every_interval_and_ends_on_the_latest(
        qtbot):
    bar = ReplayBar()
    qtbot.addWidget(bar)
    bar.show_position(1.0, 100.0, playing=True)  # the first one shows at once
    assert bar.position.text().strip().startswith("1.0")
    for t in (1.2, 1.4, 1.6):  # ticks 16 ms apart: held back, the latest kept
        bar.show_position(t, 100.0, playing=True)
    assert bar.position.text().strip().startswith("1.0")
    assert bar.play_button.text() == "Pause"
    qtbot.waitUntil(lambda: bar.position.text().strip().startswith("1.6"),
                    timeout=10 * ReplayBar.POSITION_MS)
    assert bar.slider.value() == round(0.016 * ReplayBar.SLIDER_STEPS)


def test_a_paused_or_finished_replay_shows_its_position_at_once(qtbot):
    bar = ReplayBar()
    qtbot.addWidget(bar)
    bar.show_position(1.0, 100.0, playing=True)
    bar.show_position(2.0, 100.0, playing=True)  # held back
    bar.show_position(50.0, 100.0, playing=False)  # paused (or a seek while paused)
    assert bar.position.text().strip().startswith("50.0")
    assert bar.play_button.text() == "Play"
    assert bar.slider.value() == ReplayBar.SLIDER_STEPS // 2
    qtbot.wait(2 * ReplayBar.POSITION_MS)  # nothing older shows afterwards
    assert bar.position.text().strip().startswith("50.0")

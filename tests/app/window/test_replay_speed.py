"""The replay speed is one state: the replay bar shows the speed the replay plays at, a
replay opened later plays at it too, the command line and a talk's scene set it, and
only the person's choice on the bar is remembered in the preferences."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from gemmscope.app import gui_args, gui_main
from gemmscope.app.core.replay import Speed
from gemmscope.app.window.preferences import Preferences, open_settings
from gemmscope.app.window.talk import TalkController, load_talk

TALK = """
recording = "synthetic.jsonl"

[[scene]]
view = "charts"
level = "naive"
speed = "1x"
caption = "{level}: {tflops} TFLOPS"
"""


def _remembered(ini) -> Speed:
    return Preferences(open_settings(str(ini), writable=False)).speed


def _plays_at(window, speed: Speed) -> bool:
    return (window.replay is not None and window.replay.clock.speed is speed
            and window.replay_bar.current_speed() is speed and window.replay_speed is speed)


def test_a_speed_set_for_the_moment_is_the_one_the_next_replay_plays_at(
        make_window, synthetic_file, tmp_path):
    ini = tmp_path / "speed.ini"
    window = make_window(ini)
    window.set_replay_speed(Speed.INSTANT, remember=False)
    assert window.open_recording(synthetic_file)
    assert _plays_at(window, Speed.INSTANT)
    assert _remembered(ini) is Speed.X4  # the default, as it was


def test_a_second_replay_plays_at_the_speed_the_bar_shows(qtbot, make_window,
                                                          synthetic_file, tmp_path):
    ini = tmp_path / "speed.ini"
    window = make_window(ini)
    assert window.open_recording(synthetic_file)
    window.replay_bar.speed.setCurrentText("1x")  # the person's choice: remembered
    assert _plays_at(window, Speed.X1) and _remembered(ini) is Speed.X1
    window.set_replay_speed(Speed.X16, remember=False)  # a scene's, a picture's
    assert _plays_at(window, Speed.X16)
    assert window.open_recording(synthetic_file)  # File ▸ Open again
    qtbot.waitUntil(lambda: window.replay.position_s > 0)
    assert _plays_at(window, Speed.X16)
    assert _remembered(ini) is Speed.X1


def test_playing_the_whole_recording_at_once_keeps_the_chosen_speed(
        qtbot, make_window, synthetic_file):
    window = make_window()
    window.set_replay_speed(Speed.X1, remember=False)
    assert window.open_recording(synthetic_file)
    window.play_instant()  # a picture's or a test's: the recording delivered now
    assert window.replay.clock.finished and _plays_at(window, Speed.X1)
    window.replay_bar.play_button.click()  # again, from the start, at the bar's speed
    assert window.replay.playing and _plays_at(window, Speed.X1)
    qtbot.waitUntil(lambda: window.replay.position_s > 0)
    assert not window.replay.clock.finished  # 1x: not all at once


def test_the_command_lines_speed_plays_and_shows_and_is_not_remembered(
        qtbot, make_window, synthetic_file, tmp_path, monkeypatch):
    ini = tmp_path / "speed.ini"
    window = make_window(ini)
    app = QApplication.instance()
    monkeypatch.setattr(app, "exec", lambda: 0)
    args = gui_args.build_parser().parse_args(
        ["replay", str(synthetic_file), "--speed", "16x"])
    assert gui_main._run(app, window, args) == 0
    qtbot.waitUntil(lambda: window.replay is not None, timeout=10_000)
    assert _plays_at(window, Speed.X16)
    assert _remembered(ini) is Speed.X4


def test_a_scene_sets_the_speed_before_its_replay_opens_and_never_remembers_it(
        make_window, synthetic_file, tmp_path):
    talk_file = synthetic_file.parent / "speed.toml"
    talk_file.write_text(TALK, encoding="utf-8")
    ini = tmp_path / "speed.ini"
    window = make_window(ini)
    window.set_replay_speed(Speed.X16)  # remembered, as the bar would
    controller = TalkController(window, load_talk(talk_file))
    try:
        controller.apply(controller.talk.scenes[0])  # no replay open yet
        assert window.replay_bar.current_speed() is Speed.X1
        assert window.open_recording(synthetic_file)
        assert _plays_at(window, Speed.X1)
        assert _remembered(ini) is Speed.X16 and window.prefs.speed is Speed.X16
    finally:
        controller.stop()

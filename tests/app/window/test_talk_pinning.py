"""Talks that do not drift: a talk pins its shape, reads the whole recording before its
first caption, so a caption is the same at any paging speed and in a screenshot of its
scene; each scene's speed and steps take effect; captions name levels as the pictures do;
a talk never writes the user's preferences; `talk --check` finds captions that do not
fit their band."""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic_session as syn
from PySide6.QtCore import QSettings, Qt

from gemmscope.app import gui_main
from gemmscope.app.core.replay import Speed
from gemmscope.app.core.view_state import shape_text
from gemmscope.app.widgets.caption_bar import MIN_CAPTION_PX, CaptionBar
from gemmscope.app.window.talk import (
    TalkController,
    TalkOptions,
    load_talk,
    open_talk,
    run_talk,
    start_talk,
    talk_path,
)
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.results.rows import tflops_text

TALK = """
title = "Pinned"
recording = "synthetic.jsonl"
shape = "8192"

[[scene]]
view = "charts"
level = "register_2d"
speed = "16x"
caption = "{level} at {shape}: {tflops} TFLOPS, {pct_ref} of {ref}"

[[scene]]
view = "coalescing"
level = "coalesced"
step = [2, 3]
caption = "{tflops} at {shape}, {speedup} the TFLOPS of {prev}"

[[scene]]
view = "tiling"
level = "register_2d"
shape = "1024"
step = 2
caption = "{tflops} at {shape}"
"""


@pytest.fixture
def talk_file(synthetic_file: Path) -> Path:
    path = synthetic_file.parent / "pinned.toml"
    path.write_text(TALK, encoding="utf-8")
    return path


def _args(**kw) -> TalkOptions:
    return TalkOptions(**{"scene": 1, "size": "1400x900", **kw})


def _paged(qtbot, make_window, talk) -> tuple[object, TalkController]:
    """A talk started as `gemmscope talk` starts it (the recording read in the
    background, the whole of it delivered, then the first scene)."""
    window = make_window()
    controller = TalkController(window, talk)
    start_talk(window, controller, talk.recording)
    qtbot.waitUntil(lambda: controller.index == 0, timeout=10_000)
    return window, controller


def test_captions_are_the_same_paged_fast_and_in_a_scene_screenshot(qtbot, make_window,
                                                                     talk_file, tmp_path):
    talk = load_talk(talk_file)
    window, controller = _paged(qtbot, make_window, talk)
    try:
        # the first scene came with the whole recording in the store, not part of it
        assert window.replay.delivered_count == len(window.replay.recording.events)
        fast = []
        for _ in talk.scenes:  # as fast as a speaker can page: no wait between keys
            fast.append(controller.caption.text.text())
            while controller.step_index + 1 < len(controller.scene.steps):
                controller.next()
            controller.next()
    finally:
        controller.stop()
    for n in range(1, len(talk.scenes) + 1):
        shot_window = make_window()
        assert run_talk(None, shot_window, talk,
                        _args(screenshot=str(tmp_path / f"s{n}.png"), scene=n)) == 0
        caption = shot_window.findChild(CaptionBar, "talk_caption")
        assert caption.text.text() == fast[n - 1], n
    big = Shape(8192, 8192, 8192)
    # (the synthetic session ran no cuBLAS at 8192³: dashes, not another shape's numbers)
    assert fast[0] == (f"2D register blocking at {big}: {tflops_text(syn.SWEEP[8192])} "
                       "TFLOPS, – of –")
    assert fast[2] == f"{tflops_text(syn.SWEEP[1024])} at {Shape(1024, 1024, 1024)}"


def test_the_talk_pins_its_shape_through_the_whole_replay(qtbot, make_window, talk_file):
    talk = load_talk(talk_file)
    window = make_window()
    seen = []
    window.view_state_changed.connect(lambda _b, after: seen.append(after.shape))
    controller = TalkController(window, talk)
    try:
        start_talk(window, controller, talk.recording)
        qtbot.waitUntil(lambda: controller.index == 0, timeout=10_000)
        window.play_instant()  # every shape of the recording arrives
        window.flush_views()
        big = Shape(8192, 8192, 8192)
        assert set(seen) <= {big}
        assert window.view_state.state.shape == big
        assert window.charts()["bars"].base_title.endswith(f"at {shape_text(big)}, burst")
        # the selector lists the shapes the replay brought; the chosen one stays
        assert len(window.ladder.shape_texts()) > 1
        assert window.ladder.shape_box.currentText() == shape_text(big)
    finally:
        controller.stop()


def test_the_first_scenes_speed_is_the_replays(qtbot, make_window, talk_file):
    talk = load_talk(talk_file)
    window, controller = _paged(qtbot, make_window, talk)
    try:
        assert window.replay.clock.speed is Speed.X16
        assert window.replay_bar.current_speed() is Speed.X16
    finally:
        controller.stop()


def test_pagedown_walks_a_scenes_steps_before_the_next_scene(qtbot, make_window, talk_file):
    window = make_window()
    talk = load_talk(talk_file)
    assert window.open_recording(talk.recording)
    window.play_instant()
    window.set_animated(False)
    controller = open_talk(window, talk, window.replay.recording.events)
    try:
        canvas = window.views["coalescing"].canvas
        walk = []
        for _ in range(4):
            qtbot.keyClick(window.ladder.table, Qt.Key.Key_PageDown)
            walk.append((controller.index, canvas.step if controller.index == 1 else None))
        # scene 2 at its step 2, then its step 3, then scene 3 (steps count from 1)
        assert walk[:3] == [(1, 1), (1, 2), (2, None)]
        assert window.view_state.state.step == window.views["tiling"].canvas.step == 1
        qtbot.keyClick(window.ladder.table, Qt.Key.Key_PageUp)  # back to scene 2 ...
        qtbot.keyClick(window.ladder.table, Qt.Key.Key_PageUp)  # ... and to its first step
        assert (controller.index, controller.step_index) == (1, 0)
        assert canvas.step == 1 and window.view_state.state.step == 1
    finally:
        controller.stop()


def test_captions_name_references_and_levels_as_the_pictures_do():
    talk = load_talk(talk_path("ladder"))
    from gemmscope.app.core.talk import caption_store
    from gemmscope.kernels.protocol.recording import read_session

    store = caption_store(read_session(talk.recording).events)
    from gemmscope.app.core.talk import caption_text

    ids = [lv.id for lv in store.levels]
    for n, scene in enumerate(talk.scenes, 1):
        text = caption_text(scene, store, talk.shape_of(scene))
        assert not [i for i in ids if f" {i} " in f" {text} " or f" {i}." in text
                    or f" {i}," in text], (n, text)


def test_a_caption_reads_the_level_as_the_recordings_later_header_describes_it(
        synthetic_file, tmp_path):
    """record --update appends a header whose catalog describes a changed level anew (its
    parameters, what it adds): a caption quotes that, as the pictures draw it, not the
    first header's words."""
    import copy

    from gemmscope.app.core.talk import Scene, caption_store, caption_text
    from gemmscope.kernels.protocol.recording import read_session

    evs = syn.file_events(synthetic_file)
    later = copy.deepcopy(evs[0])
    later["t"] = max(ev.get("t", 0.0) for ev in evs) + 1.0
    for entry in later["catalog"]:
        if entry["id"] == "register_2d":
            entry["adds"] = "Its new form, as the later runner describes it."
    path = syn.write(tmp_path / "updated.jsonl", [*evs, later])
    store = caption_store(read_session(path).events)
    scene = Scene(view="charts", level="register_2d", caption="{adds}")
    assert caption_text(scene, store) == "Its new form, as the later runner describes it."


def test_a_talk_never_writes_the_users_preferences(talk_file, tmp_path):
    ini = tmp_path / "user.ini"
    user = QSettings(str(ini), QSettings.Format.IniFormat)
    user.setValue("replay/speed", "4x")
    user.setValue("view/presentation", False)
    user.setValue("run/M", 512)
    user.sync()
    before = ini.read_bytes()
    shot = tmp_path / "s.png"
    # scene 3 sets the run form's shape; scene 1 plays at 16x; --presentation turns it on
    for scene in ("1", "3"):
        assert gui_main.main(["talk", str(talk_file), "--screenshot", str(shot), "--scene",
                              scene, "--presentation", "--size", "1700x950",
                              "--settings", str(ini)]) == 0
    assert ini.read_bytes() == before


def test_a_scene_speed_is_not_remembered(make_window, synthetic_file):
    window = make_window()
    assert window.open_recording(synthetic_file)
    kept = window.prefs.speed
    window.set_replay_speed(Speed.X16, remember=False)
    assert window.replay.clock.speed is Speed.X16 and window.prefs.speed == kept


def test_check_lists_the_scenes_whose_caption_does_not_fit(synthetic_file, capsys):
    long = " ".join(["{title} adds {adds}; the words run on past the band."] * 12)
    path = synthetic_file.parent / "long.toml"
    path.write_text(f'recording = "synthetic.jsonl"\n[[scene]]\nview = "charts"\n'
                    f'caption = "short"\n[[scene]]\nview = "charts"\nlevel = "naive"\n'
                    f'caption = "{long}"\n', encoding="utf-8")
    assert gui_main.main(["talk", str(path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "scene 2: the caption does not fit" in out and "scene 1" not in out
    assert f"at {MIN_CAPTION_PX} px text" in out


def test_the_example_talk_passes_check(capsys):
    assert gui_main.main(["talk", "ladder", "--check"]) == 0
    assert "every caption of" in capsys.readouterr().out


def test_a_caption_shrinks_to_fit_before_it_is_cut(qtbot):
    from gemmscope.app.theme import PRESENTATION

    bar = CaptionBar()
    qtbot.addWidget(bar)
    bar.apply_theme(PRESENTATION)  # large type to start from
    bar.resize(1280, 200)
    short_px = bar.fit_size("short", 1200, 140)[0]
    text = " ".join(["a caption of many words"] * 25)
    px, height, fits = bar.fit_size(text, 1200, 140)
    assert fits and MIN_CAPTION_PX <= px < short_px and height <= 140
    assert not bar.fit_size(text * 4, 1200, 140)[2]

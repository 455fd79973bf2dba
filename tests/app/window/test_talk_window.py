"""`gemmscope talk`: scenes on the main window, the keys a speaker and a presenter clicker
press, the caption, and the screenshot of one scene."""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic_session as syn
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from gemmscope.app import gui_main
from gemmscope.app.views.playback import ViewPanel
from gemmscope.app.widgets.caption_bar import CaptionBar
from gemmscope.app.window.talk import TalkOptions, load_talk, open_talk, run_talk
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.results.rows import tflops_text

TALK = """
title = "Test talk"
recording = "synthetic.jsonl"

[[scene]]
view = "charts"
level = "naive"
caption = "{title}: {tflops} TFLOPS"

[[scene]]
view = "tiling"
level = "register_2d"
shape = "1000x999x1001"
step = 3
caption = "{title} <b>not bold</b>"

[[scene]]
view = "banks"
level = "smem_tiled"
step = 2
caption = "third"
"""


@pytest.fixture
def talk_file(synthetic_file: Path) -> Path:
    path = synthetic_file.parent / "talk.toml"  # beside synthetic.jsonl
    path.write_text(TALK, encoding="utf-8")
    return path


@pytest.fixture
def talk_window(qtbot, make_window, talk_file):
    """A window on the synthetic recording (played whole) with the test talk open."""
    window = make_window()
    talk = load_talk(talk_file)
    assert window.open_recording(talk.recording)
    window.set_animated(False)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    controller = open_talk(window, talk, window.replay.recording.events)
    yield window, controller
    controller.stop()


def _tab(window) -> str:
    return next(n for n, v in window.views.items() if v is window.tabs.currentWidget())


def test_a_scene_sets_the_tab_level_shape_step_and_caption(talk_window):
    window, controller = talk_window
    assert controller.index == 0
    assert _tab(window) == "charts" and window.ladder.selected_level() == "naive"
    caption = controller.caption
    want = f"Naive (uncoalesced): {tflops_text(syn.LADDER_TFLOPS['naive'])} TFLOPS"
    assert caption.text.text() == want
    assert caption.number.text() == "1 / 3"
    controller.next()
    assert _tab(window) == "tiling" and window.ladder.selected_level() == "register_2d"
    assert window.run_form().shape == Shape(1000, 999, 1001)
    view = window.views["tiling"]
    assert isinstance(view, ViewPanel)
    assert view.canvas.step == 2 and not view.canvas.is_playing()  # steps count from 1
    # the recording's text is shown as written, never as markup
    assert caption.text.textFormat() == Qt.TextFormat.PlainText
    assert caption.text.text().endswith("<b>not bold</b>")
    assert caption.number.text() == "2 / 3"


def test_clicker_and_keyboard_keys_step_through_the_scenes(qtbot, talk_window):
    window, controller = talk_window
    table = window.ladder.table
    table.setFocus()
    steps = [(Qt.Key.Key_PageDown, 1), (Qt.Key.Key_PageDown, 2), (Qt.Key.Key_PageDown, 2),
             (Qt.Key.Key_PageUp, 1), (Qt.Key.Key_Left, 0), (Qt.Key.Key_Left, 0),
             (Qt.Key.Key_Right, 1), (Qt.Key.Key_Space, 2), (Qt.Key.Key_Backspace, 1),
             (Qt.Key.Key_End, 2), (Qt.Key.Key_Home, 0)]
    for key, index in steps:
        qtbot.keyClick(table, key)
        assert controller.index == index, key
    # while a talk is open, Left/Right step scenes, not levels, and Space runs nothing
    assert window.ladder.selected_level() == "naive"
    assert window.statusBar().currentMessage() == ""


def test_b_and_period_blank_the_screen_and_a_scene_key_brings_it_back(qtbot, talk_window):
    window, controller = talk_window
    cover = controller.blank
    for key in (Qt.Key.Key_B, Qt.Key.Key_Period):
        qtbot.keyClick(window.ladder.table, key)
        assert cover.isVisible()
        qtbot.waitUntil(lambda: cover.geometry() == window.rect())  # follows the window
        image = window.grab().toImage()
        assert image.pixelColor(image.width() // 2, image.height() // 2).name() == "#000000"
        qtbot.keyClick(window.ladder.table, key)
        assert not cover.isVisible()
    qtbot.keyClick(window.ladder.table, Qt.Key.Key_B)
    qtbot.keyClick(window.ladder.table, Qt.Key.Key_PageDown)
    assert not cover.isVisible() and controller.index == 1


def test_f5_turns_presentation_mode_on_with_a_larger_caption(qtbot, talk_window):
    window, controller = talk_window
    before = controller.caption.shown_pt
    font = QApplication.font()
    try:
        qtbot.keyClick(window.ladder.table, Qt.Key.Key_F5)
        assert window.theme.name == "presentation"
        assert controller.caption.shown_pt > before
    finally:
        window.set_presentation(False)
        QApplication.setFont(font)  # the application's, for the tests after this one


def test_f5_puts_a_full_screen_talk_on_stage(qtbot, talk_window):
    """A talk opens full screen in the normal theme (`gemmscope talk FILE`): F5 there
    turns presentation mode on too, and again it keeps it."""
    window, controller = talk_window
    font = QApplication.font()
    window.showFullScreen()
    qtbot.waitUntil(window.isFullScreen)
    try:
        qtbot.keyClick(window.ladder.table, Qt.Key.Key_F5)
        assert window.theme.name == "presentation" and window.isFullScreen()
        shown = controller.caption.shown_pt
        qtbot.keyClick(window.ladder.table, Qt.Key.Key_F5)
        assert window.theme.name == "presentation" and controller.caption.shown_pt == shown
    finally:
        window.set_presentation(False)
        QApplication.setFont(font)


def test_no_caption_shows_before_the_whole_recording_is_read(qtbot, make_window,
                                                             talk_file):
    window = make_window()
    talk = load_talk(talk_file)
    controller = open_talk(window, talk)  # no recording yet: no scene, no numbers
    try:
        assert controller.index == -1 and "reading the recording" in \
            controller.caption.text.text()
        controller.next()  # a key before the recording is read does nothing
        assert controller.index == -1
        assert window.open_recording(talk.recording)
        window.replay.pause()  # the replay has delivered nothing yet
        controller.load(window.replay.recording.events)
        controller.go(0)
        # the numbers are the whole recording's, though the replay has not reached them
        want = f"Naive (uncoalesced): {tflops_text(syn.LADDER_TFLOPS['naive'])} TFLOPS"
        assert controller.caption.text.text() == want
        window.play_instant()
        controller.go(0)
        assert controller.caption.text.text() == want
    finally:
        controller.stop()


def _args(**kw) -> TalkOptions:
    return TalkOptions(**{"scene": 1, "size": "1400x900", **kw})


def test_a_scene_screenshot_renders_that_scene(qtbot, make_window, talk_file, tmp_path):
    shot = tmp_path / "scene.png"
    window = make_window()
    code = run_talk(None, window, load_talk(talk_file),
                    _args(screenshot=str(shot), scene=3, size="1700x950"))
    assert code == 0
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1700, 950)
    assert _tab(window) == "banks" and window.ladder.selected_level() == "smem_tiled"
    assert window.views["banks"].canvas.step == 1
    caption = window.findChild(CaptionBar, "talk_caption")
    assert caption.text.text() == "third" and caption.number.text() == "3 / 3"


def test_the_talk_command_writes_a_scene_png(talk_file, tmp_path):
    shot = tmp_path / "two.png"
    # (wider than the tiling view's minimum at any font size the other tests leave)
    code = gui_main.main(["talk", str(talk_file), "--screenshot", str(shot), "--scene", "2",
                          "--size", "1700x900", "--settings", str(tmp_path / "p.ini")])
    assert code == 0
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1700, 900)


@pytest.mark.parametrize(("text", "args", "says"), [
    ('[[scene]]\nview = "tilling"\n', [], "bad.toml: scene 1: view: 'tilling' is not a view"),
    ('[[scene]]\nview = "charts"\n', ["--scene", "2"], "--scene 2: the talk has scenes 1 to 1"),
    ('recording = "nope.jsonl"\n[[scene]]\nview = "charts"\n', [],
     "bad.toml: recording: "),
])
def test_a_bad_talk_is_said_and_opens_no_window(tmp_path, capsys, text, args, says):
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    code = gui_main.main(["talk", str(bad), "--screenshot", str(tmp_path / "x.png"), *args])
    assert code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_the_bundled_ladder_talk_opens_by_name(tmp_path):
    shot = tmp_path / "ladder.png"
    code = gui_main.main(["talk", "ladder", "--screenshot", str(shot), "--scene", "4",
                          "--size", "1700x900", "--settings", str(tmp_path / "p.ini")])
    assert code == 0
    assert QImage(str(shot)).size().toTuple() == (1700, 900)


@pytest.mark.parametrize("width", [640, 900, 1280])
def test_the_scene_number_is_never_squeezed_by_a_long_caption(qtbot, width):
    """A long caption takes the band's width; the scene's number keeps the width of its
    text, in the stage's type too ("11 / 20" was shown as "1 / 20")."""
    from gemmscope.app.theme import NORMAL, PRESENTATION
    from gemmscope.app.widgets.caption_bar import CaptionBar

    bar = CaptionBar()
    qtbot.addWidget(bar)
    bar.resize(width, 200)
    bar.show()
    qtbot.waitExposed(bar)
    words = " ".join(["guard-free interior blocks compiled twice"] * 12)
    for theme in (NORMAL, PRESENTATION):
        bar.apply_theme(theme)
        bar.show_scene(words, 10, 20)
        qtbot.waitUntil(lambda: bar.number.width() > 0)
        need = bar.number.fontMetrics().horizontalAdvance(bar.number.text())
        assert bar.number.contentsRect().width() >= need, theme.name


def test_a_code_scene_opens_its_source_at_the_line_its_at_names(qtbot, make_window,
                                                               tmp_path):
    from importlib import resources

    from gemmscope.app.core.talk import source_line

    bundled = resources.files("gemmscope.resources") / "sessions" / "h200-ladder.jsonl.gz"
    talk_path = tmp_path / "code.toml"
    talk_path.write_text(f'recording = "{bundled}"\n'
                         '[[scene]]\nview = "charts"\n'
                         '[[scene]]\nview = "code"\nlevel = "mma_tma"\n'
                         'at = "gs_ws_produce<"\n', encoding="utf-8")
    talk = load_talk(talk_path)
    window = make_window()
    assert window.open_recording(talk.recording)
    window.play_instant()
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    controller = open_talk(window, talk, window.replay.recording.events)
    try:
        controller.go(1)
        window.flush_views()
        code = window.views["code"]
        assert window.tabs.currentWidget() is code and code.level_id == "mma_tma"
        path, line = source_line(code.build.sources, "gs_ws_produce<")
        assert code.source_path == path == "kernels/cuda/mma_tma.cu"
        assert code.source.textCursor().blockNumber() + 1 == line
        # the line in view, with a few lines of what leads to it above
        first = code.source.firstVisibleBlock().blockNumber() + 1
        assert 1 <= line - first <= 5
    finally:
        controller.stop()

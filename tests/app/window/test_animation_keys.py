"""Keys for animations: the animation of the tab on screen steps, plays, restarts and
changes speed from the keyboard whichever widget has the focus, without taking the level
keys; a clicked canvas takes its own keys; the keys are listed in View ▸ Shortcuts and
the ? sheet; a presenter clicker's keys reach a talk from any widget."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLineEdit

from gemmscope.app.views.animated_canvas import SPEEDS
from gemmscope.app.window.keys import ANIMATION_KEYS, ShortcutsDialog, sheet_rows
from gemmscope.app.window.talk import load_talk, open_talk

SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def tiling(qtbot, make_window, synthetic_file):
    """A window on the synthetic recording with the tiling tab shown; its canvas."""
    window = make_window()
    assert window.open_recording(synthetic_file)
    window.play_instant()
    window.set_animated(False)
    window.show()
    qtbot.waitExposed(window)
    assert window.select_level("register_2d")
    view = window.named_widget("tiling")
    return window, view.canvas


def _focus_targets(window, view):
    """Widgets a person may have clicked last: the ladder table, the shape selector, the
    tab bar, the view's playback buttons and its speed box."""
    return [window.ladder.table, window.ladder.shape_box, window.tabs.tabBar(),
            view.bar.forward_button, view.bar.speed_box]


def test_animation_keys_step_play_restart_and_change_speed_from_any_focus(qtbot, tiling):
    window, canvas = tiling
    view = window.views["tiling"]
    assert canvas.n_steps() > 3
    for widget in _focus_targets(window, view):
        widget.setFocus()
        canvas.restart()
        level = window.ladder.selected_level()
        qtbot.keyClick(widget, Qt.Key.Key_Right, SHIFT)
        qtbot.keyClick(widget, Qt.Key.Key_Right, SHIFT)
        assert canvas.step == 2, widget
        qtbot.keyClick(widget, Qt.Key.Key_Left, SHIFT)
        assert canvas.step == 1, widget
        assert window.view_state.state.step == 1  # the state is what is on screen
        qtbot.keyClick(widget, Qt.Key.Key_Home, SHIFT)
        assert canvas.step == 0, widget
        qtbot.keyClick(widget, Qt.Key.Key_Space, SHIFT)
        assert canvas.is_playing(), widget
        qtbot.keyClick(widget, Qt.Key.Key_Space, SHIFT)
        assert not canvas.is_playing(), widget
        speed = canvas.speed
        qtbot.keyClick(widget, Qt.Key.Key_Plus)
        assert canvas.speed == SPEEDS[SPEEDS.index(speed) + 1], widget
        assert view.bar.speed_box.currentData() == canvas.speed  # the bar follows
        qtbot.keyClick(widget, Qt.Key.Key_Minus)
        assert canvas.speed == speed, widget
        assert window.ladder.selected_level() == level  # the level keys were not taken


def test_the_level_keys_stay_the_level_keys(qtbot, tiling):
    window, canvas = tiling
    window.ladder.table.setFocus()
    step = canvas.step
    qtbot.keyClick(window.ladder.table, Qt.Key.Key_Right)
    assert window.ladder.selected_level() == "vectorized"
    assert window.view_state.state.level == "vectorized"
    qtbot.keyClick(window.ladder.table, Qt.Key.Key_Left)
    assert window.ladder.selected_level() == "register_2d" and canvas.step == step


def test_a_clicked_canvas_takes_its_own_keys(qtbot, tiling):
    window, canvas = tiling
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton)
    assert canvas.hasFocus()
    canvas.restart()
    qtbot.keyClick(canvas, Qt.Key.Key_Right)
    assert canvas.step == 1 and window.ladder.selected_level() == "register_2d"
    qtbot.keyClick(canvas, Qt.Key.Key_Space)
    assert canvas.is_playing()
    qtbot.keyClick(canvas, Qt.Key.Key_Space)
    assert not canvas.is_playing()
    qtbot.keyClick(canvas, Qt.Key.Key_Home)
    assert canvas.step == 0


def test_a_text_field_keeps_its_keys(qtbot, tiling):
    window, canvas = tiling
    field = window.controls.fields["M"]
    window.run_dock.show()
    field.setFocus()
    field.setText("4096")
    field.setCursorPosition(4)
    canvas.restart()
    qtbot.keyClick(field, Qt.Key.Key_Left, SHIFT)  # selects a character, steps nothing
    assert field.selectedText() == "6" and canvas.step == 0
    qtbot.keyClick(field, Qt.Key.Key_Minus)
    assert canvas.speed == 1.0


def test_a_tab_without_animation_says_so(qtbot, tiling):
    window, _canvas = tiling
    window.named_widget("charts")
    qtbot.keyClick(window.ladder.table, Qt.Key.Key_Right, SHIFT)
    assert "no animation" in window.statusBar().currentMessage()
    assert window.view_state.state.step is None


def test_the_keys_are_listed_in_the_menu_and_the_sheet(qtbot, tiling):
    window, _canvas = tiling
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    keys = next(a.menu() for a in menu.actions() if a.text() == "&Shortcuts")
    listed = [a.text().split("\t")[0] for a in keys.actions()]
    sheet = ShortcutsDialog(window)
    qtbot.addWidget(sheet)
    for spec in ANIMATION_KEYS:
        assert spec.shown in listed
        assert (spec.shown, spec.what) in sheet.texts()
    assert sheet.texts() == sheet_rows()
    assert any(k.startswith("PageDown") for k, _ in sheet.texts())


TALK = """
recording = "synthetic.jsonl"
[[scene]]
view = "charts"
level = "naive"
caption = "one"
[[scene]]
view = "banks"
level = "smem_tiled"
step = [1, 2]
caption = "two"
[[scene]]
view = "swizzle"
level = "smem_tiled"
caption = "three"
"""


def test_clicker_keys_reach_the_talk_from_any_widget(qtbot, make_window, synthetic_file: Path):
    path = synthetic_file.parent / "clicker.toml"
    path.write_text(TALK, encoding="utf-8")
    window = make_window()
    talk = load_talk(path)
    assert window.open_recording(talk.recording)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    controller = open_talk(window, talk, window.replay.recording.events)
    try:
        controller.go(1)  # the banks view: a spin box (warp), a combo (instruction)
        banks = window.views["banks"]
        spin = banks.warp_box
        combo = banks.instruction_box
        widgets = [window.ladder.table, spin, combo, window.tabs.tabBar(),
                   banks.canvas, window.ladder.shape_box]
        assert isinstance(spin, QAbstractSpinBox) and isinstance(combo, QComboBox)
        for widget in widgets:
            controller.go(1)
            widget.setFocus()
            qtbot.keyClick(widget, Qt.Key.Key_PageDown)
            assert (controller.index, controller.step_index) == (1, 1), widget
            qtbot.keyClick(widget, Qt.Key.Key_PageDown)
            assert controller.index == 2, widget
            qtbot.keyClick(widget, Qt.Key.Key_PageUp)
            assert (controller.index, controller.step_index) == (1, 1), widget
            for key in (Qt.Key.Key_B, Qt.Key.Key_Period):
                qtbot.keyClick(widget, key)
                assert controller.blank.isVisible(), (widget, key)
                qtbot.keyClick(widget, key)
                assert not controller.blank.isVisible(), (widget, key)
        assert spin.value() == 0  # the spin box got none of them
        # a text field (the swizzle's own expression) keeps the letters it is typed
        controller.go(2)
        field = window.views["swizzle"].expr_edit
        assert isinstance(field, QLineEdit)
        field.setFocus()
        qtbot.keyClick(field, Qt.Key.Key_B)
        assert field.text() == "b" and not controller.blank.isVisible()
        qtbot.keyClick(field, Qt.Key.Key_PageUp)  # a clicker's page key still pages
        assert controller.index == 1
    finally:
        controller.stop()

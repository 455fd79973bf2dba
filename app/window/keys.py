"""Every key of the app, in one table: what it does, how View ▸ Shortcuts and the ``?``
sheet name it, and the window command it calls.

The scheme keeps one meaning per key wherever the focus is:

- the level keys stay where they were: ← / → previous / next level, Space runs it;
- the animation of the tab on screen has keys of its own, the same keys with Shift:
  Shift+← / Shift+→ step back / forward, Shift+Space play / pause, Shift+Home restart,
  + / − faster / slower. They act on the animation whichever widget has the focus (the
  ladder table, a chart, a box of the view's options), except a text field, where they
  edit the text (as the arrows do in M, N, K);
- a canvas that has the focus (clicked) also takes its own keys unshifted (Space, ← / →,
  Home, + / −), as a media player does; a click elsewhere gives the level keys back;
- the view state: [ / ] smaller / larger shape, M burst or sustained, C the bars per GHz
  of SM clock;
- in a talk the clicker's keys (:data:`TALK_KEYS`) step the scenes and their steps
  whatever has the focus (app/window/talk.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QGridLayout, QLabel, QTabWidget, QVBoxLayout, QWidget

from ..views.animated_canvas import AnimatedCanvas
from ..widgets.plain import plain_label


class KeyCommands(Protocol):
    """The window's commands the keys call (the main window is one)."""

    def toggle_presentation(self) -> None: ...
    def step_level(self, offset: int) -> None: ...
    def run_selected(self) -> None: ...
    def run_ladder(self) -> None: ...
    def step_shape(self, offset: int) -> None: ...
    def toggle_mode(self) -> None: ...
    def toggle_per_clock(self) -> None: ...
    def toggle_replay(self) -> None: ...
    def show_shortcuts(self) -> None: ...
    def escape(self) -> None: ...
    def animation_command(self, what: str) -> None: ...
    @property
    def tabs(self) -> QTabWidget: ...


@dataclass(frozen=True, slots=True)
class KeySpec:
    keys: tuple[str, ...]  # QKeySequence texts
    shown: str  # as the sheet writes it
    what: str
    command: Callable[[KeyCommands], Callable[[], object]] | None = None  # window -> slot


ANIMATION = "animation"  # the section the animation keys are listed under

WINDOW_KEYS: tuple[KeySpec, ...] = (
    KeySpec(("F11",), "F11", "presentation mode: full screen, large fonts, high contrast",
            lambda w: w.toggle_presentation),
    KeySpec(("Left",), "←", "previous level", lambda w: lambda: w.step_level(-1)),
    KeySpec(("Right",), "→", "next level", lambda w: lambda: w.step_level(1)),
    KeySpec(("Space",), "Space", "run the selected level", lambda w: w.run_selected),
    KeySpec(("L",), "L", "run the ladder", lambda w: w.run_ladder),
    KeySpec(("[",), "[", "smaller shape (the shape every table and chart shows)",
            lambda w: lambda: w.step_shape(-1)),
    KeySpec(("]",), "]", "larger shape", lambda w: lambda: w.step_shape(1)),
    KeySpec(("M",), "M", "burst or sustained results", lambda w: w.toggle_mode),
    KeySpec(("C",), "C", "bars per GHz of SM clock: TFLOPS/GHz, % of cuBLAS at equal clocks",
            lambda w: w.toggle_per_clock),
    KeySpec(("Esc",), "Esc", "stop the runs (in full screen: leave it)", lambda w: w.escape),
    KeySpec(("P",), "P", "play / pause the replay", lambda w: w.toggle_replay),
    KeySpec(("?", "Shift+/"), "?", "this list of shortcuts", lambda w: w.show_shortcuts),
    # (the window's, not the tab bar's: Qt's own Ctrl+Tab works only with the focus in it)
    KeySpec(("Ctrl+Tab", "Ctrl+PgDown"), "Ctrl+Tab, Ctrl+PageDown", "next view tab",
            lambda w: lambda: _step_tab(w.tabs, 1)),
    KeySpec(("Ctrl+Shift+Tab", "Ctrl+Backtab", "Ctrl+PgUp"), "Ctrl+Shift+Tab, Ctrl+PageUp",
            "previous view tab", lambda w: lambda: _step_tab(w.tabs, -1)),
)

# the animation of the tab on screen (Tiling, Banks, Swizzle, Coalescing)
ANIMATION_KEYS: tuple[KeySpec, ...] = (
    KeySpec(("Shift+Right",), "Shift+→", "animation: step forward",
            lambda w: lambda: w.animation_command("forward")),
    KeySpec(("Shift+Left",), "Shift+←", "animation: step back",
            lambda w: lambda: w.animation_command("back")),
    KeySpec(("Shift+Space",), "Shift+Space", "animation: play / pause",
            lambda w: lambda: w.animation_command("play")),
    KeySpec(("Shift+Home",), "Shift+Home", "animation: restart from the first step",
            lambda w: lambda: w.animation_command("restart")),
    KeySpec(("+", "=", "Shift++"), "+", "animation: faster",
            lambda w: lambda: w.animation_command("faster")),
    KeySpec(("-",), "−", "animation: slower", lambda w: lambda: w.animation_command("slower")),
)
# a clicked canvas's own keys (app/views/animated_canvas.py takes them while it has focus)
CANVAS_KEYS: tuple[KeySpec, ...] = (
    KeySpec((), "Space, ← / →, Home, + / −", "the same on a clicked animation (its own "
            "keys while it has the focus)"),
)
# a talk (app/window/talk.py); a presenter clicker sends these
TALK_KEYS: tuple[KeySpec, ...] = (
    KeySpec(("PgDown", "Right", "Space"), "PageDown, →, Space",
            "talk: the scene's next animation step, else the next scene"),
    KeySpec(("PgUp", "Left", "Backspace"), "PageUp, ←, Backspace",
            "talk: the previous step, else the previous scene"),
    KeySpec(("Home",), "Home", "talk: the first scene"),
    KeySpec(("End",), "End", "talk: the last scene"),
    KeySpec(("B", "."), "B, .", "talk: black screen (again, or a scene key: back)"),
    KeySpec(("F5", "Shift+F5"), "F5", "talk: presentation mode, full screen"),
    KeySpec(("Esc",), "Esc", "talk: leave full screen"),
)


def _step_tab(tabs: QTabWidget, delta: int) -> None:
    """The next (or previous) tab of a QTabWidget, round from the last to the first."""
    if tabs.count():
        tabs.setCurrentIndex((tabs.currentIndex() + delta) % tabs.count())


def sheet_rows() -> list[tuple[str, str]]:
    """(key, what) of every key, as View ▸ Shortcuts and the ``?`` sheet list them."""
    return [(k.shown, k.what) for k in (*WINDOW_KEYS, *ANIMATION_KEYS, *CANVAS_KEYS,
                                        *TALK_KEYS)]


def install_shortcuts(window: KeyCommands, parent: QWidget) -> dict[str, QShortcut]:
    """The window's keys and the animation keys, active anywhere in ``parent`` (the
    window) except where a text field wants the key (arrows in M, N, K); by key text."""
    shortcuts: dict[str, QShortcut] = {}
    for spec in (*WINDOW_KEYS, *ANIMATION_KEYS):
        assert spec.command is not None
        slot = spec.command(window)
        for key in spec.keys:
            sc = QShortcut(QKeySequence(key), parent)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(slot)
            shortcuts[key] = sc
    return shortcuts


def run_animation_command(canvas: AnimatedCanvas, what: str) -> None:
    """One animation command on ``canvas`` (an AnimatedCanvas), by the table's name."""
    commands: dict[str, Callable[[], object]] = {
        "forward": canvas.step_forward, "back": canvas.step_back,
        "play": canvas.toggle_play, "restart": canvas.restart,
        "faster": lambda: canvas.change_speed(+1), "slower": lambda: canvas.change_speed(-1)}
    commands[what]()


class ShortcutsDialog(QDialog):
    """The ``?`` sheet: every key (sheet_rows), in plain text."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        layout = QVBoxLayout(self)
        self.rows: list[tuple[QLabel, QLabel]] = []
        grid = QGridLayout()
        for i, (key, what) in enumerate(sheet_rows()):
            k, w = plain_label(key), plain_label(what)
            font = k.font()
            font.setBold(True)
            k.setFont(font)
            grid.addWidget(k, i, 0)
            grid.addWidget(w, i, 1)
            self.rows.append((k, w))
        layout.addLayout(grid)

    def texts(self) -> list[tuple[str, str]]:
        return [(k.text(), w.text()) for k, w in self.rows]

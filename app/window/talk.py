"""`gemmscope talk FILE`: the main window stepping through a talk's scenes.

Keys (a presenter clicker sends the same): PageDown, Right, Space: next scene; PageUp,
Left, Backspace: previous; Home / End: first / last; B or period:
blank the screen (again, or any scene key: back); F5: presentation mode (full screen,
large type); Esc: leave it (the window's own key). While a talk is open the window's
Left/Right (level) and Space (run) keys step the scenes instead.

The scenes come from :mod:`gemmscope.app.core.talk`; a scene only drives the window
through its public methods (the tab, the level, the run form's shape, the replay speed,
an animated view's step), and the caption bar below the views says the scene's text,
filled from the session as results arrive.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QWidget

from ...kernels import registry
from ...kernels.plan import DEFAULT_REPEATS
from ...kernels.text_safety import terminal_text
from ..core.replay import Speed
from ..core.talk import Scene, Talk, TalkError, caption_text, read_talk
from ..views.playback import ViewPanel
from ..views.registry import VIEWS
from ..widgets.caption_bar import CaptionBar

NEXT_KEYS = ("PgDown", "Right", "Space")
PREVIOUS_KEYS = ("PgUp", "Left", "Backspace")
BLANK_KEYS = ("B", ".")
WINDOW_KEYS_TAKEN = ("Left", "Right", "Space")  # the window's own, while a talk is open
CAPTION_POLL_MS = 250  # the caption follows the session's results (a replay fills them)


def view_names() -> tuple[list[str], list[str]]:
    """(every view's name, the names of those with animation steps)."""
    animated = [s.name for s in VIEWS
                if isinstance(s.factory, type) and issubclass(s.factory, ViewPanel)]
    return [s.name for s in VIEWS], animated


def load_talk(path: str | Path) -> Talk:
    """Read a talk file against this gemmscope's views and levels (TalkError if not)."""
    names, animated = view_names()
    return read_talk(path, names, animated, [e["id"] for e in registry.catalog()])


class BlankCover(QWidget):
    """Black over the whole window (a clicker's "blank screen")."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("talk_blank")
        self.setStyleSheet("QWidget#talk_blank { background: #000000; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:  # shown or not: it is ready when asked
            self.setGeometry(self.parentWidget().rect())
        return False

    def set_blank(self, on: bool) -> None:
        if on:
            self.setGeometry(self.parentWidget().rect())
            self.raise_()
        self.setVisible(on)


class TalkController(QObject):
    """Scenes on a main window (``window``: gemmscope.app.window.main_window.MainWindow)."""

    scene_changed = Signal(int)

    def __init__(self, window: Any, talk: Talk) -> None:
        super().__init__(window)
        self.window = window
        self.talk = talk
        self.index = -1
        self.caption = CaptionBar()
        dock = self.dock = QDockWidget("Talk", window)
        dock.setObjectName("dock_talk")
        dock.setTitleBarWidget(QWidget())  # no title bar: the caption is the panel
        dock.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
        dock.setWidget(self.caption)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        self.blank = BlankCover(window)
        for key in WINDOW_KEYS_TAKEN:
            taken = window.shortcut_objects.get(key)
            if taken is not None:
                taken.setEnabled(False)
        self.shortcuts: dict[str, QShortcut] = {}
        keys: dict[tuple[str, ...], Callable[[], None]] = {
            NEXT_KEYS: self.next, PREVIOUS_KEYS: self.previous, ("Home",): self.first,
            ("End",): self.last, BLANK_KEYS: self.toggle_blank, ("F5",): self.present}
        for names, slot in keys.items():
            for name in names:
                sc = QShortcut(QKeySequence(name), window)
                sc.setContext(Qt.ShortcutContext.WindowShortcut)
                sc.activated.connect(slot)
                self.shortcuts[name] = sc
        self._pending_level: str | None = None  # named before the recording's header came
        self._shown: tuple[Any, ...] = ()
        self._poll = QTimer(self)
        self._poll.setInterval(CAPTION_POLL_MS)
        self._poll.timeout.connect(self.update_caption)
        self._poll.start()

    @property
    def scene(self) -> Scene | None:
        return self.talk.scenes[self.index] if 0 <= self.index < len(self.talk.scenes) \
            else None

    # ------------------------------------------------------------- stepping
    def go(self, index: int) -> None:
        """Show scene ``index`` (0-based, clamped to the talk)."""
        self.blank.set_blank(False)
        self.index = max(0, min(int(index), len(self.talk.scenes) - 1))
        self.apply(self.talk.scenes[self.index])
        self.scene_changed.emit(self.index)

    def next(self) -> None:
        self.go(self.index + 1)

    def previous(self) -> None:
        self.go(self.index - 1)

    def first(self) -> None:
        self.go(0)

    def last(self) -> None:
        self.go(len(self.talk.scenes) - 1)

    def toggle_blank(self) -> None:
        self.blank.set_blank(not self.blank.isVisible())

    def present(self) -> None:
        """F5: presentation mode, full screen, at the current scene."""
        if not self.window.isFullScreen():
            self.window.set_presentation(True)
        self.caption.apply_theme(self.window.theme)

    # ------------------------------------------------------------- one scene
    def apply(self, scene: Scene) -> None:
        window = self.window
        view = window.views.get(scene.view)
        window.named_widget(scene.view)  # its tab
        self._pending_level = None
        if scene.level is not None and not window.select_level(scene.level):
            self._pending_level = scene.level  # the header has not come yet
        if scene.shape is not None:
            values = window.controls.values()
            repeats = values[3] if values is not None else DEFAULT_REPEATS
            window.controls.set_values(scene.shape.M, scene.shape.N, scene.shape.K, repeats)
        if scene.speed is not None and window.replay is not None:
            window.set_replay_speed(scene.speed, remember=False)
            if scene.speed is Speed.INSTANT:
                window.play_instant()
        if scene.step is not None and isinstance(view, ViewPanel):
            canvas = view.canvas
            canvas.pause()
            canvas.set_step(min(scene.step, canvas.n_steps()) - 1)
        self.caption.apply_theme(window.theme)
        self._shown = ()
        self.update_caption()

    def update_caption(self) -> None:
        """Fill the caption again when the session changed (results arrive in a replay)."""
        scene = self.scene
        if scene is None:
            return
        store = self.window.store
        if self._pending_level is not None and self.window.select_level(self._pending_level):
            self._pending_level = None
            if scene.step is not None:  # the level's steps are known now
                self.apply(scene)
                return
        key = (self.index, store.generation, len(store.results), store.header is None)
        if key == self._shown:
            return
        self._shown = key
        self.caption.show_scene(caption_text(scene, store), self.index, len(self.talk.scenes))

    def stop(self) -> None:
        self._poll.stop()


def open_talk(window: QMainWindow, talk: Talk) -> TalkController:
    """Put ``talk`` on ``window``, showing its first scene."""
    controller = TalkController(window, talk)
    controller.go(0)
    return controller


def talk_path(name: str) -> Path:
    """A talk file; a name that is no file but a bundled talk's (``ladder``) is that
    talk, in gemmscope.resources/talks (the desktop bundle's users have no checkout)."""
    path = Path(name)
    if path.exists() or path.suffix or len(path.parts) != 1:
        return path
    bundled = resources.files("gemmscope.resources") / "talks" / f"{name}.toml"
    return Path(str(bundled)) if bundled.is_file() else path


def recording_of(talk: Talk) -> Path | None:
    """The recording the talk plays: its own, else the bundled H200 one."""
    from .main_window import bundled_session

    return talk.recording if talk.recording is not None else bundled_session()


def check_talk_args(args: argparse.Namespace) -> Talk | None:
    """`gemmscope talk FILE [--scene N]`: the talk, or None after saying why not."""
    if not args.file:
        print("gemmscope talk: give the talk to open (a .toml file, e.g. "
              "resources/talks/ladder.toml)", file=sys.stderr)
        return None
    try:
        talk = load_talk(talk_path(args.file))
    except TalkError as exc:
        print(f"gemmscope talk: {terminal_text(str(exc))}", file=sys.stderr)
        return None
    if not 1 <= args.scene <= len(talk.scenes):
        print(f"gemmscope talk: --scene {args.scene}: the talk has scenes 1 to "
              f"{len(talk.scenes)}", file=sys.stderr)
        return None
    recording = recording_of(talk)
    if recording is None or not recording.is_file():
        print(terminal_text(f"gemmscope talk: {talk.path.name}: recording: "
                            f"{recording or 'none given and none bundled'} is not a file"),
              file=sys.stderr)
        return None
    return talk


def run_talk(app: Any, window: Any, talk: Talk, args: argparse.Namespace) -> int:
    """Open the talk's recording and scenes on ``window``; a screenshot of scene
    ``args.scene``, or the event loop."""
    app = app or QApplication.instance()
    recording = recording_of(talk)
    assert recording is not None  # check_talk_args
    if not window.open_recording(recording, background=not args.screenshot):
        print(terminal_text(window.statusBar().currentMessage()), file=sys.stderr)
        window.close()
        return 2
    controller = open_talk(window, talk)
    if not args.screenshot:
        controller.go(args.scene - 1)
        window.resize(1400, 900)
        window.show()
        code = app.exec()
        controller.stop()
        return int(code)
    w, _, h = args.size.partition("x")
    window.resize(int(w), int(h))
    window.set_animated(False)  # whole steps, not mid-animation
    window.play_instant()
    window.show()
    controller.go(args.scene - 1)
    for _ in range(5):
        app.processEvents()
    window.flush_views()
    app.processEvents()
    from .exports import ExportError, save_png

    try:  # whole or not at all: an old picture is never left cut
        save_png(window.grab(), args.screenshot)
        failure = None
    except (OSError, ExportError) as exc:
        failure = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    controller.stop()
    window.close()
    if failure is not None:
        print(terminal_text(f"could not write {args.screenshot}: {failure}"), file=sys.stderr)
        return 1
    print(args.screenshot)
    return 0

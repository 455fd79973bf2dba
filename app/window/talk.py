"""`gemmscope talk FILE`: the main window stepping through a talk's scenes.

Keys (a presenter clicker sends the same; keys.TALK_KEYS): PageDown, Right, Space: the
scene's next listed animation step, else the next scene; PageUp, Left, Backspace: back;
Home / End: first / last; B or period: blank the screen (again, or any scene key: back);
F5 (or Shift+F5): presentation mode (full screen, large type); Esc: leave it. They reach
the talk whatever widget has the focus (an event filter on the application while the
talk is open; a text field keeps the letters it is typed), and while a talk is open the
window's Left/Right (level) and Space (run) keys step the scenes instead.

A talk pins what it shows: its shape (the file's ``shape``, default 4096³, or a scene's
own) is the view state's before the recording opens, so the replay never changes it; and
no scene is shown before the whole recording is read and in the store: captions are
filled from a store of the recording's results (core.talk.caption_store) and the views
draw the whole recording, so a scene is the same live, in ``--screenshot --scene N`` and
however fast the speaker pages; the replay's chrome (its bar, "running …") stays off. A
scene only drives the window through its public methods (the tab, the view state's level,
shape and step, the run form's shape, the replay speed). A talk never writes the user's
preferences: the command runs it on a scratch copy of them (gui_main).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QWidget,
)

from ...kernels import ladder as registry
from ...kernels.protocol import DEFAULT_REPEATS, terminal_text
from ..core.replay import Speed
from ..core.store import SessionStore
from ..core.talk import (
    Scene,
    Talk,
    TalkError,
    caption_store,
    caption_text,
    read_talk,
    source_line,
)
from ..views.playback import ViewPanel
from ..views.registry import VIEWS
from ..views.telemetry import TelemetryView
from ..widgets.caption_bar import CaptionBar
from .presentation import ON_STAGE
from .screens import full_screen_on_start_screen
from .talk_keys import TalkKeys
from .talk_stage import BlankCover, TalkStage

WINDOW_KEYS_TAKEN = ("Left", "Right", "Space")  # the window's own, while a talk is open
READING_WHY = "every scene shows the whole recording"
READING = f"reading the recording… ({READING_WHY})"


def view_names() -> tuple[list[str], list[str]]:
    """(every view's name, the names of those with animation steps)."""
    animated = [s.name for s in VIEWS
                if isinstance(s.factory, type) and issubclass(s.factory, ViewPanel)]
    return [s.name for s in VIEWS], animated


def load_talk(path: str | Path) -> Talk:
    """Read a talk file against this gemmscope's views and levels (TalkError if not)."""
    names, animated = view_names()
    return read_talk(path, names, animated, [e["id"] for e in registry.catalog()])


class TalkController(QObject):
    """Scenes on a main window (``window``, a :class:`TalkStage`). No scene shows before
    :meth:`load` has the whole recording."""

    scene_changed = Signal(int)

    def __init__(self, window: TalkStage, talk: Talk) -> None:
        super().__init__(window.dialog_parent())
        self.window = window
        self.talk = talk
        self.index = -1
        self.step_index = 0  # which of the scene's listed steps is shown
        self.captions: SessionStore | None = None  # the whole recording's results
        self.caption = CaptionBar()
        dock = self.dock = QDockWidget("Talk", window.dialog_parent())
        dock.setObjectName("dock_talk")
        dock.setProperty(ON_STAGE, True)  # the caption is what a talk's stage keeps
        dock.setTitleBarWidget(QWidget())  # no title bar: the caption is the panel
        dock.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
        dock.setWidget(self.caption)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        self.blank = BlankCover(window.dialog_parent())
        # the views until the first scene: before the recording is read they know nothing
        # of it ("no ladder results at 4096³"), and for a moment after it opens they show
        # a replay that has only begun
        central = window.centralWidget()
        assert central is not None  # (the window's tabs)
        self.waiting = BlankCover(central, "talk_waiting")
        self.waiting.set_blank(True)
        for key in WINDOW_KEYS_TAKEN:
            taken = window.shortcut_objects.get(key)
            if taken is not None:
                taken.setEnabled(False)
        self.keys = TalkKeys(self, self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self.keys)
        # what the talk shows, before any event: the replay never chooses for it
        window.choose(shape=talk.shape, pin=True)
        self.caption.show_note(READING)

    def stage_widget(self) -> QWidget:
        """The window the talk is shown on, as a widget."""
        return self.window.dialog_parent()

    @property
    def scene(self) -> Scene | None:
        return self.talk.scenes[self.index] if 0 <= self.index < len(self.talk.scenes) \
            else None

    @property
    def ready(self) -> bool:
        return self.captions is not None

    def load(self, events: Sequence[object]) -> None:
        """The whole recording is read: fill the captions from it."""
        self.captions = caption_store(events)

    def show_reading(self, text: str) -> None:
        """How far the reading of the recording has got, in the caption's band until
        the first scene shows."""
        if not self.ready:
            self.caption.apply_theme(self.window.theme)  # (on stage since the talk began)
            self.caption.show_note(f"{text} ({READING_WHY})")  # "reading x.jsonl.gz… 40%"

    def hide_replay_chrome(self) -> None:
        """A talk shows its whole recording: the replay bar (which a replay opened after
        the stage was set shows again) and the status bar's "running …" have nothing to
        say on stage."""
        self.window.replay_toolbar.hide()
        self.window.run_label.hide()

    # ------------------------------------------------------------- stepping
    def command(self, what: str) -> None:
        """A talk key's command (TALK_COMMANDS)."""
        {"next": self.next, "previous": self.previous, "first": self.first,
         "last": self.last, "blank": self.toggle_blank, "present": self.present,
         "escape": self.window.escape}[what]()

    def go(self, index: int, step_index: int = 0) -> None:
        """Show scene ``index`` (0-based, clamped to the talk) at its listed step
        ``step_index`` (-1: its last); nothing before the recording is read."""
        if not self.ready:
            return
        self.blank.set_blank(False)
        self.waiting.set_blank(False)
        self.index = max(0, min(int(index), len(self.talk.scenes) - 1))
        scene = self.talk.scenes[self.index]
        self.step_index = len(scene.steps) - 1 if step_index < 0 else \
            max(0, min(step_index, max(len(scene.steps) - 1, 0)))
        self.apply(scene)
        self.scene_changed.emit(self.index)

    def next(self) -> None:
        scene = self.scene
        if self.blank.isVisible():
            self.blank.set_blank(False)
        if scene is not None and self.step_index + 1 < len(scene.steps):
            self.step_index += 1
            self._show_step(scene)
            return
        self.go(self.index + 1)

    def previous(self) -> None:
        scene = self.scene
        if self.blank.isVisible():
            self.blank.set_blank(False)
        if scene is not None and self.step_index > 0:
            self.step_index -= 1
            self._show_step(scene)
            return
        if self.index > 0:
            self.go(self.index - 1, -1)  # the previous scene as it was left: its last step
        else:
            self.go(0)

    def first(self) -> None:
        self.go(0)

    def last(self) -> None:
        self.go(len(self.talk.scenes) - 1)

    def toggle_blank(self) -> None:
        self.blank.set_blank(not self.blank.isVisible())

    def present(self) -> None:
        """F5: presentation mode, full screen, at the current scene (a talk opens full
        screen in the normal theme: F5 put nothing on stage there)."""
        window = self.window
        if not window.presentation.on:
            window.set_presentation(True)
        elif not window.isFullScreen():
            window.showFullScreen()
        self.caption.apply_theme(window.theme)

    # ------------------------------------------------------------- one scene
    def apply(self, scene: Scene) -> None:
        window = self.window
        window.named_widget(scene.view)  # its tab
        shape = self.talk.shape_of(scene)
        window.choose(shape=shape, level=scene.level, pin=True)
        form = window.run_form()  # the repeats as the form has them (refused: the default)
        window.controls.set_values(shape, form.repeats if form is not None else DEFAULT_REPEATS)
        if scene.speed is not None:  # the replay's, and one opened later: never remembered
            window.set_replay_speed(scene.speed, remember=False)
            if scene.speed is Speed.INSTANT:
                window.play_instant()
        self._show_step(scene)
        self._show_line(scene)
        if isinstance(view := window.views.get(scene.view), TelemetryView) and scene.level:
            view.show_runs(scene.level, shape, window.view_state.state.mode)
        self.hide_replay_chrome()
        self.caption.apply_theme(window.theme)
        self.update_caption()

    def _show_line(self, scene: Scene) -> None:
        """A code scene's ``at``: its source at the line the caption speaks of (the talk's
        --check says where a text is on no line; the scene then opens at the top)."""
        if scene.at is None:
            return
        from ..views.code import CodeView

        code = self.window.views.get("code")
        if isinstance(code, CodeView) and code.build is not None:
            found = source_line(code.build.sources, scene.at)
            if found is not None:
                code.show_source_line(*found)

    def _show_step(self, scene: Scene) -> None:
        view = self.window.views.get(scene.view)
        if scene.steps and isinstance(view, ViewPanel):
            canvas = view.canvas
            canvas.pause()
            step = min(scene.steps[self.step_index], canvas.n_steps()) - 1
            self.window.set_step(step)
            canvas.set_step(step)  # (the state may hold it already: the canvas follows)

    def caption_of(self, index: int) -> str:
        """Scene ``index``'s caption, from the whole recording."""
        assert self.captions is not None
        scene = self.talk.scenes[index]
        return caption_text(scene, self.captions, self.talk.shape_of(scene))

    def update_caption(self) -> None:
        if self.scene is None or self.captions is None:
            return
        self.caption.show_scene(self.caption_of(self.index), self.index,
                                len(self.talk.scenes))

    def stop(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self.keys)


def open_talk(window: TalkStage, talk: Talk, events: Sequence[object] | None = None
              ) -> TalkController:
    """Put ``talk`` on ``window``; with the recording's ``events`` (the whole of it),
    showing its first scene (else after :meth:`TalkController.load`)."""
    controller = TalkController(window, talk)
    if events is not None:
        controller.load(events)
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


@dataclass(frozen=True, slots=True)
class TalkOptions:
    """What ``gemmscope talk`` is asked (its command line is app/gui_args.py's)."""

    file: str | None = None  # the talk (.toml)
    scene: int = 1  # the scene to start at, or to take a screenshot of
    speed: str | None = None  # "4x"...: the replay speed until a scene sets its own
    check: bool = False  # the fit check of every caption, no window shown
    screenshot: str | None = None  # a PNG of scene ``scene``, then exit
    presentation: bool = False
    size: str | None = None  # WxH of the screenshot (default 1400x900)


def check_talk_args(args: TalkOptions) -> Talk | None:
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


def run_talk(app: QApplication | None, window: TalkStage, talk: Talk,
             args: TalkOptions) -> int:
    """Open the talk's recording and scenes on ``window``: a screenshot of scene
    ``args.scene``, the fit check of every caption (``args.check``), or the event loop.
    The first scene shows once the whole recording is read."""
    if app is None:  # (the running one)
        found = QApplication.instance()
        assert isinstance(found, QApplication)
        app = found
    recording = recording_of(talk)
    assert recording is not None  # check_talk_args
    controller = TalkController(window, talk)
    if args.speed:  # until a scene sets its own; never remembered
        window.set_replay_speed(args.speed, remember=False)
    if args.check:
        from .talk_check import check_talk

        return check_talk(app, window, controller, recording)
    if not args.screenshot:
        full_screen_on_start_screen(window.dialog_parent())  # the whole screen it starts on
        if args.presentation:
            window.set_presentation(True)
        start_talk(window, controller, recording, args.scene - 1)
        code = app.exec()
        controller.stop()
        return int(code)
    if args.presentation:  # at the asked size, not full screen
        window.set_presentation(True, full_screen=False)
    if not window.open_recording(recording, background=False):
        print(terminal_text(window.statusBar().currentMessage()), file=sys.stderr)
        controller.stop()
        window.close()
        return 2
    assert window.replay is not None  # (just opened)
    controller.load(window.replay.recording.events)
    w, _, h = (args.size or "1400x900").partition("x")
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


def start_talk(window: TalkStage, controller: TalkController, recording: Path,
               first: int = 0) -> None:
    """Read the recording in the background (the caption says how far the reading has
    got); once it is read, the whole of it goes into the store and the talk shows scene
    ``first`` (0-based): every view shows what its caption describes from the first
    key, however far a replay would have played by then."""
    def show_first() -> None:
        if window.replay is not None and not controller.ready:
            controller.load(window.replay.recording.events)
            window.play_instant()
            controller.go(first)

    def opened(ok: bool) -> None:
        if ok:  # once the replay has started (its start plays from the beginning)
            controller.hide_replay_chrome()  # (its opening showed the bar)
            QTimer.singleShot(0, show_first)

    window.sources.reading.connect(controller.show_reading)
    window.recording_opened.connect(opened)
    window.open_recording(recording, background=True)

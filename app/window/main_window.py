"""The main window: ladder panel, run controls, the views, messages, replay bar.

What is on screen is one view state (app/core/view_state.py: shape, level, mode, GPU,
animation step), ``window.view_state``; the store answers for it and the window tells
the views when it changes (``view_state_changed`` is its Qt signal). One event source at
a time (:mod:`gemmscope.app.sources`: a live runner or a recording) feeds the
:class:`SessionStore` through :meth:`MainWindow.handle`; views are refreshed from the
store by a :class:`RedrawThrottle`, so the GUI thread redraws at a bounded rate however
fast events arrive. Menus, shortcuts, the screenshot path and the benchmarks drive the
window through its public methods.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QMainWindow,
    QTabWidget,
    QWidget,
)

from ...kernels import protocol as rec
from ...kernels.drive import DeviceSpec
from ...kernels.ladder import Shape
from ...kernels.protocol import Mode, RunRequest, SessionWriter
from ..core.preferences_file import PreferencesFile
from ..core.replay import Speed
from ..core.runs import RunForm
from ..core.store import Change, Item, SessionStore
from ..core.view_state import ViewState, ViewStateModel
from ..plots.paint_ready import ready_to_paint
from ..sources.base import EventSource
from ..sources.live import LiveSource
from ..sources.replay import RecordingLoader, ReplaySource
from ..theme import NORMAL, PRESENTATION, Theme
from ..views.animated_canvas import AnimatedCanvas
from ..views.base import View
from ..views.charts import ChartsView
from ..views.registry import VIEWS
from . import navigation
from .frame_schedule import FrameSchedule
from .kernel_docks import KernelDocks
from .keys import ShortcutsDialog, install_shortcuts
from .menus import install_menus
from .ncu_report_open import Reading
from .panels import Panels
from .preferences import Preferences
from .presentation import PresentationMode, fit_side_docks
from .redraw import RedrawThrottle, ShownViews
from .replay_controls import ReplayControls
from .run_buttons import RunButtons
from .runner_confirm import keep_runner_command
from .screens import restore_layout
from .source_shown import SourceShown
from .sources import BUNDLED_SESSION, WindowSources, bundled_session
from .view_state_keeper import ViewStateKeeper
from .view_tabs import FirstPaint, ViewTabs
from .window_exports import WindowExports

__all__ = ["BUNDLED_SESSION", "MainWindow", "bundled_session"]


class MainWindow(WindowExports, QMainWindow):
    recording_opened = Signal(bool)  # a recording was read (True) or refused (False)
    view_state_changed = Signal(object, object)  # (before, after) ViewState

    def __init__(self, settings: PreferencesFile, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("gemmscope")
        self.prefs = Preferences(settings)
        self.live_refused = ""  # why the last live start made no session file
        self.view_state = ViewStateModel()
        # what the window does with its view state (view_state_keeper.py)
        self.view_keeper = ViewStateKeeper(self)
        self.store = SessionStore(self.view_state)
        self.view_state.subscribe(self.view_keeper.state_changed)
        # View ▸ Bars per clock, checked as the view state says (its key, C, is keys.py's)
        self.per_clock_action = QAction("Bars per &clock (TFLOPS/GHz)\tC", self)
        self.per_clock_action.setCheckable(True)
        self.per_clock_action.toggled.connect(self.set_per_clock)
        self.view_state.subscribe(self._show_per_clock)
        self.throttle = RedrawThrottle(self._timed_redraw, parent=self)
        # the replay bar and the one replay speed (replay_controls.py)
        self.replay_controls = ReplayControls(self, self.prefs)
        self.replay_bar = self.replay_controls.bar
        self.replay_toolbar = self.replay_controls.toolbar
        # where the events come from: a replay or a live runner (app/window/sources.py)
        self.sources = WindowSources(self.handle, self._reset_store, self.view_keeper.expect,
                                     lambda: self.replay_controls.speed, parent=self)
        self.replay_controls.sources = self.sources
        # what the window shows of its source: title, mode, notes (source_shown.py)
        self.source_shown = SourceShown(self)
        self.sources.replay_opened.connect(self.source_shown.replay_opened)
        self.sources.open_failed.connect(self.source_shown.open_failed)
        self.sources.reading.connect(lambda text: self.statusBar().showMessage(text))
        self.sources.live_started.connect(self.source_shown.live_started)
        self.theme: Theme = NORMAL
        self.shortcuts_dialog: ShortcutsDialog | None = None
        self.presentation = PresentationMode(self)

        self.tabs = QTabWidget()
        # the tab on screen gets its view now, the others once the window is painted
        self.views = ViewTabs(self.tabs, VIEWS, self._setup_view)
        self.first_paint = FirstPaint(self)
        self.first_paint.then(self.views.make_rest)
        self.setCentralWidget(self.tabs)
        self.shown_views = ShownViews(self.tabs, self.views)
        # which changes each frame draws (frame_schedule.py)
        self.frames = FrameSchedule(self.store.take_changes, self._refresh_views,
                                    self.shown_views, self.throttle)
        self.throttle.follow_frames(self)
        # a tab shown catches up at once and may leave parts of its redraw for later frames
        self.tabs.currentChanged.connect(lambda _i: self.throttle.poke(soon=True))
        self.tabs.currentChanged.connect(self.view_keeper.tab_changed)

        self.kernel_docks = KernelDocks(self)  # File ▸ Open kernel… (user kernels)
        self.baseline_loader: RecordingLoader | None = None  # File ▸ Open baseline…
        self.ncu_reading: Reading | None = None  # File ▸ Open Nsight Compute report…
        # the docked panels and the status bar's labels (panels.py)
        self.panels = Panels(self, self.store, self.prefs.shape(), self.prefs.repeats)
        self.ladder, self.controls = self.panels.ladder, self.panels.controls
        self.messages, self.messages_dock = self.panels.messages, self.panels.messages_dock
        self.ladder_dock, self.run_dock = self.panels.ladder_dock, self.panels.run_dock
        self.run_label, self.mode_label = self.panels.run_label, self.panels.mode_label
        self.controls.form_changed.connect(self.kernel_docks.follow_form)
        self.view_state_changed.connect(self._follow_gpu_shown)
        self.runs = RunButtons(self.controls, self.ladder, self.store, self.prefs,
                               lambda: self.live, self.view_keeper.ask,
                               lambda text, ms: self.statusBar().showMessage(text, ms))
        self.shortcut_objects = install_shortcuts(self, self)
        install_menus(self)
        # the saved size and panel layout (Qt's bytes; base64 in the file)
        restore_layout(self, *self.prefs.window_layout(), self.prefs.notes)
        # (a plain start is plain: the stage is asked for each time, with --presentation,
        # F11 or a talk; a talk's stage had made the next replay open on stage)
        for note in self.prefs.notes:  # a bad value was its default: said, not a crash
            self._note(note, error=False)
        self.prefs.say_notes()
        self._flush_made_views()
        self.shown_views.owed.clear()  # the views not made yet will be made from this store

    # ------------------------------------------------------------- building
    def _setup_view(self, name: str, view: View) -> None:
        """A view just made, before its tab holds it (see ViewTabs)."""
        assert isinstance(view, QWidget)
        view.setObjectName(f"view_{name}")
        view.bind(self.store)
        view.bind_navigation(functools.partial(navigation.show_code_line, self))
        if isinstance(view, ChartsView):
            view.set_log_axis(self.prefs.log_axis)
            view.log_axis_changed.connect(self._keep_log_axis)
            view.show_per_clock(self.view_state.state.per_clock)
            view.per_clock_changed.connect(self.set_per_clock)
            view.level_clicked.connect(self.select_level)
        view.bind_selection(self.select_level)
        canvas = view.animation()
        if canvas is not None:  # the step on screen is the view state's
            canvas.stepChanged.connect(
                lambda step, v=view: self.view_keeper.step_shown(v, step))

    def _note(self, text: str, error: bool) -> None:
        """A message of the window's own (not the session's)."""
        self.messages.append(text, error=error)
        self._show_messages()

    def _show_messages(self) -> None:
        """On stage and during a replay only an error opens the Messages panel."""
        self.panels.show_messages(self.theme is PRESENTATION or self.replay is not None)

    def panel_actions(self) -> list[QAction]:
        """Show/hide actions of the docked panels and the replay bar (View ▸ Panels)."""
        return self.panels.actions(self.replay_toolbar)

    # ------------------------------------------------------------- sources
    def handle(self, event: Item) -> None:
        """The one event sink: live runner and replay both deliver here."""
        self.store.handle(event)
        self.kernel_docks.feed(event)
        if isinstance(event, rec.RunStart):
            self.view_keeper.run_started(event)
        self.throttle.poke()

    def _reset_store(self) -> None:
        self.store.reset()
        self.throttle.poke()

    # the source's commands (File ▸ Open, the replay bar, tests) and what the window shows
    # of it; the source itself is ``self.sources``'s
    @property
    def source(self) -> EventSource | None:
        return self.sources.source

    @property
    def source_path(self) -> str:
        """What the store shows: a recording, or the live session's file."""
        return self.sources.path

    @property
    def writer(self) -> SessionWriter | None:
        return self.sources.writer

    @property
    def live(self) -> LiveSource | None:
        return self.sources.live

    @property
    def replay(self) -> ReplaySource | None:
        return self.sources.replay

    def open_recording(self, path: str | Path, note: str = "", background: bool = False
                       ) -> bool:
        """Replay a recording (WindowSources.open_recording); ``recording_opened`` says
        how it went."""
        return self.sources.open_recording(path, note, background)

    def open_bundled(self, reason: str, background: bool = False) -> bool:
        path = self.sources.bundled()
        if path is None:
            self.source_shown.no_bundled(reason)
            return False
        return self.open_recording(path, note=reason, background=background)

    def start_live(self, device_name: str, command: list[str] | None = None,
                   session_path: str | Path | None = None, watchdog_s: float | None = None,
                   remote: str | None = None, devices: list[DeviceSpec] | None = None,
                   split: bool = False) -> Path | None:
        """Start the runner, recording to ``session_path`` (WindowSources.start_live);
        None, and a note naming the file, where the session file cannot be made (a FIFO,
        a link planted in a shared folder, a folder that cannot be written): no runner
        starts whose lines would go nowhere."""
        try:
            return self.sources.start_live(device_name, command, session_path,
                                           watchdog_s or self.prefs.watchdog_s, remote,
                                           devices, split, self.prefs.sessions_dir)
        except OSError as exc:
            self.live_refused = self.source_shown.cannot_record(
                exc, session_path or self.prefs.sessions_dir)
            return None

    def close_source(self) -> None:
        self.sources.close()

    def mode_text(self) -> str:
        """What the status bar says feeds the window."""
        return self.mode_label.text()

    def play_instant(self) -> None:
        """Deliver the whole recording now (screenshots, tests); the replay speed stays
        what it is (the bar's)."""
        if self.replay is not None:
            self.replay.deliver_all()
        self.flush_views()

    def toggle_replay(self) -> None:
        """Play or pause the recording (P, the replay bar's button)."""
        self.replay_controls.toggle()

    @property
    def replay_speed(self) -> Speed:
        """The speed the replay plays at, the bar shows, and a replay opened next takes."""
        return self.replay_controls.speed

    def set_replay_speed(self, speed: Speed | str, remember: bool = True) -> None:
        """ReplayControls.set_speed."""
        self.replay_controls.set_speed(speed, remember)

    # ------------------------------------------------------------- runs (run_buttons.py)
    def _form(self) -> RunForm | None:
        return self.runs.form()

    def run_selected(self) -> None:
        self.runs.run_selected()

    def run_ladder(self) -> None:
        self.runs.run_ladder()

    def run_sweep(self) -> None:
        self.runs.run_sweep()

    def stop_runs(self) -> None:
        self.runs.stop()

    # ------------------------------------------------------------- user kernels
    def open_kernel(self, path: str) -> bool:
        return self.kernel_docks.open(path) is not None

    def tune_selected(self) -> None:
        """A panel editing the selected level's parameters (File ▸ Tune…)."""
        level = self.ladder.selected_level()
        if level is None:
            self.statusBar().showMessage("select a level first", 5000)
        else:
            self.kernel_docks.tune(level)

    def run_form(self) -> RunForm | None:
        """The run form as it reads now (None while a field is refused)."""
        return self.runs.form_now()

    def runs_unavailable(self) -> str:
        """Why runs cannot be sent now (a replay without the live runner), or ""."""
        return self.controls.unavailable

    def sm_count(self) -> int | None:
        """The SM count of the GPU shown (what a level's shape rule picks for)."""
        return self.store.sm_count()

    def _follow_gpu_shown(self, before: ViewState, after: ViewState) -> None:
        """Another GPU of the session shown: the Tune panels pick for its SM count."""
        if before.device != after.device:
            self.kernel_docks.follow_gpu()

    def submit_runs(self, requests: list[RunRequest]) -> None:
        self.runs.submit_runs(requests)

    def note(self, text: str, error: bool) -> None:
        self._note(text, error)

    def step_level(self, offset: int) -> None:
        """Select the level ``offset`` rows down the ladder (Left/Right keys)."""
        self.ladder.step(offset)

    def select_level(self, level_id: str) -> bool:
        """Select a level by id; False when this session has no such level."""
        if level_id not in {lv.id for lv in self.store.levels}:
            return False
        self.view_state.set(level=level_id)
        return True

    # the view state's commands (ViewStateKeeper): the keys, a talk and the command line
    def choose(self, shape: Shape | None = None, level: str | None = None,
               mode: Mode | None = None, pin: bool = True) -> None:
        self.view_keeper.choose(shape, level, mode, pin)

    def step_shape(self, offset: int) -> None:
        self.view_keeper.step_shape(offset)

    def toggle_mode(self) -> None:
        self.view_keeper.toggle_mode()

    def set_step(self, step: int) -> bool:
        return self.view_keeper.set_step(step)

    def step_once_ready(self, step: int) -> None:
        self.view_keeper.step_once_ready(step)

    def animation_command(self, what: str) -> None:
        self.view_keeper.animation_command(what)

    def current_animation(self) -> AnimatedCanvas | None:
        return self.view_keeper.current_animation()

    def set_per_clock(self, on: bool) -> None:
        """The bars per GHz of SM clock held (TFLOPS/GHz, % of cuBLAS at equal clocks), or
        not: the view state's, so the bars, their exports and a screenshot agree."""
        self.view_state.set(per_clock=bool(on))

    def toggle_per_clock(self) -> None:
        """The C key."""
        self.set_per_clock(not self.view_state.state.per_clock)

    def _show_per_clock(self, _before: ViewState, after: ViewState) -> None:
        on = after.per_clock
        self.per_clock_action.setChecked(on)
        charts = self.views.made.get("charts")
        if isinstance(charts, ChartsView):
            charts.show_per_clock(on)

    def level_ids(self) -> list[str]:
        return [lv.id for lv in self.store.levels]

    def set_animated(self, on: bool) -> None:
        """Animations on, or whole steps only (screenshots)."""
        self.views.tell("animated", lambda view: view.set_animated(on))

    def escape(self) -> None:
        """Esc: leave full screen, else stop the runs."""
        if self.isFullScreen():
            self.set_presentation(False)
        else:
            self.stop_runs()

    # ------------------------------------------------------------- drawing
    def _timed_redraw(self) -> None:
        self.frames.timed_redraw(lambda: ready_to_paint(self.tabs.currentWidget()))

    def redraw(self) -> None:
        """One coalesced frame (FrameSchedule.redraw)."""
        self.frames.redraw()

    def _parts_left(self) -> bool:
        return self.frames.parts_left()

    def set_redraw_observer(self, observer: Callable[[float], None] | None) -> None:
        """Call ``observer`` with the milliseconds each coalesced redraw took (benchmarks)."""
        self.frames.observer = observer

    def flush_views(self) -> None:
        """Bring every view up to date now (screenshots, exports, tests)."""
        while self.views.make_next():
            pass
        self.views.pay_all()
        self._flush_made_views()

    def flush_shown(self) -> None:
        """Bring the view on screen up to date now; the hidden ones catch up when shown
        (a picture of one view, a test that looks at one: not every view's redraw)."""
        shown = self.tabs.currentWidget()
        made = [(n, v) for n, v in self.views.made.items() if v is shown]
        for name, _ in made:
            self.views.pay(name)
        self.frames.flush([v for _, v in made])

    def _flush_made_views(self) -> None:
        self.frames.flush(self.views.made.values())

    def _refresh_views(self, changes: set[Change]) -> None:
        self.ladder.refresh(changes)
        self.frames.refresh_shown(changes)
        if Change.MESSAGES in changes or Change.HEADER in changes:
            self.messages.sync(self.store)
            self._show_messages()
        if Change.RUN in changes or Change.HEADER in changes:
            self.show_run_state()
        self.view_keeper.follow_session(changes)

    def show_run_state(self) -> None:
        self.run_label.setText(self.runs.state_text())

    # ------------------------------------------------------------- presentation
    def toggle_presentation(self) -> None:
        self.set_presentation(self.theme is not PRESENTATION)

    def set_presentation(self, on: bool, full_screen: bool = True) -> None:
        """Presentation mode on or off (see presentation.PresentationMode)."""
        self.presentation.set(on, full_screen)
        self.throttle.poke(soon=True)  # the views' restyled redraws may have parts left

    def remember_presentation(self, on: bool) -> None:
        """Nothing kept: the next start is plain whatever this one was (the key an older
        version wrote is set back, so a file that says "on" says it no more)."""
        if self.prefs.presentation:
            self.prefs.presentation = False

    def show_shortcuts(self) -> None:
        if self.shortcuts_dialog is None:
            self.shortcuts_dialog = ShortcutsDialog(self)
        self.shortcuts_dialog.show()
        self.shortcuts_dialog.raise_()

    # ------------------------------------------------------------- views by name
    def named_widget(self, name: str) -> QWidget | None:
        """A registered view, one of its charts, the ladder panel, or the whole window."""
        if name in ("window", "main"):
            return self
        if name == "ladder":
            return self.ladder
        return self.views.widget_named(name)

    def dialog_parent(self) -> QWidget:
        return self

    # ------------------------------------------------------------- the runner command
    def runner_command(self) -> str:
        """The live runner command kept in the preferences ("" for this installation's)."""
        return self.prefs.runner_command

    def set_runner_command(self, text: str) -> str:
        """Keep a live runner command and start it; says what happened, for the status bar."""
        return keep_runner_command(self.prefs, text, self.start_live, self._note)

    def _keep_log_axis(self, on: bool) -> None:
        self.prefs.log_axis = on

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # a small screen: the views keep the room (once the docks are laid out); a wider
        # window: the ladder's dock shows more columns
        widened = event.size().width() > event.oldSize().width()
        QTimer.singleShot(0, self, lambda: fit_side_docks(self, widened))

    def closeEvent(self, event: QCloseEvent) -> None:
        self.first_paint.stop()
        self.presentation.release()
        self.sources.wait_loaders()
        self.close_source()
        self.throttle.stop()
        layout = self.presentation.off_stage_layout() or (
            None if self.isFullScreen() else bytes(self.saveGeometry().data()),
            bytes(self.saveState().data()))
        self.prefs.set_window_layout(*layout)
        self.prefs.sync()
        super().closeEvent(event)

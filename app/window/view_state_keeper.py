"""The main window's view state (app/core/view_state.py) as the window keeps it: what the
command line and a talk choose, the shape and mode keys, the animation step on screen and
the animation keys, what a session's events may choose (the first level, a live
session's first shape, the shape of runs the person asked for), and the views told of
each change. An object the main window owns (``window.view_keeper``), given what it uses
of the window through :class:`ViewStateHost`, so that the window's file holds its layout
and its commands."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QStatusBar, QTabWidget

from ...kernels.ladder import Shape
from ...kernels.protocol import Mode, RunStart
from ..core.recording_contents import RecordingContents
from ..core.runs import RunForm
from ..core.store import Change, SessionStore
from ..core.view_state import ViewState, ViewStateModel, changed_fields, neighbour_shape
from ..sources.live import LiveSource
from ..views.animated_canvas import AnimatedCanvas
from ..views.base import View
from ..widgets.ladder_panel import LadderPanel
from .keys import run_animation_command
from .redraw import RedrawThrottle, ShownViews
from .view_tabs import ViewTabs


class ViewStateHost(Protocol):
    """What the keeper uses of the window (the main window is one): its parts, read when
    used (the window makes them after the keeper)."""

    @property
    def view_state(self) -> ViewStateModel: ...
    @property
    def store(self) -> SessionStore: ...
    @property
    def ladder(self) -> LadderPanel: ...
    @property
    def views(self) -> ViewTabs: ...
    @property
    def tabs(self) -> QTabWidget: ...
    @property
    def throttle(self) -> RedrawThrottle: ...
    @property
    def shown_views(self) -> ShownViews: ...
    @property
    def live(self) -> LiveSource | None: ...
    @property
    def view_state_changed(self) -> SignalInstance: ...
    def statusBar(self) -> QStatusBar: ...


class ViewStateKeeper:
    """What the window does with its view state."""

    def __init__(self, host: ViewStateHost) -> None:
        self.host = host
        # a shape the command line or a talk chose stays chosen when a recording opens
        # that lacks it (the views say so); one the person or a default chose gives way
        # to the new recording's default
        self.shape_pinned = False
        # the shape and mode of runs the person asked for: the first of them to start
        # selects its shape (docs/app.md, "One view state")
        self._asked: tuple[Shape, Mode] | None = None
        self._step_later: int | None = None  # --step, once the session names its levels
        # the (level, parameters) last told to the views (tell_form)
        self._form: tuple[str, dict[str, int] | None, Shape | None] | None = None

    def run_started(self, event: RunStart) -> None:
        """The first run of those the person asked for started: show its shape and mode
        (its results fill the table as they come; a run nobody asked for changes
        nothing)."""
        if self._asked is None:
            return
        shape, mode = self._asked
        if event.shape == shape:
            self._asked = None
            self.host.view_state.set(shape=shape, mode=mode)

    def ask(self, form: RunForm) -> None:
        """The person asked for runs at the form's shape and mode: the first of them to
        start selects them."""
        if self.host.live is not None:
            self._asked = (form.shape, form.mode.mode)

    def expect(self, contents: RecordingContents | None) -> None:
        """Tell the store what the source brings; a replay chooses its shape now, before
        any result arrives, so its first results never change the chosen one: the
        recording's default (4096³ where it has results there, else its most complete
        shape), unless a shape chosen on the command line or by a talk is pinned, or the
        shape already chosen is one the recording has too."""
        self.host.store.expect(contents)
        if contents is None:
            return
        state = self.host.view_state.state
        changes: dict[str, object] = {}
        if state.shape is None or (not self.shape_pinned
                                   and state.shape not in contents.levels_at):
            changes["shape"] = contents.default_shape()
        devices = {key[3] for key in contents.results} | {0}
        if state.device not in devices:
            changes["device"] = 0
        self.host.view_state.set(**changes)

    # ------------------------------------------------------------- the view state
    def choose(self, shape: Shape | None = None, level: str | None = None,
               mode: Mode | None = None, pin: bool = True) -> None:
        """Set what the command line or a talk asks for (fields left None stay); a
        shape given here stays chosen across recordings (``pin``)."""
        changes: dict[str, object] = {}
        if shape is not None:
            changes["shape"] = shape
            self.shape_pinned = self.shape_pinned or pin
        if level is not None:
            changes["level"] = level
        if mode is not None:
            changes["mode"] = mode
        self.host.view_state.set(**changes)

    def step_shape(self, offset: int) -> None:
        """The next smaller (-1) or larger (+1) shape of the session ([ and ] keys)."""
        state = self.host.view_state.state
        shape = neighbour_shape(self.host.store.shapes(), state.shape, offset)
        if shape is not None:
            self.host.view_state.set(shape=shape)

    def toggle_mode(self) -> None:
        """Burst results, or sustained ones (M)."""
        mode = self.host.view_state.state.mode
        self.host.view_state.set(mode=Mode.SUSTAINED if mode is Mode.BURST else Mode.BURST)

    def set_step(self, step: int) -> bool:
        """Show animation step ``step`` (0-based) of the view on screen; False where the
        view on screen has no animation."""
        if self.current_animation() is None:
            return False
        self.host.view_state.set(step=max(0, int(step)))
        return True

    def step_once_ready(self, step: int) -> None:
        """Show animation ``step`` once the session's header has chosen the level (a
        level chosen later would restart the animation); now where it has already."""
        if self.host.store.header is not None:
            self.set_step(step)
        else:
            self._step_later = step

    def animation_command(self, what: str) -> None:
        """An animation key (keys.ANIMATION_KEYS) on the animation of the tab on screen;
        where the tab has none, the status bar says so."""
        canvas = self.current_animation()
        if canvas is None:
            self.host.statusBar().showMessage("this tab has no animation (Tiling, Banks, Swizzle "
                                         "and Coalescing have)", 3000)
            return
        run_animation_command(canvas, what)

    def current_animation(self) -> AnimatedCanvas | None:
        """The animated canvas of the view on screen, or None."""
        view = self.host.shown_views.shown_view()
        return view.animation() if view is not None else None

    def tab_changed(self, _index: int) -> None:
        canvas = self.current_animation()
        self.host.view_state.set(step=None if canvas is None else canvas.step)

    def step_shown(self, view: View, step: int) -> None:
        if self.host.tabs.currentWidget() is view:
            self.host.view_state.set(step=step)

    def state_changed(self, before: ViewState, after: ViewState) -> None:
        changed = changed_fields(before, after)
        if changed & {"level", "shape", "device"}:
            self.tell_form()  # before the level, so a view follows it in its form at once
        if "level" in changed and after.level is not None:
            self.host.ladder.show_state()
            level = after.level
            self.host.views.tell("level", lambda view: view.set_level(level))
        if "step" in changed and after.step is not None:
            canvas = self.current_animation()
            if canvas is not None and canvas.step != after.step % max(1, canvas.n_steps()):
                canvas.pause()
                canvas.set_step(after.step)
        self.host.throttle.poke(soon=True)
        self.host.view_state_changed.emit(before, after)

    def tell_form(self) -> None:
        """Tell the views the form (template parameters) the selected level ran with at
        the shape shown, where it is not the one told last: a result that arrives may
        name other parameters than the shape rule picked before it."""
        state = self.host.view_state.state
        if state.level is None:
            return
        form = (state.level, self.host.store.run_form(state.level, state.shape, state.device),
                state.shape)
        if form == self._form:
            return
        self._form = form
        level, params, shape = form
        self.host.views.tell("form", lambda view: view.set_form(level, params, shape))

    def follow_session(self, changes: set[Change]) -> None:
        """What a session's new events choose when the person has not: the first level
        once the header names them, and the default shape once results exist (live; a
        replay chose it when it opened)."""
        if Change.HEADER in changes and self.host.view_state.state.level is None:
            levels = self.host.store.ladder_levels()
            if levels:
                self.host.view_state.set(level=levels[0].id)
        if Change.HEADER in changes and self.host.store.header is not None and \
                self._step_later is not None:
            step, self._step_later = self._step_later, None
            self.set_step(step)
        if self.host.view_state.state.shape is None and self.host.store.shapes():
            self.host.view_state.set(shape=self.host.store.ladder_shape())
        if changes & {Change.HEADER, Change.LADDER}:
            self.tell_form()  # a result at the shape shown may name its parameters

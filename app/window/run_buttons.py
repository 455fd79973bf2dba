"""What the run buttons ask of the live runner (Run level, Run ladder, Sweep, Stop, and a
kernel panel's runs): the run form read once a click, its runs submitted as the form
says, the levels this GPU cannot run skipped and said in the status bar."""

from __future__ import annotations

from collections.abc import Callable

from ...kernels.drive import SessionState
from ...kernels.protocol import RunRequest
from ..core.runs import RunForm
from ..core.store import SessionStore
from ..sources.live import LiveSource
from ..widgets.ladder_panel import LadderPanel
from ..widgets.run_controls import RunControls
from .preferences import Preferences


class RunButtons:
    """The runs of one window: ``live`` gives its runner (None: replay), ``ask`` makes
    the shape and mode of a run the person asked for the next one shown, ``say`` writes
    the status bar (text, milliseconds)."""

    def __init__(self, controls: RunControls, ladder: LadderPanel, store: SessionStore,
                 prefs: Preferences, live: Callable[[], LiveSource | None],
                 ask: Callable[[RunForm], None], say: Callable[[str, int], None]):
        self.controls = controls
        self.ladder = ladder
        self.store = store
        self.prefs = prefs
        self.live = live
        self.ask = ask
        self.say = say
        # the runs asked since the runner was last idle: "(i/n)" in the status bar
        self.asked = 0
        controls.run_level.connect(self.run_selected)
        controls.run_ladder.connect(self.run_ladder)
        controls.sweep.connect(self.run_sweep)
        controls.stop.connect(self.stop)

    def submit(self, requests: list[RunRequest], form: RunForm) -> None:
        live = self.live()
        if live is None:
            why = self.controls.unavailable or "no runner"
            self.say(f"cannot run: {why}", 8000)
            return
        runs, skipped = form.runs(requests, self.store.header)  # as the form says
        if skipped:  # levels this GPU cannot run: skipped and said, no error
            self.say(" ".join(skipped), 8000)
        if live.session.idle:  # a new batch; runs added to one in progress extend it
            self.asked = 0
        self.asked += len(runs)
        live.submit(runs)

    def form(self) -> RunForm | None:
        """The run form, read once for the click (None, said, while a field is refused)."""
        form, problems = self.controls.read()
        if form is None:
            self.say("cannot run: " + "; ".join(problems.values()), 8000)
        else:
            self.prefs.set_shape(form.shape, form.repeats)
        return form

    def form_now(self) -> RunForm | None:
        """The run form as it reads now, unsaid and unkept (None while a field is
        refused): a kernel panel checks its variant at the form's shape."""
        form, _problems = self.controls.read()
        return form

    def submit_runs(self, requests: list[RunRequest]) -> None:
        """A kernel panel's runs (made at the run form's shape and repeats, which the
        panel read just before), measured as the form's mode says."""
        form = self.form()
        if form is not None:
            self.submit(requests, form)

    def run_selected(self) -> None:
        level, form = self.ladder.selected_level(), self.form()
        if form is None:
            return
        if level is None:
            self.say("select a level first", 5000)
            return
        self.ask(form)
        self.submit([form.request(level)], form)

    def run_ladder(self) -> None:
        form = self.form()
        if form is not None:
            ids = [lv.id for lv in self.store.ladder_levels()]
            self.ask(form)
            self.submit(form.ladder(ids), form)

    def run_sweep(self) -> None:
        level, form = self.ladder.selected_level(), self.form()
        if form is not None and level is not None:
            self.submit(form.sweep(level), form)

    def stop(self) -> None:
        live = self.live()
        if live is not None:
            live.stop_runs()

    def state_text(self) -> str:
        """What the status bar says of the runs: the one running (compiling, where its
        runner said so) and where it stands among the runs asked (3/19), or the ones
        queued."""
        run = self.store.running
        live = self.live()
        queued = live.pending_runs if live is not None else 0
        if live is not None and live.state is SessionState.FAILED:
            return "runner stopped after repeated failures"
        if run is None:
            return f"{queued} queued" if queued else ""
        doing = "compiling" if self.store.running_phase == "compile" else "running"
        text = f"{doing} {run.level} at {run.shape}"
        if self.asked > 1 and queued < self.asked:
            return f"{text} ({self.asked - queued}/{self.asked})"
        return text + (f" (+{queued} queued)" if queued else "")

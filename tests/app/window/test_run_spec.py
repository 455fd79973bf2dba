"""One run spec from the form to the runner (issue 44 item 3): the run form reads into a
RunForm holding a Shape, every run a click asks for is a RunRequest carrying that Shape,
and no (M, N, K, repeats) tuple is handed between the form, the buttons, the kernel
panels, the talk and the preferences."""

from __future__ import annotations

import dataclasses
import inspect
from types import SimpleNamespace

import synthetic_session as syn

from gemmscope.app.core.runs import RunForm
from gemmscope.app.widgets.kernel_panel import KernelPanel
from gemmscope.app.widgets.run_controls import RunControls
from gemmscope.app.window.preferences import Preferences
from gemmscope.app.window.run_buttons import RunButtons
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.plan import RunRequest

ODD = Shape(1000, 999, 1001)


class Runner:
    """A live source that keeps what it is sent."""

    def __init__(self) -> None:
        self.sent: list[RunRequest] = []
        self.session = SimpleNamespace(idle=True)
        self.pending_runs = 0
        self.state = None

    def submit(self, runs: list[RunRequest]) -> None:
        self.sent.extend(runs)


def test_a_request_is_a_level_and_a_shape():
    fields = {f.name: f.type for f in dataclasses.fields(RunRequest)}
    assert fields["shape"] in (Shape, "Shape") and not {"M", "N", "K"} & set(fields)
    request = RunRequest("naive", ODD, 5)
    cmd = request.command("r1")  # the wire keeps M, N and K
    assert (cmd["M"], cmd["N"], cmd["K"], cmd["repeats"]) == (1000, 999, 1001, 5)
    assert request.where() == {"level": "naive", "M": 1000, "N": 999, "K": 1001}
    assert request.describe() == "naive at 1000×999×1001"


def test_the_form_yields_requests_carrying_its_shape():
    form = RunForm(ODD, 7)
    assert form.request("naive") == RunRequest("naive", ODD, 7)
    assert [r.shape for r in form.ladder(["naive", "wmma"])] == [ODD, ODD]
    assert {r.repeats for r in form.sweep("naive")} == {7}
    assert all(r.shape.M == r.shape.N == r.shape.K for r in form.sweep("naive"))


def test_every_button_sends_the_forms_shape_end_to_end(qtbot, make_window):
    window = make_window()
    window.handle(of(syn.header()))  # the session's levels, for the ladder
    runner = Runner()
    window.runs.live = lambda: runner  # (RunButtons takes its runner as a callable)
    window.controls.set_values(ODD, 5)
    window.controls.set_unavailable("")
    window.run_ladder()
    assert runner.sent and {(r.shape, r.repeats) for r in runner.sent} == {(ODD, 5)}
    assert all(type(r.shape) is Shape for r in runner.sent)
    # kept for the next start as the shape it is
    assert (window.prefs.shape(), window.prefs.repeats) == (ODD, 5)
    assert window.select_level("naive")
    runner.sent.clear()
    window.run_selected()
    assert [(r.level, r.shape) for r in runner.sent] == [("naive", ODD)]


def test_a_kernel_panel_reads_the_form_not_a_tuple(qtbot, make_window):
    window = make_window()
    window.controls.set_values(ODD, 3)
    form = window.run_form()
    assert isinstance(form, RunForm) and (form.shape, form.repeats) == (ODD, 3)
    window.controls.fields["M"].setText("x")
    assert window.run_form() is None


def test_no_tuple_of_a_shape_and_repeats_crosses_these_seams():
    # the ones issue 44 named: RunControls.values(), RunButtons.kernel_shape(), the talk's
    # values[3], Preferences.shape() returning four numbers
    assert not hasattr(RunControls, "values") and not hasattr(RunButtons, "kernel_shape")
    for method in (RunControls.set_values, KernelPanel.set_shape, Preferences.set_shape):
        params = inspect.signature(method).parameters
        assert "shape" in params and not {"M", "N", "K"} & set(params), method
    assert inspect.signature(Preferences.shape).return_annotation in (Shape, "Shape")

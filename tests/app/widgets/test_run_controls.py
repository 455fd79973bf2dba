"""The run controls' operand distribution (issue 41 item 5): the form reads it, the
default first."""

from __future__ import annotations

from gemmscope.app.widgets.run_controls import RunControls
from gemmscope.kernels.protocol.events import DEFAULT_DISTRIBUTION, Distribution


def test_the_operands_box_offers_every_distribution_and_the_form_reads_it(qtbot):
    controls = RunControls()
    qtbot.addWidget(controls)
    box = controls.operands_box
    assert [box.itemText(i) for i in range(box.count())] == list(Distribution)
    form, problems = controls.read()
    assert form is not None and not problems and form.operands is DEFAULT_DISTRIBUTION
    box.setCurrentText("pm1")
    form, _ = controls.read()
    assert form is not None and form.operands is Distribution.PM1

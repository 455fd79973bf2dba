"""The run form's mode switch (issue 15, item 3): burst or sustained, a sustained run's
window, trials and cool-down checked like the other fields, and the mode in every run
request the window builds."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gemmscope.kernels.protocol.commands import RunMode, SustainedConfig
from gemmscope.kernels.protocol.events import Mode
from gemmscope.kernels.protocol.plan import RunRequest


def test_run_mode_switch_validates_and_reaches_every_request(qtbot, make_window,
                                                             monkeypatch):
    window = make_window()
    window.controls.set_unavailable("")
    controls = window.controls
    assert controls.mode == "burst" and controls.run_mode() == RunMode(Mode.BURST)
    assert [controls.fields[n].text() for n in ("window_s", "trials", "cooldown_s")] == \
        ["3", "3", "5"]  # commands.SUSTAINED_FIELDS
    assert not controls.fields["window_s"].isEnabled()
    controls.fields["trials"].setText("99")  # not checked in burst mode
    assert controls.buttons["run_level"].isEnabled()
    # keyboard: the mode box takes focus and the arrow keys switch it
    controls.mode_box.setFocus()
    qtbot.keyClick(controls.mode_box, Qt.Key.Key_Down)
    assert controls.mode == "sustained" and controls.fields["window_s"].isEnabled()
    assert "trials must be at most 10" in controls.reason.text()
    assert not controls.buttons["run_ladder"].isEnabled() and controls.read()[0] is None
    controls.fields["trials"].setText("2")
    controls.fields["window_s"].setText("0.5")
    assert controls.fields["window_s"].toolTip() == "<p>window_s must be from 1 to 30 s</p>"
    controls.fields["window_s"].setText("1.5")
    assert controls.reason.text() == "" and controls.buttons["run_ladder"].isEnabled()
    assert controls.run_mode() == RunMode(Mode.SUSTAINED, SustainedConfig(1.5, 2, 5.0))

    sent: list[list[RunRequest]] = []

    class Live:
        class session:  # the live session's idle flag, as the window reads it
            idle = True

        def submit(self, requests):
            sent.append(requests)

    live = Live()
    monkeypatch.setattr(type(window), "live", property(lambda _self: live))
    window.ladder.select_level(window.ladder.level_ids[0])
    window.run_selected()
    window.run_ladder()
    window.run_sweep()
    requests = [r for batch in sent for r in batch]
    assert len(sent) == 3 and len(requests) > 3
    assert {(r.mode, r.sustained) for r in requests} == \
        {(Mode.SUSTAINED, SustainedConfig(1.5, 2, 5.0))}
    assert requests[0].command("x")["mode"] == "sustained"

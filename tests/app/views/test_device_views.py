"""The app on a session of two GPUs: a ladder per GPU (the ladder panel's GPU choice), the
same level on each GPU side by side, and one-GPU recordings shown as before."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol.decoding import of

FAKE = places.FAKE_RUNNER
BUNDLED = places.SESSIONS / "h200-ladder.jsonl.gz"


@pytest.fixture
def two_gpus(tmp_path) -> Path:
    """A recording of two stand-in GPUs (GPU N's results read 10 + N TFLOPS)."""
    out = tmp_path / "two.jsonl"
    code = cli.main(["record", "-o", str(out), "--runner", f"{sys.executable} {FAKE}",
                     "--devices", "0,1", "-l", "naive,coalesced", "-s", "64", "-r", "2",
                     "--no-compare"], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    return out


def open_whole(window, path: Path) -> None:
    assert window.open_recording(path)
    window.replay.deliver_all()
    window.flush_views()


def test_the_same_level_on_each_gpu_side_by_side(qtbot, make_window, two_gpus):
    window = make_window()
    open_whole(window, two_gpus)
    view = window.views["charts"]
    assert not view.devices.isHidden()
    drawn = sorted((r["level"], r["device"], r["tflops"]) for r in view.devices.rows)
    assert drawn == [("coalesced", 0, 10.0), ("coalesced", 1, 11.0),
                     ("naive", 0, 10.0), ("naive", 1, 11.0)]
    # grouped: the two bars of a level sit apart, inside the level's slot
    naive = sorted(r["x"] for r in view.devices.rows if r["level"] == "naive")
    assert naive[0] < 0 < naive[1] and naive[1] - naive[0] < 1
    assert view.devices.hover and "Fake GPU 1" in view.devices._describe(naive[1], 0)


def test_the_ladder_panel_shows_one_gpu_at_a_time_and_says_which(qtbot, make_window,
                                                                 two_gpus):
    window = make_window()
    open_whole(window, two_gpus)
    ladder = window.ladder
    assert not ladder.device_box.isHidden() and ladder.device_box.count() == 2
    assert ladder.device_box.itemText(1) == "Ladder of GPU 1 (Fake GPU 1)"
    assert ladder.cell_text("naive", "TFLOPS") == "10.00"
    ladder.device_box.activated.emit(1)
    window.flush_views()
    assert window.store.device == 1 and ladder.shown_device_text().endswith("(Fake GPU 1)")
    assert ladder.cell_text("naive", "TFLOPS") == "11.00"
    bars = window.views["charts"].bars
    assert [row.tflops for row in bars.rows] == [11.0, 11.0]


def test_a_one_gpu_recording_shows_no_gpu_choice(qtbot, make_window):
    window = make_window()
    open_whole(window, BUNDLED)
    assert window.store.device_ids() == [0] and not window.store.multi_device
    assert window.ladder.device_box.isHidden()
    assert window.views["charts"].devices.isHidden()
    assert window.store.device_name() and "H200" in window.store.device_name()


def test_live_on_two_gpus_splits_the_runs_and_records_one_session(qtbot, tmp_path):
    from gemmscope.app.core.store import SessionStore
    from gemmscope.app.sources.live import LiveSource
    from gemmscope.kernels.drive import targets
    from gemmscope.kernels.drive.session import SessionState
    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.protocol.plan import RunRequest
    from gemmscope.kernels.protocol.recording import read_session
    from gemmscope.kernels.protocol.session_file import SessionWriter

    path = tmp_path / "live.jsonl"
    writer = SessionWriter(path)
    store = SessionStore()
    specs = targets.device_specs([0, 1], [sys.executable, str(FAKE), "--mode", "slow"])
    live = LiveSource(store.handle, tap=writer, devices=specs, split=True)
    try:
        live.start()
        # both runners ready first, so each GPU is free when the runs are split
        qtbot.waitUntil(lambda: live.state is SessionState.READY, timeout=20_000)
        with qtbot.waitSignal(live.idle, timeout=20_000):
            live.submit([RunRequest("naive", Shape(64, 64, 64), 3),
                         RunRequest("coalesced", Shape(64, 64, 64), 3)])
    finally:
        live.stop()
        writer.close()
    assert "GPU 0" in live.describe() and "GPU 1" in live.describe()
    assert store.multi_device
    by_device = {r.device: r.level for r in store.results}
    assert sorted(by_device) == [0, 1] and sorted(by_device.values()) == ["coalesced", "naive"]
    session = read_session(path)
    assert len(session.header.devices) == 2 and len(session.results) == 2


@pytest.mark.parametrize("argv, message", [
    (["--devices", "1,x"], "give GPU indices"), (["--split"], "--split spreads runs")])
def test_the_app_refuses_wrong_gpu_options_before_a_window_opens(capsys, argv, message):
    from gemmscope.app import gui_main

    assert gui_main.main(argv) == 2
    assert message in capsys.readouterr().err


def test_errors_on_two_gpus_say_which_gpu(tmp_path):
    from gemmscope.app.core.store import SessionStore
    from gemmscope.kernels.protocol import recording

    state = tmp_path / "crash.state"
    out = tmp_path / "crash.jsonl"
    cli.main(["record", "-o", str(out), "--runner",
              f"{sys.executable} {FAKE} --mode crash --state {state}", "--devices", "0,1",
              "-l", "naive", "-s", "16", "--no-compare"],
             stdout=io.StringIO(), stderr=io.StringIO())
    store = SessionStore()
    for event in recording.read_session(out).events:
        store.handle(of(event))
    [error] = [m for m in store.messages if m.is_error]
    assert error.device in (0, 1)
    assert error.describe().startswith(f"runner_crash (naive at 16×16×16 on device "
                                       f"{error.device}): the runner exited")


def test_a_tune_panel_picks_for_the_sm_count_of_the_gpu_shown(qtbot, make_window, tmp_path,
                                                              monkeypatch):
    """fp8_deep's shape rule spreads its tiles over the SMs it is given: on a 114-SM GPU a
    4096 x 2112 x 7168 run takes another tile width than on a 132-SM one, and the panel
    shows (and the check counts) what a plain run launches on the GPU shown."""
    from gemmscope.kernels.ladder import get

    monkeypatch.setenv("FAKE_RUNNER_SMS", "132,114")
    out = tmp_path / "two.jsonl"
    code = cli.main(["record", "-o", str(out), "--runner", f"{sys.executable} {FAKE}",
                     "--devices", "0,1", "-l", "naive", "-s", "64", "-r", "2",
                     "--no-compare"], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0
    window = make_window()
    open_whole(window, out)
    panel = window.kernel_docks.tune("fp8_deep")
    assert panel is not None and panel.kernel.sm_count == 132
    for name, value in zip("MNK", (4096, 2112, 7168), strict=True):
        window.controls.fields[name].setText(str(value))
    level = get("fp8_deep")
    picks = {sms: level.for_shape(4096, 2112, 7168, sms).params for sms in (132, 114)}
    assert picks[132] != picks[114]
    assert panel.kernel.params == picks[132]
    window.ladder.device_box.activated.emit(1)  # the ladder of GPU 1, 114 SMs
    assert window.store.device == 1 and panel.kernel.sm_count == 114
    assert panel.kernel.params == picks[114]
    assert "on 114 SMs" in panel.check_lines.text()
    window.ladder.device_box.activated.emit(0)
    assert panel.kernel.sm_count == 132 and panel.kernel.params == picks[132]

"""Replay drives the ladder panel and the charts; numbers are read back from the widgets."""

from __future__ import annotations

import numpy as np
import pytest
import synthetic_session as syn
from PySide6.QtCore import QElapsedTimer
from PySide6.QtGui import QColor
from replay_seek import seek_whole

from gemmscope.app.core.replay import Speed
from gemmscope.kernels.protocol.recording import read_session
from gemmscope.kernels.results.rows import tflops_text


def test_instant_replay_fills_ladder_and_charts(make_window, synthetic_file):
    window = make_window()
    assert window.open_recording(synthetic_file)
    window.play_instant()
    panel = window.ladder
    for level, tflops in syn.LADDER_TFLOPS.items():
        held = "⚠ SwPowerCap" if syn.is_capped(tflops) else "no"  # clocks held back
        assert panel.cell_text(level, "TFLOPS") == tflops_text(tflops)
        assert panel.cell_text(level, "clocks held back") == held
        assert panel.cell_text(level, "shape") == "4096×4096×4096"
        assert panel.cell_text(level, "verified") == "verified"
    assert panel.cell_text("wmma", "precision") == "FP16"
    assert panel.cell_text("wmma", "% of cuBLAS") == "42.9%"  # 300 / 700, both FP16
    assert panel.cell_text("register_2d", "% of cuBLAS") == "40.0%"  # 20 / 50, both FP32
    assert panel.cell_text("register_2d", "% of peak") == f"{100 * 20 / 67:.1f}%"
    assert panel.cell_text("cublas_fp16", "TFLOPS") == "700.0"
    assert panel.cell_text("cublas_fp16", "clocks held back") == "⚠ SwPowerCap"

    charts = window.charts()
    bars = charts["bars"]
    assert [row.level for row in bars.rows] == list(syn.LADDER_TFLOPS)
    np.testing.assert_allclose(bars.drawn_values(), list(syn.LADDER_TFLOPS.values()))
    brushes = [b.color() for b in bars.bars.opts["brushes"]]
    # FP32 levels in shades of blue, the FP16 one orange
    assert brushes[0].hslHue() == QColor("#1f77b4").hslHue() != brushes[1].lightness()
    assert abs(brushes[-1].hslHue() - QColor("#ff7f0e").hslHue()) <= 2  # a shade of it
    assert [e.text for e in bars.side_legend.entries] == [
        "FP32 levels", "cuBLAS FP32", "FP16 levels", "cuBLAS FP16", bars.UNPAIRED_LEGEND,
        bars.THROTTLE_LEGEND, bars.SELECTED_LEGEND]  # the synthetic ratios are unpaired
    bars.set_metric(bars.METRICS[1])
    np.testing.assert_allclose(bars.drawn_values()[-1], 100 * 300 / 700)

    sweep = charts["sweep"].curves[syn.SWEEP_LEVEL]
    np.testing.assert_array_equal(sweep.xData, sorted(syn.SWEEP))
    np.testing.assert_allclose(sweep.yData, [syn.SWEEP[n] for n in sorted(syn.SWEEP)])

    stream = charts["stream"]
    x, y = stream.curve.getData()
    assert len(x) == syn.REPEATS
    # the selected level's run at the shape shown (naive at 4096³), not the last recorded
    np.testing.assert_allclose(np.median(y), syn.LADDER_TFLOPS["naive"], rtol=0.03)
    assert "naive at 4096³" in stream.base_title

    texts = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert any("launch (double_buffer at 7×100×1000): synthetic launch failure" in t
               for t in texts)
    assert "synthetic data" in window.mode_text()


def test_hover_shows_exact_values(make_window, synthetic_file):
    window = make_window()
    window.open_recording(synthetic_file)
    window.play_instant()
    bars = window.charts()["bars"]
    bars.hover.show_at(9.1, 10.0)
    assert "wmma (FP16) at 4096×4096×4096" in bars.hover.text
    assert "300.0 TFLOPS" in bars.hover.text and "42.9% of cuBLAS FP16" in bars.hover.text
    sweep = window.charts()["sweep"]
    window.views["charts"].set_log_axis(False)
    sweep.hover.show_at(np.log10(2048), 15.0)
    assert sweep.hover.text == "register_2d at N=2048: 15 TFLOPS"


def test_replay_at_16x_streams_and_redraws_at_a_bounded_rate(qtbot, make_window,
                                                            synthetic_file):
    window = make_window()
    window.set_replay_speed(Speed.X16, remember=False)
    clock = QElapsedTimer()
    clock.start()
    redraws_before = window.throttle.redraws
    window.open_recording(synthetic_file)
    with qtbot.waitSignal(window.replay.finished, timeout=10_000):
        pass
    elapsed_s = clock.elapsed() / 1000
    duration_s = window.replay.clock.duration_s
    assert elapsed_s >= duration_s / 16 * 0.8  # it played in time, not all at once
    redraws = window.throttle.redraws - redraws_before
    assert 1 <= redraws <= 60 * elapsed_s + 2
    qtbot.waitUntil(lambda: window.ladder.cell_text("wmma", "TFLOPS") == "300.0")


def test_pause_and_seek_back_reset_the_views(qtbot, make_window, synthetic_file):
    window = make_window()
    window.set_replay_speed(Speed.X1, remember=False)
    window.open_recording(synthetic_file)
    window.replay.pause()
    seek_whole(window, window.replay.clock.duration_s)
    assert window.ladder.cell_text("naive", "TFLOPS") == "0.3000"
    assert "Last result:</b> 0.3000 TFLOPS" in window.ladder.detail.text()  # naive, selected
    seek_whole(window, 0.0)
    assert window.ladder.cell_text("naive", "TFLOPS") == "–"
    assert "Last result" not in window.ladder.detail.text()
    assert window.charts()["bars"].rows == []
    assert not window.replay.playing
    seek_whole(window, window.replay.clock.duration_s)  # back and forth: listed once
    assert sum("synthetic launch failure" in t for t in window.messages.texts()) == 1


def test_a_bad_recording_is_a_message_not_a_crash(make_window, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "ready", "t": 0}\n')
    window = make_window()
    assert not window.open_recording(bad)
    assert 'the first event must be "session"' in window.messages.item(
        window.messages.count() - 1).text()


def test_without_a_bundled_recording_the_app_says_why(make_window, monkeypatch):
    from gemmscope.app.window import sources

    monkeypatch.setattr(sources, "bundled_session", lambda: None)
    window = make_window()
    assert not window.open_bundled("no CuPy (install gemmscope[cuda12] or [cuda13])")
    assert "no CuPy" in window.mode_text()
    assert not window.controls.buttons["run_level"].isEnabled()
    assert "not in this build yet" in window.messages.item(window.messages.count() - 1).text()


def test_the_bundled_h200_recording_opens_with_the_reason(make_window, qtbot):
    from gemmscope.app.window.main_window import bundled_session

    path = bundled_session()
    assert path is not None, "resources/sessions/h200-ladder.jsonl.gz is part of the package"
    session = read_session(path)
    recorded = {(r.level, r.M): r.tflops for r in session.results if r.mode == "burst"}
    window = make_window()
    assert window.open_bundled("no CUDA device")
    assert "no CUDA device" in window.mode_text()
    # generous bounds (they end as soon as the condition holds): the 24 MB recording is
    # read in a thread, which on a loaded 2-CPU machine took over 10 s
    qtbot.waitUntil(lambda: window.replay is not None, timeout=90000)
    window.replay.seek(window.replay.duration_s)
    # a seek delivers within a per-tick budget; the rest follows on later ticks
    qtbot.waitUntil(lambda: window.replay.delivered_count == len(session.events),
                    timeout=90000)
    window.flush_views()
    table = window.ladder.table
    rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    assert "cp_async" in rows and "wmma" in rows
    shown = float(table.item(rows["cp_async"], 3).text())
    # the table is at the shape the replay opened on, 4096³ (the README's), though the
    # recording ends at 8192³
    assert shown == pytest.approx(recorded[("cp_async", 4096)], rel=1e-3)
    assert window.view_state.state.shape.M == 4096


@pytest.mark.parametrize("view", ["charts", "bars", "ladder", "window"])
def test_named_views_resolve(make_window, view):
    window = make_window()
    assert window.named_widget(view) is not None
    assert window.named_widget("no-such-view") is None


def test_a_recording_is_read_off_the_gui_thread(qtbot, make_window, synthetic_file, tmp_path):
    window = make_window()
    with qtbot.waitSignal(window.recording_opened, timeout=10_000) as opened:
        assert window.open_recording(synthetic_file, background=True)
    assert opened.args == [True]
    assert "synthetic.jsonl" in window.mode_text()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with qtbot.waitSignal(window.recording_opened, timeout=10_000) as opened:
        window.open_recording(bad, background=True)
    assert opened.args == [False]
    assert "not JSON" in window.statusBar().currentMessage()


def test_telemetry_view_shows_the_recorded_samples(qtbot, make_window, synthetic_file):

    window = make_window()
    window.open_recording(synthetic_file)
    window.play_instant()
    window.show()
    view = window.named_widget("telemetry")
    qtbot.waitExposed(view)
    samples = [e for e in syn.file_events(synthetic_file) if e["type"] == "telemetry"]
    t, power = view.curves["power_w"].xData, view.curves["power_w"].yData
    np.testing.assert_allclose(t, [e["t"] for e in samples])
    np.testing.assert_allclose(power, [e["power_w"] for e in samples])
    capped = sum(1 for e in samples if "SwPowerCap" in e["reasons"])
    assert capped > 0
    assert f"SwPowerCap ({capped} samples)" in view.status.text()
    assert window.named_widget("telemetry_temperature") is view.plots["temperature"]


def test_the_bundled_recording_opens_with_the_reason(make_window, synthetic_file,
                                                     monkeypatch):
    from gemmscope.app.window import sources

    monkeypatch.setattr(sources, "bundled_session", lambda: synthetic_file)
    window = make_window()
    assert window.open_bundled("no CUDA driver (libcuda not found)")
    window.play_instant()
    assert window.mode_text() == ("replay — synthetic.jsonl [synthetic data] "
                                        "(no CUDA driver (libcuda not found))")
    assert window.ladder.cell_text("wmma", "TFLOPS") == "300.0"
    assert not window.controls.buttons["run_ladder"].isEnabled()


def test_replay_bar_pause_speed_and_seek(qtbot, make_window, synthetic_file, tmp_path):
    from gemmscope.app.window.preferences import Preferences, open_settings

    window = make_window(tmp_path / "bar.ini")
    window.set_replay_speed(Speed.X1, remember=False)
    window.open_recording(synthetic_file)
    bar = window.replay_bar
    assert window.replay.playing and bar.play_button.text() == "Pause"
    bar.play_button.click()
    assert not window.replay.playing and bar.play_button.text() == "Play"
    bar.speed.setCurrentText("16x")
    assert window.replay.clock.speed is Speed.X16
    assert Preferences(open_settings(str(tmp_path / "bar.ini"))).speed is Speed.X16
    bar.slider.setSliderDown(True)
    bar.slider.sliderMoved.emit(bar.SLIDER_STEPS)  # drag to the end
    bar.slider.setSliderDown(False)
    # a seek delivers within a time budget a tick (a loaded machine leaves the rest to
    # the next ticks): the ladder is read once the replay has caught up
    qtbot.waitUntil(lambda: not window.replay.clock.behind, timeout=30_000)
    window.flush_views()
    assert window.ladder.cell_text("wmma", "TFLOPS") == "300.0"
    assert bar.position.text().strip().startswith(f"{window.replay.clock.duration_s:.1f}")
    stream = window.charts()["stream"]
    stream.hover.show_at(2.2, 0.0)  # the selected level's run (naive) at the shape shown
    assert stream.hover.text == f"repeat 2: {syn.LADDER_TFLOPS['naive'] * 1.02:.4g} TFLOPS"


def test_ladder_detail_says_which_parameters_a_run_used_beside_the_levels_own(
        qtbot, make_window, tmp_path):
    """A result that ran other template parameters (the FP8 levels pick their tile width
    per shape) says so under "Last result"; a result of the level's own says nothing."""
    import synthetic_session as syn

    events = syn.events()
    own = next(c for c in events[0]["catalog"] if c["id"] == "naive")["params"]
    (name, value), = list(own.items())[:1]
    for ev in events:
        if ev["type"] == "result" and ev["level"] == "naive":
            ev["params"] = {**own, name: 2 * value}
    window = make_window()
    window.open_recording(syn.write(tmp_path / "ran.jsonl", events))
    seek_whole(window, window.replay.clock.duration_s)
    assert f"This run used:</b> {name}={2 * value}</p>" in window.ladder.detail.text()
    plain = make_window()
    plain.open_recording(syn.write(tmp_path / "own.jsonl"))
    seek_whole(plain, plain.replay.clock.duration_s)
    assert "Last result" in plain.ladder.detail.text()
    assert "This run used" not in plain.ladder.detail.text()

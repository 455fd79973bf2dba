"""The telemetry view: curves, run windows, reason strip, reference lines, null fields,
no NVML, following the newest time. Numbers are read back from the plot items."""

from __future__ import annotations

import numpy as np
import pytest
import synthetic_session as syn
from replay_seek import seek_whole

from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import of


def test_replay_draws_every_recorded_sample(show_telemetry, synthetic_file):
    _, view = show_telemetry(synthetic_file)
    samples = [e for e in syn.file_events(synthetic_file) if e["type"] == "telemetry"]
    t = np.array([e["t"] for e in samples])
    for field, curve in view.curves.items():
        if field == syn.NULL_GPM_FIELD:
            continue
        np.testing.assert_array_equal(curve.xData, t, err_msg=field)
        np.testing.assert_array_equal(curve.yData, [e[field] for e in samples], err_msg=field)
        assert curve.isVisible()
    assert view.curves["sm_clock_mhz"].getViewBox() is view.plots["clocks"].getViewBox()
    assert view.curves["mem_clock_mhz"].getViewBox() is view.plots["clocks"].getViewBox()
    assert view.curves["tensor_util_pct"].getViewBox() is view.plots["gpm"].getViewBox()
    # one shared time axis
    ranges = {tuple(p.getViewBox().viewRange()[0]) for p in view.plots.values()}
    assert len(ranges) == 1


def test_run_windows_are_shaded_on_every_plot_and_labelled_once(show_telemetry, synthetic_file):
    _, view = show_telemetry(synthetic_file)
    events = syn.file_events(synthetic_file)
    starts = [e for e in events if e["type"] == "run_start"]
    ends = {e["id"]: e["t"] for e in events if e["type"] == "result"}
    want = np.array([(s["t"], ends[s["id"]]) for s in starts])
    for name, bands in view.bands.items():
        np.testing.assert_array_equal(bands.spans, want, err_msg=name)
    texts = [label.toPlainText() for label in view.run_labels]
    assert len(texts) == len(starts)  # once, in the runs strip
    vb = view.plots["runs"].getViewBox()
    right = vb.viewRange()[0][1]
    for s, label in zip(starts, view.run_labels, strict=True):
        assert label.toPlainText().startswith(f"{s['level']} {s['M']}×{s['N']}×{s['K']}")
        width = label.textItem.boundingRect().width() * vb.viewPixelSize()[0]
        # at its run's start, or moved in so that it ends at the view's right edge
        assert label.pos().x() == min(s["t"], right - width) or \
            label.pos().x() == pytest.approx(right - width)
        assert label.getViewBox() is vb
    wmma = texts[[s["level"] for s in starts].index("wmma")]
    assert wmma == "wmma 4096×4096×4096 ⚠"  # its clocks were held back (SwPowerCap)
    i = [s["level"] for s in starts].index("wmma")
    assert view.bands["power"].colors[i] != view.bands["power"].colors[0]


def test_reason_strip_shows_the_power_cap_where_it_was(show_telemetry, synthetic_file):
    _, view = show_telemetry(synthetic_file)
    samples = [e for e in syn.file_events(synthetic_file) if e["type"] == "telemetry"]
    assert view.reason_rows == ["SwPowerCap"]  # GpuIdle is not drawn
    ticks = view.plots["reasons"].getPlotItem().getAxis("left")._tickLevels
    assert ticks == [[(0, "SwPowerCap")]]
    spans = view.reason_spans("SwPowerCap")
    capped = [i for i, e in enumerate(samples) if "SwPowerCap" in e["reasons"]]
    assert len(spans) == 2  # cublas_fp16, then wmma
    # each span starts at a capped sample and holds until the next (uncapped) sample
    assert spans[0][0] == samples[capped[0]]["t"]
    assert spans[-1][1] == samples[capped[-1] + 1]["t"]
    for x0, x1 in spans:
        inside = [e for e in samples if x0 <= e["t"] < x1]
        assert inside and all("SwPowerCap" in e["reasons"] for e in inside)
    outside = [e for e in samples if not any(x0 <= e["t"] < x1 for x0, x1 in spans)]
    assert not any("SwPowerCap" in e["reasons"] for e in outside)


def test_reference_lines_sit_at_the_recorded_values(show_telemetry, synthetic_file, tmp_path):
    _, view = show_telemetry(synthetic_file)
    assert view.max_clock_line.value() == syn.SM_CLOCK_MAX_MHZ
    assert view.max_clock_line.isVisible()
    assert view.max_clock_line.getViewBox() is view.plots["clocks"].getViewBox()
    assert "1980 MHz" in view.max_clock_line.label.toPlainText()
    limit = view.curves["power_limit_w"]
    assert set(limit.yData) == {syn.POWER_LIMIT_W}
    assert limit.getViewBox() is view.plots["power"].getViewBox()
    assert view.power_legend_label().text == "power (instant)"
    assert view.plots["clocks"].getViewBox().viewRange()[1][1] >= syn.SM_CLOCK_MAX_MHZ
    events = [e if e["type"] != "telemetry" else dict(e, power_kind="average")
              for e in syn.events()]
    _, view = show_telemetry(syn.write(tmp_path / "made.jsonl", events))
    assert view.power_legend_label().text == "power (1 s average)"


def test_null_gpm_fields_draw_nothing_and_raise_nothing(show_telemetry, synthetic_file, tmp_path):
    _, view = show_telemetry(synthetic_file)
    null = view.curves[syn.NULL_GPM_FIELD]
    assert not null.isVisible() and len(null.xData if null.xData is not None else []) == 0
    legend = [label.text for _, label in view.plots["gpm"].getPlotItem().legend.items]
    assert not view.gpm_note.isVisible()
    assert legend == ["SM occupancy", "SM active", "tensor pipe", "DRAM bandwidth"]
    # a GPU without GPM (or any optional field): every such field null or missing
    gpm = ("sm_occupancy_pct", "sm_util_pct", "tensor_util_pct", "dram_bw_util_pct",
           "fp32_util_pct", "mem_clock_mhz", "power_limit_w", "temp_c")
    events = []
    for e in syn.events():
        if e["type"] == "telemetry":
            e = {k: v for k, v in e.items() if k not in gpm[::2]}
            e.update(dict.fromkeys(gpm[1::2]))
            e["reasons"] = None
        events.append(e)
    _, view = show_telemetry(syn.write(tmp_path / "made.jsonl", events))
    for field in gpm:
        assert not view.curves[field].isVisible(), field
    assert view.plots["gpm"].getPlotItem().legend.items == []
    assert view.gpm_note.isVisible() and "no GPM metrics" in view.gpm_note.text()
    assert view.reason_rows == [] and not view.reason_bars.isVisible()
    assert view.curves["power_w"].isVisible()  # what is there still draws


def test_without_nvml_the_view_says_why_and_the_rest_works(show_telemetry, tmp_path):
    reason = "nvidia-ml-py (pynvml) is not installed"
    events = [e for e in syn.events() if e["type"] != "telemetry"]
    events[0] = dict(events[0], telemetry={"available": False, "reason": reason, "hz": 0})
    window, view = show_telemetry(syn.write(tmp_path / "made.jsonl", events))
    assert view.status.text() == f"telemetry unavailable: {reason}"
    assert len(view.bands["clocks"].spans) == sum(e["type"] == "run_start" for e in events)
    assert window.ladder.cell_text("naive", "TFLOPS") == "0.3000"
    # the runner's info message says the same when the header does not
    events = [e for e in syn.events() if e["type"] != "telemetry"]
    events.insert(1, {"type": "info", "t": 0.01,
                      "message": "telemetry unavailable: NVML: Driver Not Loaded"})
    window, view = show_telemetry(syn.write(tmp_path / "info.jsonl", events))
    assert view.status.text() == "telemetry unavailable: NVML: Driver Not Loaded"


def test_follows_the_newest_time_until_the_user_pans(qtbot, make_window):
    window = make_window()
    window.show()
    view = window.named_widget("telemetry")
    qtbot.waitExposed(view)
    window.handle(of(syn.header()))
    for i in range(1, 151):  # 150 s of samples, one a second, as a live runner sends
        window.handle(of(syn.telemetry(float(i), 10.0)))
        if i == 75:
            window.flush_views()
            assert view.plots["power"].getViewBox().viewRange()[0] == pytest.approx([20, 80])
    window.flush_views()
    assert view.plots["power"].getViewBox().viewRange()[0] == pytest.approx([100, 160])
    vb = view.plots["temperature"].getViewBox()
    vb.setXRange(10, 20, padding=0)
    vb.sigRangeChangedManually.emit([True, False])  # what a drag or wheel emits
    assert not view.follow_button.isChecked()
    window.handle(of(syn.telemetry(200.0, 10.0)))
    window.flush_views()
    assert view.plots["power"].getViewBox().viewRange()[0] == pytest.approx([10, 20])
    view.follow_button.click()
    assert view.plots["power"].getViewBox().viewRange()[0] == pytest.approx([150, 210])
    view.whole_button.click()
    lo, hi = view.plots["clocks"].getViewBox().viewRange()[0]
    assert lo <= 1.0 and hi >= 200.0 and not view.follow_button.isChecked()


def _pixel(plot, x, y_frac):
    """The colour the plot shows at data x and a fraction of the view's height."""
    from PySide6.QtCore import QPointF

    vb = plot.getViewBox()
    (_x0, _x1), (y0, y1) = vb.viewRange()
    scene = vb.mapViewToScene(QPointF(x, y0 + y_frac * (y1 - y0)))
    at = plot.mapFromScene(scene)
    return plot.grab().toImage().pixelColor(at.x(), at.y())


def test_a_throttled_run_is_shaded_in_the_picture(show_telemetry, synthetic_file):
    from gemmscope.app.core.telemetry import RunEnd
    from gemmscope.app.plots.telemetry_strips import (
        BAND_COLORS,
        SELECTED_ALPHA,
        THROTTLED_BAND,
    )

    _, view = show_telemetry(synthetic_file)
    starts = [w for w in view.windows if w.level == "wmma"]
    wmma = starts[0]
    naive = next(w for w in view.windows if w.level == "naive")
    plot = view.plots["temperature"]

    def blend(hex_rgba):  # the band over the white background
        rgb = [int(hex_rgba[i:i + 2], 16) for i in (1, 3, 5)]
        a = int(hex_rgba[7:9], 16) / 255
        return [round(255 * (1 - a) + c * a) for c in rgb]

    assert view.selected == "naive"  # (the first level is selected): its runs stand out
    selected = BAND_COLORS[RunEnd.RESULT][:7] + SELECTED_ALPHA
    for w, color in ((wmma, THROTTLED_BAND), (naive, selected)):
        got = _pixel(plot, (w.start_s + w.end_s) / 2, 0.97)
        assert [got.red(), got.green(), got.blue()] == pytest.approx(blend(color), abs=3)
    outside = _pixel(plot, 7.3, 0.97)
    assert (outside.red(), outside.green(), outside.blue()) == (255, 255, 255)


def test_seeking_in_a_replay_redraws_from_the_same_store(qtbot, make_window, synthetic_file):
    window = make_window()
    window.open_recording(synthetic_file)
    window.replay.pause()
    window.show()
    view = window.named_widget("telemetry")
    qtbot.waitExposed(view)
    events = syn.file_events(synthetic_file)
    samples = [e for e in events if e["type"] == "telemetry"]
    wmma = next(e for e in events if e["type"] == "run_start" and e["level"] == "wmma")
    seek_whole(window, wmma["t"] + 0.05)  # into the wmma run (a throttled one)
    upto = [e for e in samples if e["t"] <= wmma["t"] + 0.05]
    np.testing.assert_array_equal(view.curves["power_w"].xData, [e["t"] for e in upto])
    assert view.windows[-1].level == "wmma" and view.run_labels[-1].toPlainText().endswith("…")
    assert view.windows[-1].end_s == upto[-1]["t"]  # the open run reaches the newest sample
    seek_whole(window, 0.5)  # back: the store starts again from the top
    upto = [e for e in samples if e["t"] <= 0.5]
    np.testing.assert_array_equal(view.curves["power_w"].xData, [e["t"] for e in upto])
    assert all(w.end_s <= 0.5 for w in view.windows)
    assert view.follow_button.isChecked()


def test_live_runner_crash_and_restart_on_one_timeline(qtbot, make_window, tmp_path,
                                                       fake_runner):
    import sys

    from gemmscope.app.core.telemetry import RunEnd

    window = make_window()
    window.show()
    view = window.named_widget("telemetry")
    qtbot.waitExposed(view)
    cmd = [sys.executable, str(fake_runner), "--mode", "crash", "--state",
           str(tmp_path / "state"), "--telemetry"]
    window.start_live("Fake GPU", cmd, tmp_path / "live.jsonl")
    window.controls.set_values(Shape(64, 64, 64), 3)
    with qtbot.waitSignal(window.live.idle, timeout=20_000):
        window.run_ladder()
    window.flush_views()
    windows = view.windows
    assert windows[0].level == "naive" and windows[0].end is RunEnd.ERROR  # runner_crash
    assert view.run_labels[0].toPlainText() == "naive 64×64×64 ✗"
    assert all(w.end is RunEnd.RESULT and w.throttled == ("SwPowerCap",) for w in windows[1:])
    assert len(windows) == len(window.store.ladder_levels())
    starts = [w.start_s for w in windows]
    assert starts == sorted(starts) and windows[1].start_s >= windows[0].end_s  # joined
    t = view.curves["power_w"].xData
    assert len(t) == 2 + 3 * (len(windows) - 1) and np.all(np.diff(t) >= 0)
    assert view.power_legend_label().text == "power (1 s average)"
    np.testing.assert_array_equal(view.bands["gpm"].spans,
                                  [(w.start_s, w.end_s) for w in windows])
    assert view.reason_rows == ["SwPowerCap"]
    assert window.ladder.cell_text("coalesced", "J/GEMM") == "700 mJ"
    assert window.ladder.cell_text("coalesced", "clocks held back") == "⚠ SwPowerCap"


def test_hover_names_the_run_and_the_nearest_sample(show_telemetry, synthetic_file):
    _, view = show_telemetry(synthetic_file)
    samples = [e for e in syn.file_events(synthetic_file) if e["type"] == "telemetry"]
    wmma = next(w for w in view.windows if w.level == "wmma")
    sample = next(e for e in samples if wmma.start_s < e["t"] < wmma.end_s)
    view.hovers["power"].show_at(sample["t"] + 0.0001, 0.0)
    assert view.hovers["power"].text.splitlines()[1:] == [
        "wmma 4096×4096×4096 ⚠ (SwPowerCap)",
        f"power (instant): {sample['power_w']:.4g} W", f"power limit: {syn.POWER_LIMIT_W:.4g} W"]
    view.hovers["gpm"].show_at(sample["t"], 0.0)
    assert "FP32 pipe" not in view.hovers["gpm"].text  # null: not shown
    assert f"tensor pipe: {sample['tensor_util_pct']:.4g} %" in view.hovers["gpm"].text
    view.hovers["reasons"].show_at(sample["t"], 0.0)
    assert view.hovers["reasons"].text.endswith("active: SwPowerCap")
    view.hovers["reasons"].show_at(9.0, 0.0)  # after the session: no run, nothing active
    assert view.hovers["reasons"].text.splitlines()[1:] == ["active: none"]


def test_failed_stopped_and_running_runs_are_told_apart(show_telemetry, tmp_path):
    from gemmscope.app.core.telemetry import RunEnd
    from gemmscope.app.plots.telemetry_strips import BAND_COLORS

    def start(run_id, t, level):
        return {"type": "run_start", "t": t, "id": run_id, "level": level, "M": 64, "N": 64,
                "K": 64, "dtype": "fp32", "precision": "fp32", "repeats": 2, "warmup": 0}

    where = {"M": 64, "N": 64, "K": 64}
    events = [syn.header(),
              start("a", 1.0, "naive"),
              {"type": "result", "t": 2.0, "id": "a", "level": "naive", **where,
               "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0, "verified": False,
               "rel_err": 0.5, "repeats": 2},
              {"type": "error", "t": 2.1, "id": "a", "level": "naive", **where,
               "kind": "verify", "message": "wrong answer"},
              start("b", 3.0, "coalesced"),
              {"type": "error", "t": 4.0, "id": "b", "level": "coalesced", **where,
               "kind": "launch", "message": "illegal address"},
              start("c", 5.0, "smem_tiled"),
              {"type": "info", "t": 6.0, "id": "c", "level": "smem_tiled", **where,
               "message": "run of smem_tiled stopped by the user"},
              start("d", 7.0, "vectorized"),
              {"type": "telemetry", "t": 8.0, "power_w": 100.0}]
    _, view = show_telemetry(syn.write(tmp_path / "made.jsonl", events))
    assert [lb.toPlainText() for lb in view.run_labels] == [
        "naive 64×64×64 ✗ NOT verified", "coalesced 64×64×64 ✗",
        "smem_tiled 64×64×64 (stopped)", "vectorized 64×64×64 …"]
    np.testing.assert_array_equal(view.bands["clocks"].spans,
                                  [(1, 2), (3, 4), (5, 6), (7, 8)])
    assert view.selected == "naive"  # selected: its band is the same hue, stronger
    assert view.bands["clocks"].colors == [
        BAND_COLORS[RunEnd.ERROR][:7] + "99", BAND_COLORS[RunEnd.ERROR],
        BAND_COLORS[RunEnd.STOPPED], BAND_COLORS[RunEnd.RUNNING]]


def test_the_bundled_h200_recording(show_telemetry):
    """The real recording: every sample drawn, every run a window, reasons as recorded."""
    from gemmscope.app.core.telemetry import GPM_FIELDS
    from gemmscope.app.window.main_window import bundled_session

    path = bundled_session()
    if path is None:
        pytest.skip("no bundled recording in this build")
    events = syn.file_events(path)
    samples = [e for e in events if e["type"] == "telemetry"]
    starts = [e for e in events if e["type"] == "run_start"]
    _, view = show_telemetry(path)
    np.testing.assert_array_equal(view.curves["sm_clock_mhz"].xData, [e["t"] for e in samples])
    assert len(view.windows) == len(starts)
    reasons = sorted({r for e in samples for r in e.get("reasons") or () if r != "GpuIdle"})
    assert sorted(view.reason_rows) == reasons
    has_gpm = any(e.get(f) is not None for e in samples for f in GPM_FIELDS)
    assert view.gpm_note.isVisible() == (not has_gpm)
    max_mhz = events[0]["device"]["sm_clock_max_mhz"]
    assert view.max_clock_line.value() == max_mhz


def test_following_stays_on_the_samples_when_the_session_goes_on_without_them(
        qtbot, make_window):
    # as the bundled recording: NVML samples end (the runner quit) and ncu's counters
    # come 40 s later; following the newest event would show an empty quarter
    window = make_window()
    window.show()
    view = window.named_widget("telemetry")
    qtbot.waitExposed(view)
    window.handle(of(syn.header()))
    for i in range(1, 96):
        window.handle(of(syn.telemetry(float(i), 10.0)))
    window.handle(of({"type": "counters", "t": 131.0, "level": "naive", "M": 1024, "N": 1024,
                   "K": 1024, "tool": "ncu", "metrics": {}}))
    window.flush_views()
    lo, hi = view.plots["power"].getViewBox().viewRange()[0]
    assert lo <= 95.0 <= hi  # the newest sample is on screen,
    assert hi - 95.0 <= 10.0  # near the right edge: no empty tail
    assert "samples end at 95 s, the session at 131 s" in view.status.text()
    view.whole_button.click()  # the whole session still reaches its last event
    assert view.plots["power"].getViewBox().viewRange()[0][1] >= 131.0


def test_following_without_samples_follows_the_events(qtbot, make_window):
    window = make_window()
    window.show()
    view = window.named_widget("telemetry")
    qtbot.waitExposed(view)
    window.handle(of(syn.header()))
    window.handle(of({"type": "run_start", "t": 150.0, "id": "r", "level": "naive",
                   "M": 64, "N": 64, "K": 64, "repeats": 2}))
    window.flush_views()
    lo, hi = view.plots["runs"].getViewBox().viewRange()[0]
    assert lo <= 150.0 <= hi
    assert "samples end" not in view.status.text()


def test_the_plots_are_made_when_the_tab_is_first_shown(qtbot, make_window):
    # six plots are half the window's start: made only for a tab that is opened
    window = make_window()
    window.show()
    view = window.views["telemetry"]
    assert view.plots == {}
    window.named_widget("telemetry")
    qtbot.waitExposed(view)
    assert set(view.plots) == {"runs", "clocks", "power", "temperature", "gpm", "reasons"}
    assert all(plot.isVisible() for plot in view.plots.values())
    other = make_window()  # an export asks for the charts of a tab never shown
    assert set(other.views["telemetry"].charts()) == {f"telemetry_{n}" for n in view.plots}

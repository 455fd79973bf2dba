"""Input validation, presentation mode, shortcuts, preferences and exports in the window."""

from __future__ import annotations

import sys

import synthetic_session as syn
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel

from gemmscope.app.core.runs import RunForm
from gemmscope.app.theme import PRESENTATION
from gemmscope.app.window.preferences import Preferences, open_settings
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.recording import read_session


def test_bad_input_is_refused_in_the_field_with_a_reason(qtbot, make_window):
    window = make_window()
    window.controls.set_unavailable("")
    controls = window.controls
    assert controls.buttons["run_level"].isEnabled()
    controls.fields["M"].setText("12x")
    controls.fields["K"].setText("0")
    assert controls.read()[0] is None
    assert not controls.buttons["run_ladder"].isEnabled()
    # shown literally (escaped rich text): the field's text is the user's
    assert controls.fields["M"].toolTip() == "<p>M must be a whole number, not &#x27;12x&#x27;</p>"
    assert "K must be at least 1" in controls.reason.text()
    assert "border" in controls.fields["K"].styleSheet()
    controls.fields["M"].setText("100")
    controls.fields["K"].setText("7")
    assert controls.read()[0] == RunForm(Shape(100, 4096, 7), 20)
    assert controls.reason.text() == "" and controls.buttons["sweep"].isEnabled()


def test_presentation_mode_and_preferences_persist(qtbot, make_window, tmp_path):
    ini = tmp_path / "prefs.ini"
    window = make_window(ini)
    window.show()
    qtbot.waitExposed(window)
    window.set_presentation(True, full_screen=False)
    assert window.theme is PRESENTATION
    assert "font-size: 20pt" in window.styleSheet()
    assert window.charts()["bars"].backgroundBrush().color().name() == "#000000"
    assert not window.run_dock.isVisible()
    window.controls.set_values(Shape(128, 256, 512), 7)
    window.controls.set_unavailable("")
    window._form()  # a run request remembers the shape
    window.close()
    window.set_presentation(False)
    prefs = Preferences(open_settings(str(ini)))
    assert (prefs.shape(), prefs.repeats) == (Shape(128, 256, 512), 7)
    again = make_window(ini)
    assert again.controls.read()[0] == RunForm(Shape(128, 256, 512), 7)


def _leave_the_stage_and_see_the_panels(qtbot, window) -> None:
    window.show()
    qtbot.waitExposed(window)
    assert window.theme is PRESENTATION
    window.set_presentation(False)
    qtbot.waitUntil(lambda: window.run_dock.isVisible(), timeout=5000)
    assert window.ladder_dock.isVisible()


def test_a_stage_session_does_not_make_the_next_plain_start_a_stage(qtbot, make_window,
                                                                    tmp_path):
    """A window closed on stage (a talk), or a preferences file an older version left
    saying so: the next plain start opens in the normal type with its panels."""
    from gemmscope.app.theme import NORMAL

    ini = tmp_path / "p.ini"
    first = make_window(ini)
    first.set_presentation(True, full_screen=False)
    first.close()
    again = make_window(ini)
    again.show()
    qtbot.waitExposed(again)
    assert again.theme is NORMAL and again.run_dock.isVisible()
    again.close()
    Preferences(open_settings(str(ini))).presentation = True  # an older version's file
    assert make_window(ini).theme is NORMAL


def test_a_window_closed_on_stage_opens_again_with_its_panels_off_stage(qtbot, make_window,
                                                                     tmp_path):
    ini = tmp_path / "q.ini"
    first = make_window(ini)
    first.show()
    qtbot.waitExposed(first)
    first.set_presentation(True, full_screen=False)
    first.close()  # its layout saved as it was before the stage, not the stage's
    again = make_window(ini)
    again.set_presentation(True, full_screen=False)
    _leave_the_stage_and_see_the_panels(qtbot, again)


def test_keys_step_levels_and_show_shortcuts(qtbot, make_window, synthetic_file):
    window = make_window()
    window.open_recording(synthetic_file)
    window.play_instant()
    window.show()
    window.activateWindow()
    with qtbot.waitActive(window, timeout=5000):
        pass
    table = window.ladder.table
    table.setFocus()
    assert window.ladder.selected_level() == "naive"
    qtbot.keyClick(table, Qt.Key.Key_Right)
    qtbot.keyClick(table, Qt.Key.Key_Right)
    assert window.ladder.selected_level() == "smem_tiled"
    qtbot.keyClick(table, Qt.Key.Key_Left)
    assert window.ladder.selected_level() == "coalesced"
    assert "over <i>naive</i>" in window.ladder.detail.text()
    assert "BLOCK=32" in window.ladder.detail.text()
    assert ("Last result:</b> 2.500 TFLOPS (FP32) at 4096×4096×4096; median"
            in window.ladder.detail.text())
    assert "rel. error 1.00e-07 (tolerance 1e-04); verified" in window.ladder.detail.text()
    field = window.controls.fields["M"]
    field.setFocus()
    qtbot.keyClick(field, Qt.Key.Key_Left)  # a text field keeps its arrow keys
    assert window.ladder.selected_level() == "coalesced"
    qtbot.keyClick(table, Qt.Key.Key_Question)
    assert window.shortcuts_dialog.isVisible()
    assert "F11" in window.shortcuts_dialog.findChildren(QLabel)[0].text()
    window.shortcuts_dialog.close()
    qtbot.keyClick(table, Qt.Key.Key_Space)  # replay: says why it cannot run
    assert "cannot run" in window.statusBar().currentMessage()
    qtbot.keyClick(table, Qt.Key.Key_F11)
    assert window.theme is PRESENTATION and window.isFullScreen()
    qtbot.keyClick(table, Qt.Key.Key_F11)
    assert window.theme is not PRESENTATION and not window.isFullScreen()


def test_exports_png_svg_csv_and_report(qtbot, make_window, synthetic_file, tmp_path):
    from gemmscope.app.window.exports import REPORT_CHART_SIZE

    window = make_window()
    window.resize(1200, 800)
    window.open_recording(synthetic_file)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    bars = window.charts()["bars"]
    png = window.export_chart(bars, tmp_path / "bars.png")
    image = QImage(str(png))
    assert (image.width(), image.height()) == REPORT_CHART_SIZE  # whatever the window's
    svg = window.export_chart(bars, tmp_path / "bars.svg").read_text()
    assert svg.startswith("<?xml") and "<svg" in svg
    csv_text = window.export_csv(tmp_path / "r.csv").read_text()  # the ladder shown
    assert csv_text.count("\n") == 1 + len(syn.LADDER_TFLOPS) + len(syn.REFERENCE_TFLOPS)
    every = window.export_csv(tmp_path / "all.csv", every=True).read_text()
    assert every.count("\n") == 1 + len(read_session(synthetic_file).results)
    md = window.export_report(tmp_path / "ladder.md").read_text()
    assert "| wmma | FP16 | 4096×4096×4096 | 300.0 |" in md
    assert "| ⚠ SwPowerCap | verified |" in md  # throttled (synthetic cap)
    for name in ("bars", "stream", "sweep"):
        assert (tmp_path / f"ladder-{name}.png").stat().st_size > 1000
        assert f"ladder-{name}.png" in md


def test_live_window_records_and_reports_a_runner_crash(qtbot, make_window, tmp_path,
                                                       fake_runner):
    window = make_window()
    cmd = [sys.executable, str(fake_runner), "--mode", "crash", "--state",
           str(tmp_path / "state")]
    path = window.start_live("Fake GPU", cmd, tmp_path / "live.jsonl")
    assert window.mode_text().startswith("live — Fake GPU — runner: ")
    assert "fake_runner.py --mode crash" in window.mode_text()  # the status bar names it
    assert f"recording this session to {path}" in window.messages.texts()[-1]
    window.controls.set_values(Shape(64, 64, 64), 3)
    with qtbot.waitSignal(window.live.idle, timeout=20_000):
        window.run_ladder()
    window.flush_views()
    texts = [window.messages.item(i).text() for i in range(window.messages.count())]
    assert any(t.startswith("⚠ runner_crash (naive at 64×64×64): the runner exited")
               for t in texts)
    assert window.ladder.cell_text("coalesced", "TFLOPS") == "10.00"
    assert window.ladder.cell_text("naive", "TFLOPS") == "–"
    assert window.run_label.text() == ""  # nothing running, nothing queued
    events = syn.file_events(path)
    assert sum(1 for e in events if e["type"] == "result") == len(
        window.store.ladder_levels()) - 1
    window.ladder.select_level("wmma")
    window.show()
    window.activateWindow()
    with qtbot.waitActive(window, timeout=5000):
        pass
    with qtbot.waitSignal(window.live.idle, timeout=20_000):
        qtbot.keyClick(window.ladder.table, Qt.Key.Key_Space)
    assert window.store.latest("wmma").shape.M == 64
    assert window.ladder.selected_level() == "wmma"
    before = len(window.store.results)
    with qtbot.waitSignal(window.live.idle, timeout=20_000):
        qtbot.keyClick(window.ladder.table, Qt.Key.Key_L)
    assert len(window.store.results) == before + len(window.store.ladder_levels())


def test_a_new_reference_result_refills_a_row_whose_own_result_is_unchanged(make_window):
    """The ladder table skips rows whose results did not change; a row's % of cuBLAS
    depends on the reference result too, so a new cuBLAS run refills it."""
    window = make_window()
    events = syn.events()
    window.handle(of(events[0]))
    ref, level = (next(e for e in events if e["type"] == "result" and e["level"] == lid)
                  for lid in ("cublas_fp32", "coalesced"))
    # a result without the runner's own comparison: the row compares it with the store's
    level = dict(level, pct_of_reference=None, reference=None, reference_tflops=None)
    window.handle(of(level))
    window.flush_views()
    assert window.ladder.cell_text("coalesced", "% of cuBLAS") == "–"
    window.handle(of(dict(ref, t=level["t"] + 1, tflops=4 * level["tflops"])))
    window.flush_views()
    assert window.ladder.cell_text("coalesced", "% of cuBLAS") == "25.0%"
    window.handle(of(dict(ref, t=level["t"] + 2, tflops=2 * level["tflops"])))
    window.flush_views()
    assert window.ladder.cell_text("coalesced", "% of cuBLAS") == "50.0%"

"""File ▸ Previous results as baseline, in the window: a recording that ``record --update``
continued gets its older results as the baseline (the ladder's baseline column shows);
one with no run measured again says so in the status bar and sets none."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from gemmscope.app.core.baseline_run import PREVIOUS
from gemmscope.app.widgets.ladder_panel import COLUMNS
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.results.rows import Column

ACTION = "&Previous results as baseline"
HEADER = {"type": "session", "t": 0.0, "protocol": protocol.PROTOCOL_VERSION,
          "created": "2026-12-02T00:00:00+00:00", "levels": {},
          "device": {"name": "Test GPU", "arch": "sm_90", "sm_count": 132}}


def result(t: float, tflops: float) -> dict:
    return {"type": "result", "t": t, "level": "naive", "M": 4096, "N": 4096, "K": 4096,
            "dtype": "fp32", "precision": "fp32", "median_ms": 1.0, "tflops": tflops,
            "verified": True, "rel_err": 1e-7, "repeats": 5}


def _window(qtbot, make_window, path):
    window = make_window()
    assert window.open_recording(str(path))
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    return window


def _trigger(window) -> None:
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    next(a for a in file_menu.actions() if a.text() == ACTION).trigger()
    for _ in range(3):
        QApplication.processEvents()
    window.flush_views()
    QApplication.processEvents()


def test_previous_results_become_the_baseline_of_a_recording_measured_again(
        qtbot, make_window, tmp_path):
    path = tmp_path / "updated.jsonl"
    path.write_text("".join(protocol.dumps(e) + "\n" for e in
                            [HEADER, result(1.0, 1.0), {**HEADER, "t": 0.5}, result(1.0, 1.2)]))
    window = _window(qtbot, make_window, path)
    _trigger(window)
    assert window.store.baseline is not None and window.store.baseline.path == PREVIOUS
    assert "previous result of 1 run measured again" in window.statusBar().currentMessage()
    table = window.ladder.table
    assert not table.isColumnHidden(COLUMNS.index(Column.BASELINE))


def test_no_previous_results_leave_the_baseline_unset_and_say_why(qtbot, make_window,
                                                                  tmp_path):
    path = tmp_path / "once.jsonl"
    path.write_text("".join(protocol.dumps(e) + "\n" for e in [HEADER, result(1.0, 1.0)]))
    window = _window(qtbot, make_window, path)
    _trigger(window)
    assert window.store.baseline is None
    assert "no previous results" in window.statusBar().currentMessage()

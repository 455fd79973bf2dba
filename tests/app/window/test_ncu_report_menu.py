"""File ▸ Open Nsight Compute report…: without the ncu extra the menu item names the package
to install; with it (the module's stand-in, tests/support/fake_ncu_report.py) a report's
kernel shows in the Code view with its source, SASS and per-line counters."""

from __future__ import annotations

import sys

import fake_ncu_report as fake
import pytest
from PySide6.QtWidgets import QMenu

from gemmscope.app.core import ncu_report
from gemmscope.app.window import ncu_report_open


def report_action(window):
    file_menu = next(a.menu() for a in window.menuBar().actions()
                     if isinstance(a.menu(), QMenu) and "File" in a.text())
    return next(a for a in file_menu.actions()
                if "Nsight Compute report" in a.text().replace("&", ""))


def test_without_the_package_the_menu_names_it(make_window, monkeypatch):
    monkeypatch.setitem(sys.modules, "ncu_report", None)
    window = make_window()
    action = report_action(window)
    assert "pip install 'gemmscope[ncu]'" in action.text()
    action.trigger()  # no dialog: the status bar says what to install
    assert window.statusBar().currentMessage() == ncu_report.MISSING


@pytest.fixture
def opened(make_window, monkeypatch, tmp_path, qtbot):
    fake.install(monkeypatch)
    window = make_window()
    assert "pip install" not in report_action(window).text()
    path = fake.write_report(tmp_path / "mine.ncu-rep",
                             [fake.h200_kernel(), fake.h200_kernel()])
    window.show()
    reading = ncu_report_open.open_report(window, str(path), module="fake_ncu_report")
    assert reading is not None and "reading mine.ncu-rep" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: reading.finished, timeout=30000)  # the child, then the GUI thread
    assert reading.error is None
    code = window.views["code"]
    qtbot.waitExposed(code)
    window.flush_views()
    return window, code


def test_a_reports_kernel_shows_in_the_code_view(opened):
    window, code = opened
    assert window.tabs.currentWidget() is code
    assert code.level_id == "mine.ncu-rep #1"
    assert code.report_box.isVisible() and code.report_box.count() == 2
    name = fake.h200_kernel()["name"]
    assert name in code.notice.text()
    assert "grid 8×8×1" in code.notice.text()
    assert code.heat is not None and code.heat.reason is None
    assert "from the Nsight Compute report" in code.heat.summary
    assert code.source_path == "register_2d.cu"
    assert code.source.toPlainText() == (fake.places.REPO / fake.CU).read_text()
    assert window.store.report.kernels[0].kernel.main_loop is not None
    # a line of the shown SASS (the main loop, found from the report's branches)
    line = next(w[1] for ln in code.sass.lines for w in ln.where if w[0] == code.source_path)
    assert code.select_source_line(line)  # its SASS lines are selected


def test_choosing_the_second_kernel_shows_it(opened, qtbot):
    window, code = opened
    code.report_box.setCurrentIndex(1)
    code.report_box.activated.emit(1)
    window.flush_views()
    assert code.level_id == "mine.ncu-rep #2" and "mine.ncu-rep #2" in code.notice.text()


def test_a_file_it_cannot_read_is_said_in_the_status_bar(make_window, tmp_path, qtbot):
    window = make_window()
    bad = tmp_path / "bad.ncu-rep"
    bad.write_text("not a report")
    reading = ncu_report_open.open_report(window, str(bad), module="fake_ncu_report")
    qtbot.waitUntil(lambda: reading.finished, timeout=30000)
    assert "holds no profiled kernel" in reading.error
    assert "holds no profiled kernel" in window.statusBar().currentMessage()
    assert window.store.report is None


def test_a_reader_that_crashes_leaves_the_window_working(make_window, tmp_path, qtbot):
    window = make_window()
    crash = fake.write_hostile(tmp_path / "crash.ncu-rep", fake.CRASH)
    reading = ncu_report_open.open_report(window, str(crash), module="fake_ncu_report")
    assert ncu_report_open.open_report(window, str(crash), module="fake_ncu_report") is None
    assert "one report at a time" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: reading.finished, timeout=30000)
    assert "crashed" in window.statusBar().currentMessage() and window.store.report is None
    window.tabs.setCurrentIndex(0)  # the window still answers
    assert window.tabs.currentIndex() == 0

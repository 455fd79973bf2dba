"""File ▸ Open Nsight Compute report…: a user's ``.ncu-rep`` read through NVIDIA's
ncu_report module (app/core/ncu_report.py) in a child process (a crash or a hang of the
native reader ends only the child), its kernels shown in the Code view and on the
roofline. Without the module the menu item names the package to install."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QStatusBar, QTabWidget, QWidget

from ..core import ncu_extra
from ..core.store import SessionStore
from ..views.base import View

if TYPE_CHECKING:  # (the report's reader is loaded when a report opens)
    from ..core.ncu_report import Report

STATUS_MS = 20000
TITLE = "Open Nsight &Compute report…"


def menu_text() -> str:
    """The menu item's text: what it needs where it cannot open a report here."""
    if ncu_extra.missing() is None:
        return TITLE
    return f"{TITLE} (needs {ncu_extra.INSTALL})"


class ReportHost(Protocol):
    """What a report needs of the main window (the window is one)."""

    ncu_reading: Reading | None  # the report being read, or the last one read

    @property
    def store(self) -> SessionStore: ...
    @property
    def views(self) -> Mapping[str, View]: ...
    @property
    def tabs(self) -> QTabWidget: ...
    def statusBar(self) -> QStatusBar: ...
    def dialog_parent(self) -> QWidget: ...
    def flush_views(self) -> None: ...


def add_action(window: ReportHost, menu: QMenu) -> QAction:
    action = menu.addAction(menu_text())
    if ncu_extra.missing() is not None:
        action.setToolTip(ncu_extra.MISSING)
        action.setStatusTip(ncu_extra.MISSING)
    action.triggered.connect(lambda: open_report_dialog(window))
    return action


def open_report_dialog(window: ReportHost) -> None:
    why = ncu_extra.missing()
    if why is not None:
        window.statusBar().showMessage(why, STATUS_MS)
        return
    path, _ = QFileDialog.getOpenFileName(
        window.dialog_parent(), "Open Nsight Compute report", "",
        "Nsight Compute reports (*.ncu-rep *.ncu-repz);;All files (*)")
    if path:
        open_report(window, path)


class Reading(QObject):
    """One report being read: the reader runs in a child process (app/core/
    ncu_report_process.py), waited for on a thread, so the window stays live; ``done``
    comes back on the GUI thread with the report or why not."""

    done = Signal(object, str)  # the Report, or None and why

    def __init__(self, path: str, module: str):
        super().__init__()
        self.path, self.module = path, module
        self.error: str | None = None
        self.finished = False

    def start(self) -> None:
        threading.Thread(target=self._read, name="gemmscope-ncu-report", daemon=True).start()

    def _read(self) -> None:
        from ..core import ncu_report_process  # (the GPU side's readers: loaded when needed)

        try:
            report = ncu_report_process.read_report(self.path, module=self.module)
        except ncu_report_process.ReportError as exc:
            self.done.emit(None, str(exc))
        except Exception as exc:  # a defect of the reader: said, never a crash of the app
            self.done.emit(None, f"the report could not be read ({type(exc).__name__}: "
                                 f"{str(exc)[:200]})")
        else:
            self.done.emit(report, "")


def open_report(window: ReportHost, path: str, *, module: str = ncu_extra.MODULE) -> Reading | None:
    """Start reading the report (its first kernel is then shown in the Code view); the
    reading, or None where one is already under way."""
    busy = window.ncu_reading
    if busy is not None and not busy.finished:
        window.statusBar().showMessage(f"still reading {Path(busy.path).name}; one report "
                                       "at a time", STATUS_MS)
        return None
    reading = Reading(path, module)
    window.ncu_reading = reading
    reading.done.connect(lambda report, why: _read(window, reading, report, why))
    window.statusBar().showMessage(f"reading {Path(path).name} (Nsight Compute's reader "
                                   "runs in its own process)…", STATUS_MS)
    reading.start()
    return reading


def _read(window: ReportHost, reading: Reading, report: Report | None, why: str) -> None:
    reading.finished = True
    if report is None:
        reading.error = why
        window.statusBar().showMessage(f"report not opened: {why}", STATUS_MS)
        return
    window.store.set_report(report)
    first = report.kernels[0].key
    code = window.views["code"]  # made now where it was not yet
    code.set_level(first)
    assert isinstance(code, QWidget)
    window.tabs.setCurrentWidget(code)
    said = f"{len(report.kernels)} kernel(s) of {reading.path} in the Code view"
    if report.left_out:
        said += f" ({report.left_out} more left out)"
    window.statusBar().showMessage(said, STATUS_MS)
    window.flush_views()

"""File ▸ Open Nsight Compute report…: a user's ``.ncu-rep`` read through NVIDIA's
ncu_report module (app/core/ncu_report.py), its kernels shown in the Code view and on the
roofline. Without the module the menu item names the package to install."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QFileDialog

from ..core import ncu_extra

STATUS_MS = 20000
TITLE = "Open Nsight &Compute report…"


def menu_text() -> str:
    """The menu item's text: what it needs where it cannot open a report here."""
    if ncu_extra.missing() is None:
        return TITLE
    return f"{TITLE} (needs {ncu_extra.INSTALL})"


def add_action(window: Any, menu: Any) -> QAction:
    action = menu.addAction(menu_text())
    if ncu_extra.missing() is not None:
        action.setToolTip(ncu_extra.MISSING)
        action.setStatusTip(ncu_extra.MISSING)
    action.triggered.connect(lambda: open_report_dialog(window))
    return action


def open_report_dialog(window: Any) -> None:
    why = ncu_extra.missing()
    if why is not None:
        window.statusBar().showMessage(why, STATUS_MS)
        return
    path, _ = QFileDialog.getOpenFileName(
        window.dialog_parent(), "Open Nsight Compute report", "",
        "Nsight Compute reports (*.ncu-rep *.ncu-repz);;All files (*)")
    if path:
        open_report(window, path)


def open_report(window: Any, path: str) -> str | None:
    """Read the report, show its first kernel in the Code view; why not, or None."""
    from ..core import ncu_report  # (the GPU side's readers: loaded when first needed)

    QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        report = ncu_report.read_report(path)
    except ncu_report.ReportError as exc:
        window.statusBar().showMessage(f"report not opened: {exc}", STATUS_MS)
        return str(exc)
    finally:
        QGuiApplication.restoreOverrideCursor()
    window.store.set_report(report)
    first = report.kernels[0].key
    code = window.views["code"]  # made now where it was not yet
    code.set_level(first)
    window.tabs.setCurrentWidget(code)
    said = f"{len(report.kernels)} kernel(s) of {path} in the Code view"
    if report.left_out:
        said += f" ({report.left_out} more left out)"
    window.statusBar().showMessage(said, STATUS_MS)
    window.flush_views()
    return None

"""The main window's menus, keyboard shortcuts and file dialogs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import pyqtgraph as pg
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu, QMenuBar, QStatusBar, QWidget

from .baseline import BaselineHost, open_baseline_dialog, previous_as_baseline
from .export_targets import ANIMATION_TARGETS, CHART_TARGETS, ExportError
from .kernel_docks import KernelOpener, open_kernel_dialog
from .keys import sheet_rows
from .ncu_report_open import ReportHost
from .ncu_report_open import add_action as add_report_action


class Commands(BaselineHost, ReportHost, KernelOpener, Protocol):
    """The window's public methods the menus and keys call (the window is one), with
    what the File menu's baseline, report and kernel items need of it."""

    def menuBar(self) -> QMenuBar: ...
    def statusBar(self) -> QStatusBar: ...
    def close(self) -> bool: ...
    def open_recording(self, path: str | Path, note: str = "", background: bool = False
                       ) -> bool: ...
    def tune_selected(self) -> None: ...
    def toggle_presentation(self) -> None: ...
    def show_shortcuts(self) -> None: ...
    def panel_actions(self) -> list[QAction]: ...
    @property
    def per_clock_action(self) -> QAction: ...
    def step_level(self, offset: int) -> None: ...
    def run_selected(self) -> None: ...
    def run_ladder(self) -> None: ...
    def escape(self) -> None: ...
    def toggle_replay(self) -> None: ...
    def flush_views(self) -> None: ...
    def charts(self) -> dict[str, pg.PlotWidget]: ...
    def dialog_parent(self) -> QWidget: ...
    def runner_command(self) -> str: ...
    def set_runner_command(self, text: str) -> str: ...
    def export_chart(self, chart: pg.PlotWidget, path: str | Path,
                     size: tuple[int, int] | None = None, scale: float = 1.0) -> Path: ...
    def export_named(self, path: str | Path, chart: str | None = None, scale: float = 1.0,
                     frames: int | None = None, size: tuple[int, int] | None = None
                     ) -> Path: ...
    def export_csv(self, path: str | Path, every: bool = False) -> Path: ...
    def export_report(self, path: str | Path) -> Path: ...


def _action(menu: QMenu, text: str, slot: Callable[..., object],
            key: QKeySequence | QKeySequence.StandardKey | None = None) -> QAction:
    action = menu.addAction(text)
    action.triggered.connect(slot)
    if key is not None:
        action.setShortcut(key)
    return action


def install_menus(window: Commands) -> None:
    file_menu = window.menuBar().addMenu("&File")
    _action(file_menu, "&Open recording…", lambda: open_dialog(window),
            QKeySequence.StandardKey.Open)
    _action(file_menu, "Open &kernel…", lambda: open_kernel_dialog(window))
    _action(file_menu, "Open &baseline…", lambda: open_baseline_dialog(window))
    _action(file_menu, "&Previous results as baseline",
            lambda: previous_as_baseline(window))
    add_report_action(window, file_menu)
    _action(file_menu, "&Tune the selected level…", window.tune_selected)
    _action(file_menu, "Live &runner…", lambda: runner_dialog(window))
    file_menu.addSeparator()
    # which chart is named here, never taken from where the mouse was
    charts = file_menu.addMenu("Export c&hart")
    for target in CHART_TARGETS:
        _action(charts, f"{target.title}…",
                lambda _=False, name=target.name: export_chart_dialog(window, name))
    animations = file_menu.addMenu("Export &animation")
    for target in ANIMATION_TARGETS:
        _action(animations, f"{target.title}…",
                lambda _=False, name=target.name: export_animation_dialog(window, name))
    _action(file_menu, "Export the ladder shown as CS&V…", lambda: export_csv_dialog(window))
    _action(file_menu, "Export &every result as CSV…",
            lambda: export_csv_dialog(window, every=True))
    _action(file_menu, "Export ladder report (&Markdown)…", lambda: export_report_dialog(window))
    file_menu.addSeparator()
    _action(file_menu, "&Quit", window.close, QKeySequence.StandardKey.Quit)
    view_menu = window.menuBar().addMenu("&View")
    _action(view_menu, "&Presentation mode", window.toggle_presentation)
    view_menu.addAction(window.per_clock_action)  # checkable: the view state's per_clock
    panels = view_menu.addMenu("P&anels")
    for action in window.panel_actions():  # a closed panel comes back from here
        panels.addAction(action)
    keys = view_menu.addMenu("&Shortcuts")
    for key, what in sheet_rows():
        keys.addAction(f"{key}\t{what}").setEnabled(False)
    _action(view_menu, "&Keyboard shortcuts…", window.show_shortcuts)


# the save dialog's choices: (filter, scale); a PNG at 2x for slides
PICTURE_FILTERS = (("PNG (*.png)", 1.0), ("PNG at 2x, for slides (*.png)", 2.0),
                   ("PNG at 3x (*.png)", 3.0), ("SVG (*.svg)", 1.0))
ANIMATION_FILTERS = ("GIF (*.gif)", "WebP (*.webp)", "MP4, where imageio-ffmpeg is installed "
                     "(*.mp4)")


def _suffixed(path: str, chosen: str) -> str:
    """The path with the chosen filter's suffix where it has none."""
    suffix = chosen[chosen.rindex("*.") + 1:chosen.rindex(")")]
    return path if Path(path).suffix else path + suffix


def _export(window: Commands, title: str, default: str, filters: list[str],
            write: Callable[[str, str], object]) -> None:
    """Ask where to save (and as what); write there; say so, or why not, in the status bar."""
    path, chosen = QFileDialog.getSaveFileName(window.dialog_parent(), title, default,
                                               ";;".join(filters))
    if not path:
        return
    path = _suffixed(path, chosen or filters[0])
    try:
        write(path, chosen)
    except (ExportError, OSError) as exc:
        window.statusBar().showMessage(f"not exported: {exc}", 10000)
        return
    window.statusBar().showMessage(f"saved {path}", 5000)


def export_chart_dialog(window: Commands, name: str) -> None:
    scales = dict(PICTURE_FILTERS)
    _export(window, "Export chart", f"{name}.png", list(scales),
            lambda path, chosen: window.export_named(path, name, scale=scales.get(chosen, 1.0)))


def export_animation_dialog(window: Commands, name: str) -> None:
    """Every step of the view's animation (at its level and options now), 2 frames/s."""
    _export(window, "Export animation", f"{name}.gif", list(ANIMATION_FILTERS),
            lambda path, _chosen: window.export_named(path, name))


def _save_as(window: Commands, title: str, default: str, kinds: str,
             write: Callable[[str], object]) -> None:
    """Ask where to save; write there; say so in the status bar."""
    path, _ = QFileDialog.getSaveFileName(window.dialog_parent(), title, default, kinds)
    if path:
        write(path)
        window.statusBar().showMessage(f"saved {path}", 5000)


def export_csv_dialog(window: Commands, every: bool = False) -> None:
    """The ladder shown (shape, mode, GPU of the view state), or every result."""
    _save_as(window, "Export results", "results.csv" if every else "ladder.csv",
             "CSV (*.csv)", lambda path: window.export_csv(path, every=every))


def export_report_dialog(window: Commands) -> None:
    _save_as(window, "Export report", "ladder.md", "Markdown (*.md)", window.export_report)


def open_dialog(window: Commands) -> None:
    path, _ = QFileDialog.getOpenFileName(window.dialog_parent(), "Open recording", "",
                                          "Sessions (*.jsonl *.jsonl.gz);;All files (*)")
    if path:
        window.open_recording(path, background=True)


def runner_dialog(window: Commands) -> None:
    """Set the live runner's command (kept in the preferences) and start it; empty: this
    installation's own runner, from the next start."""
    text, ok = QInputDialog.getText(
        window.dialog_parent(), "Live runner",
        "Command that starts a runner (JSON lines on stdin/stdout), "
        "e.g. `gemmscope runner` or `ssh -T gpu-box gemmscope runner`; kept in the "
        "preferences, and started at launch from now on:",
        text=window.runner_command())
    if ok:
        window.statusBar().showMessage(window.set_runner_command(text), 8000)

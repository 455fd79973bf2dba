"""The main window's menus, keyboard shortcuts and file dialogs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog, QInputDialog

from gemmscope.app import export_actions
from gemmscope.app.charts import HoverReadout
from gemmscope.app.core.runner_command import plan_live

if TYPE_CHECKING:
    from gemmscope.app.main_window import MainWindow


def _action(menu: Any, text: str, slot: Any, key: Any = None) -> QAction:
    action = menu.addAction(text)
    action.triggered.connect(slot)
    if key is not None:
        action.setShortcut(key)
    return action


def install_menus(window: MainWindow) -> None:
    file_menu = window.menuBar().addMenu("&File")
    _action(file_menu, "&Open recording…", lambda: open_dialog(window),
            QKeySequence.StandardKey.Open)
    _action(file_menu, "Live &runner…", lambda: runner_dialog(window))
    file_menu.addSeparator()
    # "chart": the one the mouse was last over, else the ladder bars
    _action(file_menu, "Export chart as &PNG…", lambda: export_chart_dialog(window, "png"))
    _action(file_menu, "Export chart as &SVG…", lambda: export_chart_dialog(window, "svg"))
    _action(file_menu, "Export results as &CSV…", lambda: export_csv_dialog(window))
    _action(file_menu, "Export ladder &report (Markdown)…", lambda: export_report_dialog(window))
    file_menu.addSeparator()
    _action(file_menu, "&Quit", window.close, QKeySequence.StandardKey.Quit)
    view_menu = window.menuBar().addMenu("&View")
    _action(view_menu, "&Presentation mode", window.toggle_presentation)
    _action(view_menu, "&Keyboard shortcuts", window.show_shortcuts)


def install_shortcuts(window: MainWindow) -> dict[str, QShortcut]:
    """The presentation keys (see presentation.SHORTCUTS), active anywhere in the window
    except where a text field wants the key (arrows in M, N, K)."""
    keys = {"F11": window.toggle_presentation, "Left": lambda: window.ladder.step(-1),
            "Right": lambda: window.ladder.step(1), "Space": window.run_selected,
            "L": window.run_ladder, "?": window.show_shortcuts,
            "Shift+/": window.show_shortcuts, "Esc": window.escape,
            "P": window.replay_bar.toggle}
    shortcuts = {}
    for key, slot in keys.items():
        sc = QShortcut(QKeySequence(key), window)
        sc.setContext(Qt.ShortcutContext.WindowShortcut)
        sc.activated.connect(slot)
        shortcuts[key] = sc
    return shortcuts


def current_chart(window: MainWindow) -> Any:
    """The chart the mouse was last over, else the ladder bars."""
    charts = window.charts()
    pointed = HoverReadout.last_pointed
    if pointed is not None and pointed in charts.values():
        return pointed
    return charts.get("bars") if charts else None


def export_chart_dialog(window: MainWindow, kind: str) -> None:
    chart = current_chart(window)
    if chart is None:
        return
    name = next((k for k, v in window.charts().items() if v is chart), "chart")
    path, _ = QFileDialog.getSaveFileName(window, "Export chart", f"{name}.{kind}",
                                          f"{kind.upper()} (*.{kind})")
    if path:
        window.flush_views()
        export_actions.export_chart(chart, path)
        window.statusBar().showMessage(f"saved {path}", 5000)


def export_csv_dialog(window: MainWindow) -> None:
    path, _ = QFileDialog.getSaveFileName(window, "Export results", "results.csv",
                                          "CSV (*.csv)")
    if path:
        export_actions.export_csv(window.store, path)
        window.statusBar().showMessage(f"saved {path}", 5000)


def export_report_dialog(window: MainWindow) -> None:
    path, _ = QFileDialog.getSaveFileName(window, "Export report", "ladder.md",
                                          "Markdown (*.md)")
    if path:
        window.flush_views()
        export_actions.export_report(window.store, path, window.charts(), window.source)
        window.statusBar().showMessage(f"saved {path}", 5000)


def open_dialog(window: MainWindow) -> None:
    path, _ = QFileDialog.getOpenFileName(window, "Open recording", "",
                                          "Sessions (*.jsonl);;All files (*)")
    if path:
        window.open_recording(path, background=True)


def runner_dialog(window: MainWindow) -> None:
    """Set the live runner's command (kept in the preferences) and start it; empty: this
    installation's own runner, from the next start."""
    text, ok = QInputDialog.getText(
        window, "Live runner", "Command that starts a runner (JSON lines on stdin/stdout), "
        "e.g. `gemmscope runner` or `ssh -T gpu-box gemmscope runner`:",
        text=window.prefs.runner_command)
    if not ok:
        return
    window.prefs.runner_command = text
    if not text.strip():
        window.statusBar().showMessage("runner command cleared: the next start uses this "
                                       "installation's runner where it has a GPU", 8000)
        return
    plan = plan_live(None, window.prefs.runner_command)
    if plan.command:
        window.start_live(plan.label, plan.command)
    else:
        window.statusBar().showMessage(f"runner command kept, not started: {plan.reason}", 8000)

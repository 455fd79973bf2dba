"""The live runner's command: asking the user, once, whether to start the one a
preferences file names (app/core/runner_command.py says why a file's command is never
started unasked), and keeping the one typed in File ▸ Live runner…."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from ...kernels.protocol import CommandRefused, split_command
from ..core.runner_command import confirm, plan_live
from .preferences import Preferences

# platforms with no one in front of them: nothing is asked, nothing unconfirmed starts
NO_ONE_TO_ASK = frozenset({"offscreen", "minimal", "vnc"})


def can_ask() -> bool:
    """Whether a person can answer a question (not offscreen, a picture or a test)."""
    return QGuiApplication.platformName() not in NO_ONE_TO_ASK


def ask_to_start(parent: QWidget, settings: Path, command: str) -> bool:
    """A question naming the preferences file and its command, as plain text (never
    markup); True where the user chose to start it."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Start the live runner?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(f"The preferences file\n\n{settings}\n\nnames this command to start a live "
                f"runner:\n\n{command}\n\nStart it? A preferences file can come from "
                "someone else: start it only if you know this command. Your answer is "
                "kept for this file and this command.")
    start = box.addButton("Start it", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Don't start", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(QMessageBox.StandardButton.NoButton)
    box.exec()
    return box.clickedButton() is start


def keep_runner_command(prefs: Preferences, text: str,
                        start: Callable[[str, list[str]], object],
                        note: Callable[[str, bool], None]) -> str:
    """Keep a live runner command typed by the user and ``start`` it (its label and
    argv); says what happened, for the status bar."""
    try:  # a line no shell could split is not kept: it would be refused at every start
        split_command(text)
    except CommandRefused as exc:
        return f"runner command not kept: {exc}"
    prefs.runner_command = text
    if not text.strip():
        return ("runner command cleared: the next start uses this installation's runner "
                "where it has a GPU")
    # typed or accepted here: the user's own word, kept as such
    why = confirm(prefs.settings.path, prefs.runner_command)
    if why is not None:
        note(why, False)
    plan = plan_live(None, prefs.runner_command)
    if not plan.command:
        return f"runner command kept, not started: {plan.reason}"
    start(plan.label, plan.command)
    return f"live with runner `{text}`"

"""Asking the user, once, whether to start the runner command a preferences file names
(app/core/runner_command.py says why a file's command is never started unasked)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox, QWidget

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

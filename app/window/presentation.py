"""Presentation mode (full screen, large fonts, high contrast) and the shortcut sheet."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

SHORTCUTS = (
    ("F11", "presentation mode: full screen, large fonts, high contrast"),
    ("← / →", "previous / next level"),
    ("Space", "run the selected level"),
    ("L", "run the ladder"),
    ("Esc", "stop the runs"),
    ("P", "play / pause the replay"),
    ("?", "this list of shortcuts"),
)


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = "".join(f"<tr><td><b>{key}</b>&nbsp;&nbsp;</td><td>{what}</td></tr>"
                       for key, what in SHORTCUTS)
        label = QLabel(f"<table>{rows}</table>")
        layout = QVBoxLayout(self)
        layout.addWidget(label)

"""Run controls: M, N, K, repeats; Run level, Run ladder, Sweep sizes, Stop.

A field that holds a value the runner would refuse is marked and says why; the run
buttons stay off until every field is good.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core.runs import parse_dim, parse_repeats
from ..theme import FAILED_COLOR

BAD_STYLE = f"QLineEdit {{ border: 2px solid {FAILED_COLOR}; }}"


class RunControls(QWidget):
    run_level = Signal()
    run_ladder = Signal()
    sweep = Signal()
    stop = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.fields: dict[str, QLineEdit] = {}
        self.parsers: dict[str, Callable[[str], tuple[int | None, str]]] = {
            "M": lambda s: parse_dim("M", s), "N": lambda s: parse_dim("N", s),
            "K": lambda s: parse_dim("K", s), "repeats": parse_repeats}
        form = QFormLayout()
        for name, default in (("M", "4096"), ("N", "4096"), ("K", "4096"), ("repeats", "20")):
            edit = QLineEdit(default)
            edit.setObjectName(f"field_{name}")
            edit.textChanged.connect(self._validate)
            self.fields[name] = edit
            form.addRow(name, edit)
        self.reason = QLabel("")
        self.reason.setStyleSheet(f"color: {FAILED_COLOR};")
        self.reason.setWordWrap(True)
        self.buttons = {
            "run_level": QPushButton("Run level"), "run_ladder": QPushButton("Run ladder"),
            "sweep": QPushButton("Sweep sizes"), "stop": QPushButton("Stop")}
        self.tips = {"run_level": "Run the selected level (Space)",
                     "run_ladder": "Run every level at M×N×K (L)",
                     "sweep": "Run the selected level at square sizes 256…8192",
                     "stop": "Drop the queue and end the run in flight"}
        self.buttons["run_level"].clicked.connect(self.run_level)
        self.buttons["run_ladder"].clicked.connect(self.run_ladder)
        self.buttons["sweep"].clicked.connect(self.sweep)
        self.buttons["stop"].clicked.connect(self.stop)
        row = QHBoxLayout()
        for button in self.buttons.values():
            row.addWidget(button)
        self.unavailable = ""  # why runs are off (replay without a GPU), or ""
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.reason)
        layout.addLayout(row)
        layout.addStretch(1)
        self._validate()

    def set_values(self, M: int, N: int, K: int, repeats: int) -> None:
        for name, value in (("M", M), ("N", N), ("K", K), ("repeats", repeats)):
            self.fields[name].setText(str(value))

    def set_unavailable(self, reason: str) -> None:
        """Turn the run buttons off with a reason ("" turns them back on)."""
        self.unavailable = reason
        self._validate()

    def problems(self) -> dict[str, str]:
        out = {}
        for name, edit in self.fields.items():
            _, why = self.parsers[name](edit.text())
            if why:
                out[name] = why
        return out

    def values(self) -> tuple[int, int, int, int] | None:
        """(M, N, K, repeats), or None while a field is refused."""
        parsed = [self.parsers[n](self.fields[n].text())[0] for n in ("M", "N", "K", "repeats")]
        if any(v is None for v in parsed):
            return None
        M, N, K, repeats = parsed
        assert M is not None and N is not None and K is not None and repeats is not None
        return M, N, K, repeats

    def _validate(self) -> None:
        problems = self.problems()
        for name, edit in self.fields.items():
            edit.setStyleSheet(BAD_STYLE if name in problems else "")
            edit.setToolTip(problems.get(name, ""))
        self.reason.setText("; ".join(problems.values()))
        ok = not problems and not self.unavailable
        for key in ("run_level", "run_ladder", "sweep"):
            self.buttons[key].setEnabled(ok)
        for key, button in self.buttons.items():
            button.setToolTip(self.unavailable or self.tips[key])
        self.buttons["stop"].setEnabled(not self.unavailable)

"""Run controls: M, N, K, repeats, the run mode (burst or sustained, with a sustained
run's window, trials and cool-down); Run level, Run ladder, Sweep sizes, Stop.

A field that holds a value the runner would refuse is marked and says why; the run
buttons stay off until every field is good.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGridLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...kernels.ladder import Shape
from ...kernels.protocol import (
    DEFAULT_DISTRIBUTION,
    DEFAULT_REPEATS,
    SUSTAINED_FIELDS,
    Distribution,
    Mode,
    RunMode,
    SustainedConfig,
)
from ..core.runs import RunForm, parse_dim, parse_repeats, parse_sustained, sustained_default
from ..theme import FAILED_COLOR
from .plain import plain_label, plain_tooltip

BAD_STYLE = f"QLineEdit {{ border: 2px solid {FAILED_COLOR}; }}"


class RunControls(QWidget):
    run_level = Signal()
    run_ladder = Signal()
    sweep = Signal()
    stop = Signal()
    form_changed = Signal()  # a field or the mode edited (what a panel beside follows)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.fields: dict[str, QLineEdit] = {}
        self.parsers: dict[str, Callable[[str], tuple[float | int | None, str]]] = {
            "M": lambda s: parse_dim("M", s), "N": lambda s: parse_dim("N", s),
            "K": lambda s: parse_dim("K", s), "repeats": parse_repeats}
        self.parsers.update({name: functools.partial(parse_sustained, name)
                             for name in SUSTAINED_FIELDS})
        form = QFormLayout()
        for name, default in (("M", "4096"), ("N", "4096"), ("K", "4096"),
                              ("repeats", str(DEFAULT_REPEATS))):
            self._add_field(form, name, name, default)
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("field_mode")
        self.mode_box.addItems(list(Mode))  # burst, sustained
        self.mode_box.setToolTip("burst: flushed, spaced repeats at the top clock; "
                                 "sustained: back to back for a window, in trials with a "
                                 "cool-down before each (docs/energy.md)")
        self.mode_box.currentTextChanged.connect(self._mode_changed)
        form.addRow("M&ode", self.mode_box)  # Alt+O
        for name, label in (("window_s", "&window (s)"), ("trials", "&trials"),
                            ("cooldown_s", "&cool-down (s)")):
            self._add_field(form, name, label, sustained_default(name))
        self.operands_box = QComboBox()
        self.operands_box.setObjectName("field_operands")
        self.operands_box.addItems(list(Distribution))  # uniform, normal, pm1, zeros
        self.operands_box.setCurrentText(str(DEFAULT_DISTRIBUTION))
        self.operands_box.setToolTip("what A and B are drawn from: uniform on [-1, 1), "
                                     "standard normal, ±1, or zeros (the power the data "
                                     "costs); every result names it")
        # (sized by a length, not by its items: a box sized to its contents kept the
        # stage's width after the stage, and the Run panel's layout with it)
        self.operands_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.operands_box.setMinimumContentsLength(7)
        form.addRow("O&perands", self.operands_box)  # Alt+P
        self.reason = plain_label("")  # a runner's reason or a field's: never markup
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
        row = QGridLayout()  # two by two: the panel stays narrow
        for i, button in enumerate(self.buttons.values()):
            row.addWidget(button, i // 2, i % 2)
        self.unavailable = ""  # why runs are off (replay without a GPU), or ""
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.reason)
        layout.addLayout(row)
        layout.addStretch(1)
        self._mode_changed(self.mode_box.currentText())

    def _add_field(self, form: QFormLayout, name: str, label: str, default: str) -> None:
        edit = QLineEdit(default)
        edit.setObjectName(f"field_{name}")
        edit.textChanged.connect(self._validate)
        self.fields[name] = edit
        form.addRow(label, edit)

    @property
    def mode(self) -> str:
        return self.mode_box.currentText()

    def _mode_changed(self, mode: str) -> None:
        for name in SUSTAINED_FIELDS:  # asked only of sustained runs
            self.fields[name].setEnabled(mode == Mode.SUSTAINED)
        self._validate()

    def _checked(self) -> list[str]:
        """The fields the current mode uses (repeats in both: the form keeps it)."""
        burst = self.mode == Mode.BURST
        return [n for n in self.fields if not (burst and n in SUSTAINED_FIELDS)]

    def run_mode(self) -> RunMode | None:
        """How the form's runs are measured (burst, or sustained with its window, trials
        and cool-down), or None while one of those fields is refused."""
        form, _ = self.read()
        return form.mode if form is not None else None

    def read(self) -> tuple[RunForm | None, dict[str, str]]:
        """The form, each field it uses parsed once: (what it says, {}), or (None, why
        each refused field is refused)."""
        values: dict[str, float | int] = {}
        problems: dict[str, str] = {}
        for name in self._checked():
            value, why = self.parsers[name](self.fields[name].text())
            if why or value is None:
                problems[name] = why
            else:
                values[name] = value
        if problems:
            return None, problems
        mode = RunMode()
        if self.mode == Mode.SUSTAINED:
            mode = RunMode(Mode.SUSTAINED, SustainedConfig(
                float(values["window_s"]), int(values["trials"]), float(values["cooldown_s"])))
        shape = Shape(int(values["M"]), int(values["N"]), int(values["K"]))
        return RunForm(shape, int(values["repeats"]), mode,
                       Distribution(self.operands_box.currentText())), {}

    def set_shape(self, shape: Shape) -> None:
        """The M, N and K fields (the repeats stay as they are)."""
        for name, value in (("M", shape.M), ("N", shape.N), ("K", shape.K)):
            self.fields[name].setText(str(value))

    def set_values(self, shape: Shape, repeats: int) -> None:
        """The shape and repeats fields."""
        self.set_shape(shape)
        self.fields["repeats"].setText(str(repeats))

    def set_unavailable(self, reason: str) -> None:
        """Turn the run buttons off with a reason ("" turns them back on)."""
        self.unavailable = reason
        self._validate()

    def problems(self) -> dict[str, str]:
        return self.read()[1]

    def _validate(self) -> None:
        problems = self.problems()
        for name, edit in self.fields.items():
            edit.setStyleSheet(BAD_STYLE if name in problems else "")
            edit.setToolTip(plain_tooltip(problems.get(name, "")))
        self.reason.setText("; ".join(problems.values()))
        ok = not problems and not self.unavailable
        for key in ("run_level", "run_ladder", "sweep"):
            self.buttons[key].setEnabled(ok)
        for key, button in self.buttons.items():
            button.setToolTip(plain_tooltip(self.unavailable or self.tips[key]))
        self.buttons["stop"].setEnabled(not self.unavailable)
        self.form_changed.emit()

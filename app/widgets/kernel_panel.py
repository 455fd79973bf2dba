"""The panel of a user's kernel (File ▸ Open kernel…): its parameters edited in place, the
constraint check of the variant they make shown in words before anything runs, Run
variant, and a sweep of two parameters with its heatmap (clicking a cell selects that
variant here). It asks for runs with ``runs_requested``; the window sends them.

The model is an ``app/core/tunable.TunableKernel`` (no Qt: a user's kernel or a level's
parameters); this widget only edits and draws it. Every text from the spec or the runner
is shown as plain text.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...kernels.ladder import Shape, SpecError
from ...kernels.protocol import DEFAULT_REPEATS
from ...kernels.toolchain import Check, Status
from ..core.runs import RunForm
from ..core.tunable import TunableKernel
from ..theme import FAILED_COLOR, UNKNOWN_COLOR
from .plain import plain_label, plain_tooltip
from .sweep_heatmap import SweepHeatmap

MARK = {Status.OK: "✓", Status.NOTE: "•", Status.FAIL: "✗"}


class KernelPanel(QWidget):
    runs_requested = Signal(list)  # list[RunRequest]

    def __init__(self, kernel: TunableKernel,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kernel = kernel
        self.shape = Shape(4096, 4096, 4096)
        self.repeats = DEFAULT_REPEATS
        # the window's run form as it reads now, or None while it is refused
        self.form_of: Callable[[], RunForm | None] | None = None
        # why runs cannot be sent now ("replay: runs need the live runner"), or ""
        self.unavailable_of: Callable[[], str] | None = None
        kernel.follow(self.shape)  # the editors start from the pick (a level with one)
        layout = QVBoxLayout(self)
        params = kernel.param_specs
        self.title = plain_label(kernel.heading)
        self.title.setWordWrap(True)
        layout.addWidget(self.title)
        form = QFormLayout()
        self.editors: dict[str, QComboBox | QSpinBox] = {}
        for name, p in params.items():
            editor: QComboBox | QSpinBox
            if p.values is not None:
                editor = QComboBox()
                for v in p.values:
                    editor.addItem(str(v), v)
                editor.setCurrentIndex(list(p.values).index(kernel.params[name]))
                editor.currentIndexChanged.connect(lambda _i, n=name: self._edited(n))
            else:
                editor = QSpinBox()
                editor.setRange(p.lo, p.hi)
                editor.setValue(kernel.params[name])
                editor.valueChanged.connect(lambda _v, n=name: self._edited(n))
            if p.doc:
                editor.setToolTip(plain_tooltip(p.doc))
            self.editors[name] = editor
            form.addRow(plain_label(name), editor)
        layout.addLayout(form)
        self.check_lines = plain_label()
        self.check_lines.setWordWrap(True)
        layout.addWidget(self.check_lines)
        self.run_button = QPushButton("Run variant")
        self.run_button.clicked.connect(self.run_variant)
        self.reset_button: QPushButton | None = None
        if kernel.follows_shapes:  # the edits dropped: the plain run's form at the shape
            self.reset_button = QPushButton("Plain run's form")
            self.reset_button.setToolTip("set every parameter to what a plain run of the "
                                         "run form's shape launches (the shape rule's pick)")
            self.reset_button.clicked.connect(self.reset_to_pick)
            row = QHBoxLayout()
            row.addWidget(self.run_button, 1)
            row.addWidget(self.reset_button)
            layout.addLayout(row)
        else:
            layout.addWidget(self.run_button)
        sweep_row = QHBoxLayout()
        self.sweep_x, self.sweep_y = QComboBox(), QComboBox()
        for box in (self.sweep_x, self.sweep_y):
            box.addItems(list(params))
        if len(params) > 1:
            self.sweep_y.setCurrentIndex(1)
        self.sweep_button = QPushButton("Sweep")
        self.sweep_button.clicked.connect(self.run_sweep)
        self.sweep_x.currentIndexChanged.connect(lambda _i: self.refresh_heatmap())
        self.sweep_y.currentIndexChanged.connect(lambda _i: self.refresh_heatmap())
        for w in (plain_label("across"), self.sweep_x, plain_label("down"), self.sweep_y,
                  self.sweep_button):
            sweep_row.addWidget(w)
        layout.addLayout(sweep_row)
        self.heatmap = SweepHeatmap()
        self.heatmap.cell_clicked.connect(self.select_variant)
        layout.addWidget(self.heatmap, 1)
        self.status = plain_label()
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.update_check()

    # ------------------------------------------------------------------ model
    def set_shape(self, shape: Shape, repeats: int) -> None:
        """The run form's shape: the values not edited follow its pick (a level that
        picks per shape)."""
        self.shape, self.repeats = shape, repeats
        self._show(self.kernel.follow(shape))
        self.update_check()

    def set_sm_count(self, sm_count: int) -> None:
        """The GPU shown has ``sm_count`` SMs: a level that picks per shape picks for it
        (the values not edited follow, the check counts its grid); others ignore it."""
        if not self.kernel.set_sm_count(sm_count):
            return
        self._show(self.kernel.follow(self.shape))
        self.update_check()

    def reset_to_pick(self) -> None:
        """Every value back to what a plain run of the form's shape launches."""
        self._read_shape()
        self._show(self.kernel.follow(self.shape, forget_edits=True))
        self.update_check()

    def _show(self, values: dict[str, int]) -> None:
        """Put values in their editors without counting them as edits."""
        for name, value in values.items():
            editor = self.editors.get(name)
            if editor is None:
                continue
            editor.blockSignals(True)
            if isinstance(editor, QComboBox):
                editor.setCurrentIndex(max(editor.findData(value), 0))
            else:
                editor.setValue(value)
            editor.blockSignals(False)

    def _edited(self, name: str) -> None:
        editor = self.editors[name]
        value = editor.currentData() if isinstance(editor, QComboBox) else editor.value()
        self.kernel.set(name, int(value))
        self.update_check()

    def update_check(self) -> Check:
        """The constraint check of the edited variant, in words; Run variant is enabled
        only when it holds."""
        check = self.kernel.check(self.shape)
        lines = [f"at {self.shape}:"] + [f"{MARK[f.status]} {f.what}: {f.text}"
                                         for f in check.findings]
        self.check_lines.setText("\n".join(lines))
        self.check_lines.setStyleSheet("" if check.ok else f"color: {FAILED_COLOR}")
        off = self.unavailable_of() if self.unavailable_of is not None else ""
        self.run_button.setEnabled(check.ok and not off)
        self.run_button.setToolTip(plain_tooltip(off) if off else
                                   "" if check.ok else "the check above fails")
        self.sweep_button.setEnabled(not off)
        self.sweep_button.setToolTip(plain_tooltip(off))
        return check

    def select_variant(self, params: dict[str, int]) -> None:
        """Show a variant's parameters in the editors (a heatmap cell was clicked): its
        values count as edited."""
        chosen = {k: v for k, v in params.items() if k in self.editors}
        self._show(chosen)
        for name, value in chosen.items():
            self.kernel.set(name, int(value))
        self.update_check()
        self.heatmap.set_grid(self.heatmap.grid, dict(self.kernel.params))

    # ------------------------------------------------------------------ runs
    def _read_shape(self) -> bool:
        """The run form's shape and repeats now (``form_of``), so the launch computed
        for the runs is the one they run at; False while the form is refused."""
        if self.form_of is None:
            return True
        form = self.form_of()
        if form is None:
            return False
        if (self.shape, self.repeats) != (form.shape, form.repeats):
            self.set_shape(form.shape, form.repeats)
        return True

    def follow_form(self) -> None:
        """The run form now: its shape checked (a form being edited is kept as it was),
        and whether runs can be sent at all."""
        self._read_shape()
        self.update_check()

    def run_variant(self) -> None:
        if not self._read_shape() or not self.update_check().ok:
            return
        self.runs_requested.emit([self.kernel.request(self.shape, self.repeats)])

    def run_sweep(self) -> None:
        if not self._read_shape():
            return
        x, y = self.sweep_x.currentText(), self.sweep_y.currentText()
        try:
            runs = self.kernel.sweep(x, y, self.shape, self.repeats)
        except SpecError as exc:
            self.status.setText(str(exc))
            self.status.setStyleSheet(f"color: {FAILED_COLOR}")
            return
        refused = sum(1 for r in runs if r.kernel and r.kernel.get("refused"))
        self.status.setText(f"sweep of {len(runs)} variants queued ({refused} refused by "
                            "the check: their cells say why)")
        self.status.setStyleSheet(f"color: {UNKNOWN_COLOR}")
        self.runs_requested.emit(runs)

    def take(self, event: object) -> None:
        """An event of the session: this kernel's results and errors fill the heatmap."""
        if self.kernel.take(event):
            if getattr(event, "type", None) == "build" or (
                    isinstance(event, dict) and event.get("type") == "build"):
                self.update_check()  # the registers of a variant that was built
            else:
                self.refresh_heatmap()

    def refresh_heatmap(self) -> None:
        x, y = self.sweep_x.currentText(), self.sweep_y.currentText()
        grid = self.kernel.grid(x, y) if x != y else None  # the latest sweep's shape
        self.heatmap.set_grid(grid, dict(self.kernel.params))

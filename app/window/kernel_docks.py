"""File ▸ Open kernel…: a dock per user kernel (app/widgets/kernel_panel.py) on the
window's right, fed the session's events, its runs sent like the run form's (the form's
shape, repeats and mode)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QFileDialog, QWidget

from ...kernels import protocol as rec
from ...kernels.protocol import RunRequest
from ..core.runs import RunForm
from ..core.store import Item
from ..widgets.fitting import scrolling

if TYPE_CHECKING:  # the panels load the spec side (NVRTC, SASS): only when one opens
    from ..core.tunable import TunableKernel
    from ..widgets.kernel_panel import KernelPanel


class KernelHost(Protocol):
    """What the kernel panels need of the main window (the window is one)."""

    def note(self, text: str, error: bool) -> None: ...
    def run_form(self) -> RunForm | None: ...
    def sm_count(self) -> int | None: ...
    def runs_unavailable(self) -> str: ...
    def submit_runs(self, requests: list[RunRequest]) -> None: ...
    def addDockWidget(self, area: Qt.DockWidgetArea, dock: QDockWidget, /) -> None: ...
    def removeDockWidget(self, dock: QDockWidget, /) -> None: ...


class KernelOpener(Protocol):
    """What File ▸ Open kernel… needs of the main window (the window is one)."""

    def dialog_parent(self) -> QWidget: ...
    def open_kernel(self, path: str) -> bool: ...


class KernelDocks:
    def __init__(self, window: KernelHost) -> None:
        self.window = window
        self.panels: dict[str, KernelPanel] = {}
        self.docks: dict[str, QDockWidget] = {}

    def open(self, path: str | Path) -> KernelPanel | None:
        """Open a spec (again: its panel is replaced, the source re-read); None and a
        message naming the file and field where it cannot be read."""
        from ..core.user_kernels import open_kernel

        kernel, why = open_kernel(path)
        if kernel is None:
            self.window_note(f"cannot open kernel: {why}", True)
            return None
        panel = self._add(kernel, f"Kernel: {kernel.id}")
        self.window_note(f"opened kernel {kernel.id} ({kernel.path.name})", False)
        return panel

    def tune(self, level_id: str) -> KernelPanel | None:
        """A panel editing a registry level's parameters (its choice kept, marked)."""
        from ...kernels.ladder import SpecError
        from ..core.level_variants import LevelVariants

        try:
            model = LevelVariants.of(level_id)
        except (KeyError, SpecError) as exc:
            self.window_note(f"cannot tune {level_id}: {exc}", True)
            return None
        model.sm_count = self.window.sm_count() or model.sm_count  # the GPU shown
        return self._add(model, f"Tune: {level_id}")

    def window_note(self, text: str, error: bool) -> None:
        self.window.note(text, error)

    def _add(self, kernel: TunableKernel, title: str) -> KernelPanel:
        from ..widgets.kernel_panel import KernelPanel

        w = self.window
        panel = KernelPanel(kernel)
        panel.form_of, panel.unavailable_of = w.run_form, w.runs_unavailable
        panel.follow_form()  # the run form's shape, and whether runs can be sent
        panel.runs_requested.connect(w.submit_runs)
        old = self.docks.pop(kernel.id, None)
        if old is not None:
            self.window.removeDockWidget(old)
            old.deleteLater()
        dock = QDockWidget(title)  # (the window's once added)
        dock.setObjectName(f"dock_kernel_{kernel.id}")
        dock.setWidget(scrolling(panel))
        self.window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.panels[kernel.id], self.docks[kernel.id] = panel, dock
        return panel

    def follow_gpu(self) -> None:
        """The GPU shown changed (another of the session's, or a new session): each level
        that picks per shape picks for its SM count."""
        sm_count = self.window.sm_count()
        if sm_count is None:
            return
        for panel in self.panels.values():
            panel.set_sm_count(sm_count)

    def follow_form(self) -> None:
        """The run form was edited: each panel checks (and a level's picks) at its shape."""
        for panel in self.panels.values():
            panel.follow_form()

    def feed(self, event: Item) -> None:
        for panel in self.panels.values():
            panel.take(event)
        if isinstance(event, (rec.Session, rec.Joined)):  # a session may name another GPU
            self.follow_gpu()


def open_kernel_dialog(window: KernelOpener) -> None:
    path, _ = QFileDialog.getOpenFileName(window.dialog_parent(), "Open kernel spec", "",
                                          "Kernel spec (*.toml);;All files (*)")
    if path:
        window.open_kernel(path)

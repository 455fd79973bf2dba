"""What every animated view shares: a custom-painted canvas that steps through a
sequence (animated_canvas.py), a playback bar, and the panel that holds both."""

from __future__ import annotations

from PySide6.QtCore import (
    QSize,
    Signal,
)
from PySide6.QtGui import (
    QFont,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...kernels.ladder import Shape
from ...kernels.models import LevelModel, WarpAccess, model_for
from ..plots.plot_style import plot_font
from ..theme import Theme, min_text_pt
from ..widgets.fitting import flow_layout, flow_row, labelled
from ..widgets.plain import plain_label
from .animated_canvas import SPEEDS, AnimatedCanvas
from .base import View
from .painted_text import MIN_TEXT_PT

CANVAS_SHARE = 0.62  # of a view's height, kept for the picture (see ViewPanel.fit_panels)
STAGE_CANVAS_SHARE = 0.76  # on stage: the picture is what the room looks at


class PlaybackBar(QWidget):
    """Play/pause, step back and forward, speed; follows the canvas it drives."""

    def __init__(self, canvas: AnimatedCanvas, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.play_button = QPushButton("Play")
        self.back_button = QPushButton("◀ Step")
        self.forward_button = QPushButton("Step ▶")
        self.speed_box = QComboBox()
        for s in SPEEDS:
            self.speed_box.addItem(f"{s:g}x", s)
        self.speed_box.setCurrentIndex(SPEEDS.index(1.0))
        self.step_label = QLabel()
        lay = flow_layout(self)  # wraps onto two lines on a narrow panel
        for w in (self.play_button, self.back_button, self.forward_button,
                  labelled("speed", self.speed_box), self.step_label):
            lay.addWidget(w)
        self.play_button.clicked.connect(canvas.toggle_play)
        self.back_button.clicked.connect(canvas.step_back)
        self.forward_button.clicked.connect(canvas.step_forward)
        self.speed_box.currentIndexChanged.connect(
            lambda i: canvas.set_speed(self.speed_box.itemData(i)))
        canvas.playingChanged.connect(
            lambda on: self.play_button.setText("Pause" if on else "Play"))
        canvas.stepChanged.connect(self.refresh)
        canvas.speedChanged.connect(self._show_speed)
        self.refresh()

    def _show_speed(self, speed: float) -> None:
        index = self.speed_box.findData(speed)
        if index >= 0 and index != self.speed_box.currentIndex():
            self.speed_box.blockSignals(True)
            self.speed_box.setCurrentIndex(index)
            self.speed_box.blockSignals(False)

    def refresh(self, *_: object) -> None:
        self.step_label.setText(f"step {self.canvas.step + 1} / {self.canvas.n_steps()}")


def model_in_form(level_id: str, params: dict[str, int] | None) -> LevelModel:
    """The level's access model with ``params`` (the form a run had); the registry's where
    none are given or the level's rules refuse them. KeyError: a level without a model."""
    if params:
        try:
            return model_for(level_id, params)
        except ValueError:
            pass
    return model_for(level_id)


class ViewPanel(QWidget, View):
    """A canvas, its playback bar and an options row; ``set_level`` follows the ladder."""

    canvas: AnimatedCanvas

    def __init__(self, canvas: AnimatedCanvas, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.bar = PlaybackBar(canvas)
        # options wrap onto more lines rather than widen the window
        self.options_row, self.options = flow_row()
        self.message = plain_label()
        self.message.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.options_row)
        lay.addWidget(canvas, 1)
        lay.addWidget(self.message)
        lay.addWidget(self.bar)
        # what hides, in this order, while the picture would get less than CANVAS_SHARE of
        # the tab's height (a small screen, presentation mode's large type)
        self.optional: list[QWidget] = [self.message, self.options_row]
        self.stage = False  # presentation mode (apply_theme)
        # the parameters each level ran with at the shape shown (set_form); the picture is
        # of that form, not of the registry's defaults
        self.forms: dict[str, tuple[dict[str, int] | None, Shape | None]] = {}

    def set_form(self, level_id: str, params: dict[str, int] | None,
                 shape: Shape | None = None) -> None:
        old = self.forms.get(level_id)
        if old == (params, shape):
            return
        self.forms[level_id] = (params, shape)
        if getattr(self.canvas, "level_id", None) != level_id:
            return  # drawn in this form when it is selected
        shown = old[0] if old is not None else None
        if params != shown or self.canvas.draws_shape():
            # the level shown: drawn again in its new form (a picture of the same form
            # that does not draw the shape keeps its step and animation)
            self.set_level(level_id)

    def set_level(self, level_id: str) -> bool:
        """Follow a level (in the form it ran at the shape shown: :meth:`set_form`); a
        level with no access model (a cuBLAS reference, a level added later) keeps the
        current picture and says so. True when followed."""
        try:
            params, shape = self.forms.get(level_id, (None, None))
            self.canvas.set_level(level_id, params, shape)  # type: ignore[attr-defined]
        except KeyError:
            shown = getattr(self.canvas, "level_id", "?")
            self.message.setText(f"{level_id} has no access model (a reference or a new "
                                 f"level); still showing {shown}")
            return False
        self.bar.refresh()
        return True

    def set_animated(self, on: bool) -> None:
        self.canvas.set_animated(on)

    def animation(self) -> AnimatedCanvas:
        return self.canvas

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_panels()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.fit_panels()

    def minimumSizeHint(self) -> QSize:
        """The picture's and the playback bar's minimum: the optional panels hide when
        there is no room for them (:meth:`fit_panels`), so they never make the window
        taller, even from a tab that is not shown."""
        hint = super().minimumSizeHint()
        lay = self.layout()
        m = lay.contentsMargins() if lay is not None else None
        margins = m.top() + m.bottom() if m is not None else 0
        gap = lay.spacing() if lay is not None else 0
        height = (self.canvas.minimumHeight() + self.bar.minimumSizeHint().height()
                  + margins + gap)
        return QSize(hint.width(), min(hint.height(), height))

    def fit_panels(self) -> None:
        """Hide the panels of ``optional``, in order, that would leave the picture less
        than CANVAS_SHARE of the height; show them again when there is room."""
        lay = self.layout()
        if lay is None or not self.isVisible():
            return  # fitted when shown, at its real size
        width, gap = self.width(), lay.spacing()

        def need(w: QWidget) -> int:
            return (w.heightForWidth(width) if w.hasHeightForWidth()
                    else w.sizeHint().height()) + gap

        m = lay.contentsMargins()
        room = self.height() - m.top() - m.bottom() - need(self.bar)
        room -= sum(need(w) for w in self.optional)
        share = STAGE_CANVAS_SHARE if self.stage else CANVAS_SHARE
        wanted = max(self.canvas.picture_height(self.canvas.width() or width),
                     share * self.height())
        for w in self.optional:
            show = room >= wanted
            if not show:
                room += need(w)
            if w.isHidden() == show:
                w.setVisible(show)

    def apply_theme(self, theme: Theme) -> None:
        """The main window's theme (normal or presentation): on stage the canvas takes the
        plots' tick type and never paints text under the theme's floor, so the picture's
        numbers stay readable from the back of a room; in the normal theme it takes the
        window's font again (what it had before the stage). Colours stay ours."""
        self.stage = theme.name != "normal"
        stage = plot_font(theme)  # on stage: the plots' tick type, larger than normal
        self.canvas.min_text_pt = min_text_pt(theme, MIN_TEXT_PT)
        self.canvas.setFont(stage if stage is not None else QFont())  # (QFont(): inherit)
        self.canvas.update()
        self.fit_panels()


class WarpAccessCanvas(AnimatedCanvas):
    """A canvas that steps through one warp's memory instructions of a level (banks and
    coalescing views): the level, warp and K step are chosen here; a subclass says which
    accesses to load (:meth:`_load`) and what to compute for the shown one (:meth:`_analyse`).
    """

    laneSelected = Signal(int)
    accessesChanged = Signal()

    def __init__(self, level_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(400, 240)
        self.level_id = level_id
        self.model: LevelModel = model_for(level_id)
        self.warp = 0
        self.k_step = 0
        self.selected_lane: int | None = None
        self.accesses: list[WarpAccess] = []
        self._warps_with: tuple[tuple[str, int] | None, list[int]] = (None, [])

    def set_level(self, level_id: str, params: dict[str, int] | None = None,
                  shape: Shape | None = None) -> None:
        """Show ``level_id``'s model with ``params`` (the form it ran at ``shape``; None:
        the registry's, as for parameters its rules refuse)."""
        self.model = model_in_form(level_id, params)
        self.level_id = level_id
        self.warp = min(self.warp, self.model.warps - 1)
        if not self.model.shared_accesses(self.warp, self.k_step):
            # e.g. the producer warpgroup of a warp-specialized level: show a warp that
            # issues shared-memory instructions, where one does
            self.warp = next(iter(self.warps_with_accesses()), self.warp)
        self._reload()
        self._step = -1
        self.set_step(self.default_step())  # the access the level is about

    def default_step(self) -> int:
        """The instruction a level opens on: the one its story is about (a subclass says
        which); Home (restart) still goes to the first."""
        return 0

    @staticmethod
    def is_broadcast(acc: WarpAccess) -> bool:
        """Every active lane reads the same address (one word serves the warp)."""
        addr = acc.addr if acc.active is None else acc.addr[acc.active]
        return len(addr) > 1 and bool((addr == addr[0]).all())

    def warps_with_accesses(self) -> list[int]:
        """The warps whose shared-memory instructions the model lists (at this K step);
        kept per level and K step, since the banks view asks on every paint."""
        key = (self.level_id, self.k_step)
        if self._warps_with[0] != key:
            warps = [w for w in range(self.model.warps)
                     if self.model.shared_accesses(w, self.k_step)]
            self._warps_with = (key, warps)
        return self._warps_with[1]

    def set_warp(self, warp: int) -> None:
        self.warp = max(0, min(int(warp), self.model.warps - 1))
        self._reload()

    def set_k_step(self, k_step: int) -> None:
        self.k_step = max(0, int(k_step))
        self._reload()

    def n_steps(self) -> int:
        return max(1, len(self.accesses))

    def current(self) -> WarpAccess | None:
        return self.accesses[self.step] if self.accesses else None

    def _load(self) -> list[WarpAccess]:
        raise NotImplementedError

    def _analyse(self) -> None:
        raise NotImplementedError

    def _reload(self) -> None:
        self.accesses = self._load()
        if self.step >= len(self.accesses):
            self._step = 0
        self._analyse()
        self.accessesChanged.emit()

    def set_step(self, step: int) -> None:
        super().set_step(step)
        self._analyse()

    def select_lane(self, lane: int | None) -> None:
        self.selected_lane = lane
        if lane is not None:
            self.laneSelected.emit(lane)
        self.update()


class WarpAccessView(ViewPanel):
    """A panel around a WarpAccessCanvas: instruction, warp and K-step pickers that follow
    the canvas, plus whatever option widgets a subclass passes in ``extra``."""

    def __init__(self, canvas: WarpAccessCanvas, extra: list[QWidget],
                 parent: QWidget | None = None) -> None:
        super().__init__(canvas, parent)
        self.instruction_box = QComboBox()
        # long labels are cut in the box (the list shows them whole)
        self.instruction_box.setMinimumContentsLength(24)
        self.instruction_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.instruction_box.setSizePolicy(QSizePolicy.Policy.Preferred,
                                           QSizePolicy.Policy.Fixed)
        self.warp_box = QSpinBox()
        self.k_box = QSpinBox()
        self.k_box.setRange(0, 15)
        for w in (labelled("instruction", self.instruction_box),
                  labelled("warp", self.warp_box), labelled("K step", self.k_box), *extra):
            self.options.addWidget(w)
        self.instruction_box.currentIndexChanged.connect(self._on_instruction)
        self.warp_box.valueChanged.connect(canvas.set_warp)
        self.k_box.valueChanged.connect(canvas.set_k_step)
        canvas.accessesChanged.connect(self._fill_instructions)
        canvas.stepChanged.connect(self._follow_step)

    @property
    def accesses_canvas(self) -> WarpAccessCanvas:
        assert isinstance(self.canvas, WarpAccessCanvas)
        return self.canvas

    def set_level(self, level_id: str) -> bool:
        if not super().set_level(level_id):
            return False
        self.warp_box.blockSignals(True)
        self.warp_box.setRange(0, self.accesses_canvas.model.warps - 1)
        self.warp_box.setValue(self.accesses_canvas.warp)
        self.warp_box.blockSignals(False)
        self._fill_instructions()
        return True

    def _message(self) -> str:
        """The line under the picture (the model's notes unless a subclass says more)."""
        return self.accesses_canvas.model.notes

    def _fill_instructions(self) -> None:
        canvas = self.accesses_canvas
        box = self.instruction_box
        box.blockSignals(True)
        box.clear()
        for acc in canvas.accesses:
            box.addItem(acc.label)
        box.setCurrentIndex(canvas.step if canvas.accesses else -1)
        box.blockSignals(False)
        self.message.setText(self._message())
        self.bar.refresh()

    def _on_instruction(self, index: int) -> None:
        if index >= 0 and index != self.accesses_canvas.step:
            self.accesses_canvas.set_step(index)

    def _follow_step(self, step: int) -> None:
        self.instruction_box.blockSignals(True)
        self.instruction_box.setCurrentIndex(step)
        self.instruction_box.blockSignals(False)

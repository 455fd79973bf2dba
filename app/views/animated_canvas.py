"""The custom-painted canvas every animated view draws on: it steps through a sequence
(play, pause, step, speed) and paints the in-between state of each step.

Like superqt's QToggleSwitch, the in-between state is a Qt Property (``progress``, 0 to 1
within the current step), here driven by a StepAnimation on the app's frame clock
(frame_clock.py: Qt's own 16 ms animation timer is late for a 60 Hz frame every eighth or
ninth tick); ``paintEvent`` calls the subclass's small ``draw_*`` methods;
``set_animated(False)`` makes every change instant (tests, screenshots). Keys, while the
canvas has the focus (it claims them before the window's shortcuts, so a clicked canvas
is driven as a media player is): Space play/pause, Right/Left step, +/- speed, Home
restart. Whatever has the focus, the window's Shift+ keys do the same
(app/window/keys.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Property, QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QKeyEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from ..theme import ANIMATION
from .frame_clock import StepAnimation
from .painted_text import PaintedText

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)

STEP_MS = 900  # one step at 1x


# the keys a focused canvas takes from the window's shortcuts (unshifted only)
OWN_KEYS = frozenset({Qt.Key.Key_Space, Qt.Key.Key_Right, Qt.Key.Key_Left, Qt.Key.Key_Home,
                      Qt.Key.Key_Plus, Qt.Key.Key_Equal, Qt.Key.Key_Minus})


class AnimatedCanvas(PaintedText, QWidget):
    stepChanged = Signal(int)
    playingChanged = Signal(bool)
    progressChanged = Signal(float)
    speedChanged = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(320, 200)
        self._step = 0
        self._progress = 1.0
        self._speed = 1.0
        self._animated = True
        self._anim = StepAnimation(self._set_progress, self)
        self._font_metrics: QFontMetricsF | None = None
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)
        self.init_painted_text()

    # -- the animated property ------------------------------------------------------
    def _get_progress(self) -> float:
        return self._progress

    def _set_progress(self, value: float) -> None:
        self._progress = float(value)
        self.progressChanged.emit(self._progress)
        self.update()

    if TYPE_CHECKING:  # what the subclasses read (a float; Qt's Property is its descriptor)
        progress: float
    else:
        progress = Property(float, _get_progress, _set_progress)

    # -- what subclasses provide ----------------------------------------------------
    def n_steps(self) -> int:
        return 1

    def draw(self, painter: QPainter) -> None:
        raise NotImplementedError

    def draws_shape(self) -> bool:
        """Whether the picture depends on the shape shown, beyond the form the level ran
        there (a tile map of the shape's C): a new shape with the same form redraws it."""
        return False

    def picture_height(self, width: int) -> int:
        """The height the picture wants at ``width`` before a view's optional panels get
        room (a subclass whose picture needs more says so)."""
        return self.minimumHeight()

    def line_px(self) -> float:
        """One row of painted text: the canvas font's line height and a little air (the
        pictures place their rows of text by it, so larger type gets larger rows)."""
        return self._metrics().height() + 4

    def text_px(self, text: str) -> float:
        return self._metrics().horizontalAdvance(text)

    def _metrics(self) -> QFontMetricsF:
        """The canvas font's metrics, kept until the font changes (a picture asks for
        them hundreds of times a paint; making them each time cost a banks frame 1 ms)."""
        if self._font_metrics is None:
            self._font_metrics = QFontMetricsF(self.font())
        return self._font_metrics

    # -- playback -------------------------------------------------------------------
    @property
    def step(self) -> int:
        return self._step

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def animated(self) -> bool:
        return self._animated

    def is_playing(self) -> bool:
        return self._timer.isActive()

    def set_animated(self, on: bool) -> None:
        """False: durations 0, every change is drawn at once (tests, screenshots)."""
        self._animated = on
        if not on:
            self._anim.stop()
            self._set_progress(1.0)

    def duration_ms(self) -> int:
        return int(STEP_MS * 0.8 / self._speed) if self._animated else 0

    def set_speed(self, speed: float) -> None:
        speed = max(0.05, float(speed))
        changed = speed != self._speed
        self._speed = speed
        if self.is_playing():
            self._timer.start(int(STEP_MS / self._speed))
        if changed:
            self.speedChanged.emit(speed)

    def change_speed(self, direction: int) -> None:
        """The next speed of SPEEDS up (+1) or down (-1)."""
        self.set_speed(_next_speed(self._speed, direction))

    def play(self) -> None:
        if not self.is_playing():
            self._timer.start(int(STEP_MS / self._speed))
            self.playingChanged.emit(True)

    def pause(self) -> None:
        if self.is_playing():
            self._timer.stop()
            self.playingChanged.emit(False)

    def toggle_play(self) -> None:
        self.pause() if self.is_playing() else self.play()

    def set_step(self, step: int) -> None:
        n = max(1, self.n_steps())
        step %= n
        changed = step != self._step
        self._step = step
        self._anim.start(self.duration_ms())  # 0: progress 1 at once
        if changed:
            self.stepChanged.emit(step)
        self.update()

    def step_forward(self) -> None:
        self.set_step(self._step + 1)

    def step_back(self) -> None:
        self.set_step(self._step - 1)

    def restart(self) -> None:
        self._step = -1
        self.set_step(0)

    def _tick(self) -> None:
        self.step_forward()

    # -- Qt events ------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_Space:
            self.toggle_play()
        elif key == Qt.Key.Key_Right:
            self.step_forward()
        elif key == Qt.Key.Key_Left:
            self.step_back()
        elif key == Qt.Key.Key_Home:
            self.restart()
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.change_speed(+1)
        elif key == Qt.Key.Key_Minus:
            self.change_speed(-1)
        else:
            super().keyPressEvent(event)

    @staticmethod
    def owns(event: QKeyEvent) -> bool:
        """One of the canvas's own keys, unshifted (+ may come with Shift: it is one)."""
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if event.key() == Qt.Key.Key_Plus:
            mods &= ~Qt.KeyboardModifier.ShiftModifier
        return event.key() in OWN_KEYS and mods == Qt.KeyboardModifier.NoModifier

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), ANIMATION.color("background"))
            self.forget_cut_texts()
            self.draw(painter)
        finally:
            painter.end()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) \
                and self.owns(event):
            event.accept()  # the key comes to keyPressEvent, not to a window shortcut
            return True
        return self.tooltip_event(event) or super().event(event)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._font_metrics = None
        super().changeEvent(event)

    def hideEvent(self, event: object) -> None:  # no timers run for a hidden view
        self.pause()
        super().hideEvent(event)  # type: ignore[arg-type]

    # -- drawing helpers ------------------------------------------------------------
    @staticmethod
    def fill(painter: QPainter, rect: QRectF, color: QColor, border: QColor | None = None
             ) -> None:
        painter.fillRect(rect, color)
        if border is not None:
            painter.setPen(border)
            painter.drawRect(rect.adjusted(0, 0, -1, -1))


def _next_speed(speed: float, direction: int) -> float:
    i = min(range(len(SPEEDS)), key=lambda j: abs(SPEEDS[j] - speed))
    return SPEEDS[max(0, min(len(SPEEDS) - 1, i + direction))]

"""The replay bar: play/pause, speed and a seek slider.

It knows no replay object: it says what the user asked for through signals and shows the
position it is given (:meth:`show_position`), so the window wires it to whichever source
plays.
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QWidget

from ..core.replay import Speed


class ReplayBar(QWidget):
    """Play/pause, speed, and a seek slider."""

    SLIDER_STEPS = 1000
    # while playing, the slider and the time move at most this often: the replay ticks
    # every 16 ms, and a window paint for the slider each time came between the frames
    # of an animation (a frame up to 1.5 ms late when the two met); paused or finished,
    # a position shows at once
    POSITION_MS = 100
    toggled = Signal()  # play or pause
    speed_chosen = Signal(str)  # a Speed value
    seek_requested = Signal(float)  # a fraction of the recording, 0..1

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.playing = False
        self.play_button = QPushButton("Play")
        self.play_button.clicked.connect(self.toggle)
        self.speed = QComboBox()
        self.speed.addItems([str(s) for s in Speed])
        self.speed.currentTextChanged.connect(self.speed_chosen)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, self.SLIDER_STEPS)
        self.slider.sliderMoved.connect(
            lambda value: self.seek_requested.emit(value / self.SLIDER_STEPS))
        self.position = QLabel("–")
        self._shown = QElapsedTimer()  # since the position last shown
        self._latest: tuple[float, float] | None = None  # one held back while playing
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.timeout.connect(self._show_latest)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(QLabel("Replay"))
        layout.addWidget(self.play_button)
        layout.addWidget(self.speed)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.position)

    def toggle(self) -> None:
        """Play or pause (the P key and the button)."""
        self.toggled.emit()

    def current_speed(self) -> Speed:
        return Speed(self.speed.currentText())

    def set_speed(self, speed: Speed | str) -> None:
        """Show ``speed`` as chosen (emits ``speed_chosen`` when it changes)."""
        self.speed.setCurrentText(str(Speed(speed)))

    def show_position(self, position_s: float, duration_s: float, playing: bool) -> None:
        self.playing = playing
        self.play_button.setText("Pause" if playing else "Play")
        self._latest = (position_s, duration_s)
        wait = self.POSITION_MS - self._shown.elapsed() if self._shown.isValid() else 0
        if not playing or wait <= 0:
            self._later.stop()
            self._show_latest()
        elif not self._later.isActive():
            self._later.start(int(wait))

    def _show_latest(self) -> None:
        if self._latest is None:
            return
        position_s, duration_s = self._latest
        self._latest = None
        self._shown.start()
        if not self.slider.isSliderDown():
            frac = position_s / duration_s if duration_s > 0 else 1.0
            self.slider.setValue(round(frac * self.SLIDER_STEPS))
        self.position.setText(f"{position_s:7.1f} / {duration_s:.1f} s")

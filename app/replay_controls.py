"""Replay: a QTimer drives the Qt-free ReplayClock; a bar gives play, pause, speed, seek."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QWidget

from gemmscope.app.core.replay import ReplayClock, Speed
from gemmscope.app.core.store import EventSink
from gemmscope.kernels.protocol import ProtocolError, Session, read_session

TICK_MS = 16


class RecordingLoader(QObject):
    """Reads and validates a recording in a worker thread; the GUI thread never waits."""

    loaded = Signal(object, str)  # the Session, the note given at start
    failed = Signal(str)  # why it could not be read

    def __init__(self, path: str | Path, note: str = "", parent: QObject | None = None):
        super().__init__(parent)
        self.path = Path(path)
        self.note = note
        self._thread = threading.Thread(target=self._read, name="gemmscope-recording-loader")

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout_s: float = 10.0) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _read(self) -> None:
        try:
            session: Session = read_session(self.path)
        except ProtocolError as exc:
            self.failed.emit(str(exc))
            return
        self.loaded.emit(session, self.note)


class ReplayController(QObject):
    """Plays events into a sink in real time × speed; seeking back resets via ``reset``."""

    position_changed = Signal(float, float)  # position_s, duration_s
    finished = Signal()
    delivered = Signal(int)  # how many events the last tick delivered

    def __init__(self, events: Sequence[dict[str, Any]], sink: EventSink,
                 reset: Callable[[], None], parent: QObject | None = None):
        super().__init__(parent)
        self.clock = ReplayClock(events, sink)
        self.reset = reset
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._wall = QElapsedTimer()

    @property
    def playing(self) -> bool:
        return self.clock.playing

    def play(self) -> None:
        if self.clock.finished:
            self.seek(0.0)
        self.clock.play()
        self._after_move(self.clock.next_index)
        if self.clock.playing:
            self._wall.start()
            self._timer.start()

    def pause(self) -> None:
        self.clock.pause()
        self._timer.stop()
        self.position_changed.emit(self.clock.position_s, self.clock.duration_s)

    def stop(self) -> None:
        self.pause()

    def set_speed(self, speed: Speed | str) -> None:
        self.clock.set_speed(Speed(speed))
        self._after_move(0)

    def seek(self, position_s: float) -> None:
        before = self.clock.next_index
        self.clock.seek(position_s, reset_sink=self.reset)
        self._after_move(abs(self.clock.next_index - before))

    def _tick(self) -> None:
        dt = self._wall.restart() / 1000.0
        n = self.clock.advance(dt)
        self._after_move(n)

    def _after_move(self, n: int) -> None:
        if n:
            self.delivered.emit(n)
        self.position_changed.emit(self.clock.position_s, self.clock.duration_s)
        if not self.clock.playing:
            self._timer.stop()
            if self.clock.finished:
                self.finished.emit()


class ReplayBar(QWidget):
    """Play/pause, speed, and a seek slider for a ReplayController."""

    SLIDER_STEPS = 1000

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller: ReplayController | None = None
        self.play_button = QPushButton("Play")
        self.play_button.clicked.connect(self.toggle)
        self.speed = QComboBox()
        self.speed.addItems([str(s) for s in Speed])
        self.speed.currentTextChanged.connect(self._speed_changed)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, self.SLIDER_STEPS)
        self.slider.sliderMoved.connect(self._seek_to)
        self.position = QLabel("–")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(QLabel("Replay"))
        layout.addWidget(self.play_button)
        layout.addWidget(self.speed)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.position)

    def attach(self, controller: ReplayController) -> None:
        self.controller = controller
        controller.position_changed.connect(self._moved)
        controller.set_speed(self.speed.currentText())
        self._moved(controller.clock.position_s, controller.clock.duration_s)

    def toggle(self) -> None:
        if self.controller is None:
            return
        if self.controller.playing:
            self.controller.pause()
        else:
            self.controller.play()

    def _speed_changed(self, text: str) -> None:
        if self.controller is not None:
            self.controller.set_speed(text)

    def _seek_to(self, value: int) -> None:
        if self.controller is not None:
            self.controller.seek(self.controller.clock.duration_s * value / self.SLIDER_STEPS)

    def _moved(self, position_s: float, duration_s: float) -> None:
        playing = self.controller is not None and self.controller.playing
        self.play_button.setText("Pause" if playing else "Play")
        if not self.slider.isSliderDown():
            frac = position_s / duration_s if duration_s > 0 else 1.0
            self.slider.setValue(round(frac * self.SLIDER_STEPS))
        self.position.setText(f"{position_s:7.1f} / {duration_s:.1f} s")

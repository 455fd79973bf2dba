"""The replay source: a recording read off the GUI thread, played by a QTimer that drives
the Qt-free :class:`ReplayClock` into the event sink."""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

from ...kernels.protocol import ProtocolError, read_session
from ...kernels.protocol import Recording as Session
from ..core.recording_contents import RecordingContents
from ..core.replay import ReplayClock, Speed, timeline
from .base import EventSink

TICK_MS = 16
TICK_BUDGET_S = 0.020  # delivery per tick: the GUI thread stays free between ticks
# The interpreter's thread switch interval while a recording is read. The GUI thread takes
# the GIL for every Python callback a paint makes (hundreds), and with the default 5 ms
# each of them can wait that long for the reader, so one repaint during a 200 MB read
# took 0.9 s; at 0.2 ms the longest GUI stall measured 103 ms (benchmarks/big_recording.py).
READ_SWITCH_INTERVAL_S = 0.0002
_switching_lock = threading.Lock()
_readers = [0, 0.005]  # readers running, the interval to restore after the last


@contextlib.contextmanager
def fine_thread_switching() -> Iterator[None]:
    """While a recording is read: the GUI thread waits at most READ_SWITCH_INTERVAL_S
    for the GIL; the interval before the first reader is restored after the last."""
    with _switching_lock:
        if _readers[0] == 0:
            _readers[1] = sys.getswitchinterval()
            sys.setswitchinterval(min(READ_SWITCH_INTERVAL_S, _readers[1]))
        _readers[0] += 1
    try:
        yield
    finally:
        with _switching_lock:
            _readers[0] -= 1
            if _readers[0] == 0:
                sys.setswitchinterval(_readers[1])


class RecordingLoader(QObject):
    """Reads and validates a recording in a worker thread; the GUI thread never waits."""

    # the Session, the note, its play times and its RecordingContents
    loaded = Signal(object, str, object, object)
    progressed = Signal(float)  # the fraction of the file read so far
    failed = Signal(str)  # why it could not be read

    def __init__(self, path: str | Path, note: str = "", parent: QObject | None = None):
        super().__init__(parent)
        self.path = Path(path)
        self.note = note
        self._thread = threading.Thread(target=self._read, name="gemmscope-recording-loader")

    def start(self) -> None:
        self._thread.start()

    def _progress(self, fraction: float) -> None:
        """On the reader's thread, every few thousand lines: the events read so far will
        live as long as the replay, so the cyclic collector's passes (which hold the GIL,
        and so the GUI thread, for as long as they walk) need not walk them again."""
        gc.freeze()
        self.progressed.emit(fraction)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout_s: float = 10.0) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _read(self) -> None:
        """Never dies silently: whatever stops the reader is said, so the window never
        waits on a reader that is gone."""
        gc.freeze()  # what exists now (the window's objects) is not walked again either
        try:
            with fine_thread_switching():
                session: Session = read_session(self.path, self._progress)
                # the play times and the contents too: the GUI thread gets a recording
                # ready to play, and never walks its events
                times = timeline(session.events)
                contents = RecordingContents.of(session.events)
        except ProtocolError as exc:
            self.failed.emit(str(exc))
            return
        except (MemoryError, RecursionError, ValueError, OSError) as exc:
            self.failed.emit(f"{self.path}: cannot be read ({type(exc).__name__}: {exc})")
            return
        except Exception as exc:  # a reader bug must not leave "reading…" forever
            self.failed.emit(f"{self.path}: the reader failed ({type(exc).__name__}: {exc})")
            return
        self.loaded.emit(session, self.note, times, contents)


class ReplaySource(QObject):
    """Plays a recording's events into a sink in real time × speed.

    Seeking back replays from the start into a fresh store: ``reset`` clears it first.
    """

    position_changed = Signal(float, float, bool)  # position_s, duration_s, playing
    finished = Signal()
    delivered = Signal(int)  # how many events the last tick delivered

    def __init__(self, session: Session, sink: EventSink, reset: Callable[[], None],
                 note: str = "", parent: QObject | None = None,
                 times: list[float] | None = None):
        super().__init__(parent)
        self.recording = session
        self.note = note
        self.clock = ReplayClock(session.events, sink, times)
        self.reset = reset
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._wall = QElapsedTimer()

    # ----------------------------------------------------------------- EventSource
    def start(self) -> None:
        self.play()

    def stop(self) -> None:
        self.pause()

    def describe(self) -> str:
        synthetic = " [synthetic data]" if self.recording.header.synthetic else ""
        return (f"replay — {Path(self.recording.path).name}{synthetic}"
                + (f" ({self.note})" if self.note else ""))

    # ----------------------------------------------------------------- playing
    @property
    def playing(self) -> bool:
        return self.clock.playing

    @property
    def delivered_count(self) -> int:
        """How many of the recording's events were delivered so far."""
        return self.clock.next_index

    @property
    def position_s(self) -> float:
        return self.clock.position_s

    @property
    def duration_s(self) -> float:
        return self.clock.duration_s

    def play(self) -> None:
        if self.clock.finished:
            self.seek(0.0)
        self.clock.play(deliver=False)  # the ticks deliver, within their budget
        self._run_timer()
        self._tick()

    def pause(self) -> None:
        self.clock.pause()
        self._run_timer()
        self._after_move(0)

    def toggle(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def set_speed(self, speed: Speed | str) -> None:
        self.clock.set_speed(Speed(speed), deliver=False)
        self._run_timer()
        self._after_move(0)

    def seek(self, position_s: float) -> None:
        before = self.clock.next_index
        self.clock.seek(position_s, reset_sink=self.reset, budget_s=TICK_BUDGET_S)
        self._run_timer()
        self._after_move(abs(self.clock.next_index - before))

    def seek_fraction(self, fraction: float) -> None:
        self.seek(self.clock.duration_s * min(max(fraction, 0.0), 1.0))

    def deliver_all(self) -> None:
        """Play the whole recording into the sink now, in one call (screenshots, exports,
        tests: they want the finished picture, not a fluid GUI). The speed stays the one
        chosen: playing again (from the start) plays at it."""
        speed = self.clock.speed
        self.clock.set_speed(Speed.INSTANT, deliver=False)
        self.clock.play(deliver=False)
        try:
            n = self.clock.advance(0.0)
        finally:
            self.clock.set_speed(speed, deliver=False)
        self._run_timer()
        self._after_move(n)

    def _run_timer(self) -> None:
        """Tick while playing, or while a budget left due events undelivered."""
        if self.clock.playing or self.clock.behind:
            if not self._timer.isActive():
                self._wall.start()
                self._timer.start()
        else:
            self._timer.stop()

    def _tick(self) -> None:
        dt = self._wall.restart() / 1000.0 if self._wall.isValid() else 0.0
        if self.clock.playing:
            n = self.clock.advance(dt, TICK_BUDGET_S)
        else:
            n = self.clock.catch_up(TICK_BUDGET_S)
        self._after_move(n)

    def _after_move(self, n: int) -> None:
        if n:
            self.delivered.emit(n)
        self.position_changed.emit(self.clock.position_s, self.clock.duration_s,
                                   self.clock.playing)
        if not (self.clock.playing or self.clock.behind):
            self._timer.stop()
            if self.clock.finished:
                self.finished.emit()

"""Where the window's events come from, one source at a time: a recording (read now or on
a worker thread) played as a replay, the bundled recording, or a live runner session (one
GPU or several) recorded as it runs.

:class:`WindowSources` is an object the window owns (not a part of the window): it is
given the three things it needs of the window (the event sink, the store's reset, and
what to tell the view state of a recording's contents) and says what happened through
signals, which the window turns into its titles, bars and messages. It touches no widget.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ...kernels.drive import DeviceSpec
from ...kernels.protocol import ProtocolError, SessionWriter, default_session_path, read_session
from ...kernels.protocol import Recording as Session
from ..core.recording_contents import RecordingContents
from ..core.replay import Speed
from ..sources.base import EventSink, EventSource
from ..sources.live import LiveSource
from ..sources.replay import RecordingLoader, ReplaySource

BUNDLED_SESSION = "h200-ladder.jsonl.gz"


def bundled_session() -> Path | None:
    """The recording shipped in gemmscope.resources/sessions, where it exists."""
    ref = resources.files("gemmscope.resources") / "sessions" / BUNDLED_SESSION
    return Path(str(ref)) if ref.is_file() else None


class WindowSources(QObject):
    """The window's event source and the live session's recording.

    ``sink`` takes every event (the window's ``handle``); ``reset`` empties the store
    before a new source; ``expect`` is told what a replay will deliver in all (None for a
    live source), before the first event."""

    # (the ReplaySource, the Session read, the note): the replay is made, not started yet
    replay_opened = Signal(object, object, str)
    open_failed = Signal(str)  # why a recording could not be opened
    reading = Signal(str)  # what a worker thread is reading, and how far it got
    live_started = Signal(object, str, str)  # (the LiveSource, its recording, the GPU)

    def __init__(self, sink: EventSink, reset: Callable[[], None],
                 expect: Callable[[RecordingContents | None], None], speed: Callable[[], str],
                 parent: QObject | None = None):
        super().__init__(parent)
        self._sink, self._reset, self._expect, self._speed = sink, reset, expect, speed
        self.source: EventSource | None = None  # what feeds the store
        self.writer: SessionWriter | None = None  # the live session's recording
        self.path = ""  # what the store shows: a recording, or the live file
        self._loaders: list[RecordingLoader] = []

    # ------------------------------------------------------------- recordings
    def open_recording(self, path: str | Path, note: str = "", background: bool = False
                       ) -> bool:
        """Replay a recording; ``note`` says why (e.g. why there is no live runner).

        With ``background`` the file is read in a worker thread and ``replay_opened`` or
        ``open_failed`` says how it went (True: the read began); otherwise it is read now
        and the result returned."""
        if background:
            loader = RecordingLoader(path, note, parent=self)
            # slots of this object: queued into the GUI thread from the loader's thread
            loader.loaded.connect(self._start_replay)
            loader.failed.connect(self._failed)
            name = Path(path).name
            loader.progressed.connect(
                lambda fraction: self.reading.emit(f"reading {name}… {fraction:.0%}"))
            self._loaders.append(loader)
            self.reading.emit(f"reading {name}…")
            loader.start()
            return True
        try:
            session = read_session(path)
        except ProtocolError as exc:
            self._failed(str(exc))
            return False
        self._start_replay(session, note)
        return True

    def open_session(self, session: Session, note: str = "") -> None:
        """Replay a recording already read. Its records are read, never changed (the app
        copies telemetry out of a block and sets no field of a record), so windows may
        share one reading: the gallery's do."""
        self._start_replay(session, note)

    def _failed(self, why: str) -> None:
        self._forget_finished_loaders()
        self.open_failed.emit(why)

    def _forget_finished_loaders(self) -> None:
        for loader in [ld for ld in self._loaders if not ld.running]:
            loader.wait()
            self._loaders.remove(loader)
            loader.deleteLater()

    def _start_replay(self, session: Session, note: str, times: list[float] | None = None,
                      contents: RecordingContents | None = None) -> None:
        self._forget_finished_loaders()
        self.close()
        self._reset()
        self._expect(contents if contents is not None else RecordingContents.of(session.events))
        # a recording's events live as long as the replay: the cyclic garbage collector
        # need not walk them again (a full pass over a 200 MB recording's events took
        # seconds of the GUI thread); they are still freed when the replay ends
        gc.freeze()
        replay = ReplaySource(session, self._sink, self._reset, note, parent=self,
                              times=times)
        replay.set_speed(self._speed())
        self.source, self.path = replay, session.path
        self.replay_opened.emit(replay, session, note)
        replay.start()

    # ------------------------------------------------------------- live
    def start_live(self, device_name: str, command: list[str] | None = None,
                   session_path: str | Path | None = None, watchdog_s: float = 300.0,
                   remote: str | None = None, devices: list[DeviceSpec] | None = None,
                   split: bool = False, sessions_dir: str | Path | None = None) -> Path:
        """Start the runner (``command``, else this Python's); every event is appended to
        ``session_path`` (default: a new file in ``sessions_dir``) as it arrives.
        ``device_name`` is what the window calls the GPU until the runner's header names
        it; ``remote``: the host ``command`` reaches through ssh; ``devices``: one runner
        per GPU (kernels/drive/devices.py), runs ``split`` over them or on each."""
        self.close()
        self._reset()
        self._expect(None)
        if not session_path and sessions_dir is None:
            raise ValueError("a live session needs its file or the folder of sessions")
        path = Path(session_path) if session_path else default_session_path(
            sessions_dir or ".")
        self.writer = SessionWriter(path)
        live = LiveSource(self._sink, command, tap=self.writer, watchdog_s=watchdog_s,
                          remote=remote, devices=devices, split=split, parent=self)
        self.source, self.path = live, str(path)
        self.live_started.emit(live, str(path), device_name)
        live.start()
        return path

    # ------------------------------------------------------------- the source
    @staticmethod
    def bundled() -> Path | None:
        """The bundled recording (:func:`bundled_session`), where this build has it."""
        return bundled_session()

    @property
    def live(self) -> LiveSource | None:
        """The live source, when one feeds the window."""
        return self.source if isinstance(self.source, LiveSource) else None

    @property
    def replay(self) -> ReplaySource | None:
        """The replay source, when one feeds the window."""
        return self.source if isinstance(self.source, ReplaySource) else None

    def close(self) -> None:
        """Stop the source (a live runner quits, its lines kept) and close the recording."""
        source, self.source = self.source, None
        if source is not None:
            source.stop()
            if isinstance(source, QObject):
                source.deleteLater()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def wait_loaders(self) -> None:
        """Let every worker thread that reads a recording finish (the window closes)."""
        for loader in self._loaders:
            loader.wait()
        self._loaders.clear()

    def set_speed(self, speed: Speed) -> None:
        if self.replay is not None:
            self.replay.set_speed(speed)

    def toggle(self) -> None:
        """Play or pause the replay."""
        if self.replay is not None:
            self.replay.toggle()

    def seek_fraction(self, fraction: float) -> None:
        if self.replay is not None:
            self.replay.seek_fraction(fraction)

"""The main window's sources: opening a recording (now or on a worker thread), the
bundled one, a live runner session (one GPU or several), and playing a replay. A mixin of
:class:`~gemmscope.app.window.main_window.MainWindow`, kept apart so that the window's
file holds its layout and its commands; the attributes it uses are the window's."""

from __future__ import annotations

import gc
from importlib import resources
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject

from ...kernels.drive.devices import DeviceSpec
from ...kernels.protocol.events import ProtocolError
from ...kernels.protocol.recording import Session, read_session
from ...kernels.protocol.session_file import SessionWriter, default_session_path
from ..core.recording_contents import RecordingContents
from ..core.replay import Speed
from ..sources.live import LiveSource
from ..sources.replay import RecordingLoader, ReplaySource

BUNDLED_SESSION = "h200-ladder.jsonl"


def bundled_session() -> Path | None:
    """The recording shipped in gemmscope.resources/sessions, where it exists."""
    ref = resources.files("gemmscope.resources") / "sessions" / BUNDLED_SESSION
    return Path(str(ref)) if ref.is_file() else None


class SourcesMixin:
    """Where the window's events come from (one source at a time)."""

    source: Any
    source_path: str | None
    writer: SessionWriter | None

    def open_recording(self, path: str | Path, note: str = "", background: bool = False
                       ) -> bool:
        """Replay a recording; ``note`` says why (e.g. why there is no live runner).

        With ``background`` the file is read in a worker thread and ``recording_opened``
        says how it went; otherwise it is read now and the result returned.
        """
        if background:
            loader = RecordingLoader(path, note, parent=self)
            # slots of this window: queued into the GUI thread from the loader's thread
            loader.loaded.connect(self._start_replay)
            loader.failed.connect(self._load_failed)
            name = Path(path).name
            loader.progressed.connect(lambda fraction: self.statusBar().showMessage(
                f"reading {name}… {fraction:.0%}"))
            self._loaders.append(loader)
            self.statusBar().showMessage(f"reading {Path(path).name}…")
            loader.start()
            return True
        try:
            session = read_session(path)
        except ProtocolError as exc:
            self._load_failed(str(exc))
            return False
        self._start_replay(session, note)
        return True

    def _load_failed(self, why: str) -> None:
        self._forget_finished_loaders()
        self._note(f"cannot open recording: {why}", error=True)
        self.statusBar().showMessage(f"cannot open recording: {why}")
        self.recording_opened.emit(False)

    def _forget_finished_loaders(self) -> None:
        for loader in [ld for ld in self._loaders if not ld.running]:
            loader.wait()
            self._loaders.remove(loader)
            loader.deleteLater()

    def _start_replay(self, session: Session, note: str,
                      times: list[float] | None = None) -> None:
        self._forget_finished_loaders()
        self.close_source()
        self._reset_store()
        self._expect(RecordingContents.of(session.events))
        # a recording's events live as long as the replay: the cyclic garbage collector
        # need not walk them again (a full pass over a 200 MB recording's dicts took
        # seconds of the GUI thread); they are still freed when the replay ends
        gc.freeze()
        replay = ReplaySource(session, self.handle, self._reset_store, note, parent=self,
                              times=times)
        replay.position_changed.connect(self.replay_bar.show_position)
        replay.set_speed(self.prefs.speed)
        self.source, self.source_path = replay, session.path
        self.replay_toolbar.show()
        self.mode_label.setText(replay.describe())
        synthetic = " [synthetic data]" if session.header.synthetic else ""
        self.setWindowTitle(f"gemmscope — {Path(session.path).name}{synthetic}")
        self.controls.set_unavailable("replay: " + (note or "runs need the live runner"))
        self.statusBar().clearMessage()
        if session.problem is not None:  # read what is readable; say where it was not
            self._note(f"{Path(session.path).name}: {session.problem}", error=True)
            self.statusBar().showMessage(f"some lines could not be read: {session.problem}")
        replay.start()
        self.recording_opened.emit(True)

    def _expect(self, contents: RecordingContents | None) -> None:
        """Tell the store what the source brings; a replay chooses its shape now, before
        any result arrives, so its first results never change the chosen one: the
        recording's default (4096³ where it has results there, else its most complete
        shape), unless a shape chosen on the command line or by a talk is pinned, or the
        shape already chosen is one the recording has too."""
        self.store.expect(contents)
        if contents is None:
            return
        state = self.view_state.state
        changes: dict[str, Any] = {}
        if state.shape is None or (not self.shape_pinned
                                   and state.shape not in contents.levels_at):
            changes["shape"] = contents.default_shape()
        devices = {key[3] for key in contents.results} | {0}
        if state.device not in devices:
            changes["device"] = 0
        self.view_state.set(**changes)

    def open_bundled(self, reason: str, background: bool = False) -> bool:
        path = bundled_session()
        if path is None:
            text = (f"replay mode ({reason}), but the bundled H200 recording "
                    f"(resources/sessions/{BUNDLED_SESSION}) is not in this build yet; "
                    "open a recording with File ▸ Open or `gemmscope replay FILE`")
            self.mode_label.setText(f"replay — no recording ({reason})")
            self._note(text, error=False)
            self.controls.set_unavailable(f"replay: {reason}")
            return False
        return self.open_recording(path, note=reason, background=background)

    def start_live(self, device_name: str, command: list[str] | None = None,
                   session_path: str | Path | None = None, watchdog_s: float | None = None,
                   remote: str | None = None, devices: list[DeviceSpec] | None = None,
                   split: bool = False) -> Path:
        """Start the runner (``command``, else this Python's); every event is appended to
        ``session_path`` as it arrives. ``device_name`` is what the status bar calls the
        GPU until the runner's header names it. ``remote``: the host ``command`` reaches
        through ssh (its failures are explained, the recording names it). ``devices``:
        one runner per GPU (kernels/drive/devices.py), runs ``split`` over them or on each."""
        self.close_source()
        self._reset_store()
        self._expect(None)
        path = Path(session_path) if session_path else default_session_path(
            self.prefs.sessions_dir)
        self.writer = SessionWriter(path)
        live = LiveSource(self.handle, command, tap=self.writer,
                          watchdog_s=watchdog_s or self.prefs.watchdog_s, remote=remote,
                          devices=devices, split=split, parent=self)
        live.notice.connect(self._runner_notice)
        live.state_changed.connect(lambda _state: self._show_run_state())
        self.source, self.source_path = live, str(path)
        live.start()
        self._note(f"recording this session to {path}", error=False)
        self.mode_label.setText(f"live — {device_name} — {live.describe()}")
        self.setWindowTitle(f"gemmscope — live on {device_name}")
        self.controls.set_unavailable("")
        self.replay_toolbar.hide()
        return path

    @property
    def live(self) -> LiveSource | None:
        """The live source, when one feeds the window."""
        return self.source if isinstance(self.source, LiveSource) else None

    @property
    def replay(self) -> ReplaySource | None:
        """The replay source, when one feeds the window."""
        return self.source if isinstance(self.source, ReplaySource) else None

    def close_source(self) -> None:
        source, self.source = self.source, None
        if source is not None:
            source.stop()
            if isinstance(source, QObject):
                source.deleteLater()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def mode_text(self) -> str:
        """What the status bar says feeds the window."""
        return self.mode_label.text()

    def play_instant(self) -> None:
        """Deliver the whole recording now (screenshots, tests)."""
        if self.replay is not None:
            self.set_replay_speed(Speed.INSTANT, remember=False)
            self.replay.deliver_all()
        self.flush_views()

    def toggle_replay(self) -> None:
        """Play or pause the recording (P, the replay bar's button)."""
        if self.replay is not None:
            self.replay.toggle()

    def set_replay_speed(self, speed: Speed | str, remember: bool = True) -> None:
        """Play the replay at ``speed``; ``remember``: keep it in the preferences (the
        person chose it; a talk's scene, a picture or a test do not)."""
        speed = Speed(speed)
        if remember:
            self.prefs.speed = str(speed)
        if self.replay_bar.current_speed() is not speed:
            # shown on the bar without its speed_chosen, which would remember it
            blocked = self.replay_bar.speed.blockSignals(True)
            try:
                self.replay_bar.set_speed(speed)
            finally:
                self.replay_bar.speed.blockSignals(blocked)
        if self.replay is not None:
            self.replay.set_speed(speed)

    def _seek_fraction(self, fraction: float) -> None:
        if self.replay is not None:
            self.replay.seek_fraction(fraction)


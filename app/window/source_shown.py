"""What the window shows of its event source: the title, the status bar's mode and
messages, the run form's state, the replay bar and the notes, as a recording opens or is
refused, a live runner starts or cannot record, and a runner says something.

The source itself is :class:`~.sources.WindowSources`'s, which touches no widget and says
what happened through signals; :class:`SourceShown` turns those into what is on screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QLabel, QStatusBar, QToolBar

from ...kernels.protocol import Recording as Session
from ..sources.live import LiveSource
from ..sources.replay import ReplaySource
from ..widgets.run_controls import RunControls
from .replay_controls import ReplayControls
from .sources import BUNDLED_SESSION


class Shows(Protocol):
    """The parts of the main window that say where its events come from."""

    @property
    def mode_label(self) -> QLabel: ...
    @property
    def controls(self) -> RunControls: ...
    @property
    def replay_controls(self) -> ReplayControls: ...
    @property
    def replay_toolbar(self) -> QToolBar: ...
    @property
    def recording_opened(self) -> SignalInstance: ...
    def statusBar(self) -> QStatusBar: ...
    def setWindowTitle(self, title: str) -> None: ...
    def note(self, text: str, error: bool) -> None: ...
    def show_run_state(self) -> None: ...


class SourceShown:
    """The window's side of WindowSources's signals (its slots) and of a source that
    could not be had (no bundled recording, no session file for a live runner)."""

    def __init__(self, window: Shows) -> None:
        self.window = window

    def no_bundled(self, reason: str) -> None:
        """Replay mode was asked for, and this build has no bundled recording."""
        w = self.window
        w.mode_label.setText(f"replay — no recording ({reason})")
        w.note(f"replay mode ({reason}), but the bundled H200 recording "
               f"(resources/sessions/{BUNDLED_SESSION}) is not in this build yet; "
               "open a recording with File ▸ Open or `gemmscope replay FILE`", error=False)
        w.controls.set_unavailable(f"replay: {reason}")

    def cannot_record(self, exc: OSError, where: object) -> str:
        """A live session's file could not be made (no runner starts): said in the
        messages; the text, which the window keeps for the command line to say too."""
        why = f"cannot record the live session: {exc.filename or where}: {exc.strerror or exc}"
        self.window.note(why, error=True)
        return why

    def replay_opened(self, replay: ReplaySource, session: Session, note: str) -> None:
        w = self.window
        w.replay_controls.opened(replay)
        w.mode_label.setText(replay.describe())
        synthetic = " [synthetic data]" if session.header.synthetic else ""
        w.setWindowTitle(f"gemmscope — {Path(session.path).name}{synthetic}")
        w.controls.set_unavailable("replay: " + (note or "runs need the live runner"))
        w.statusBar().clearMessage()
        if session.problem is not None:  # read what is readable; say where it was not
            w.note(f"{Path(session.path).name}: {session.problem}", error=True)
            w.statusBar().showMessage(f"some lines could not be read: {session.problem}")
        w.recording_opened.emit(True)

    def open_failed(self, why: str) -> None:
        w = self.window
        w.note(f"cannot open recording: {why}", error=True)
        w.statusBar().showMessage(f"cannot open recording: {why}")
        w.recording_opened.emit(False)

    def live_started(self, live: LiveSource, path: str, device_name: str) -> None:
        w = self.window
        live.notice.connect(self.runner_notice)
        live.state_changed.connect(lambda _state: w.show_run_state())
        w.note(f"recording this session to {path}", error=False)
        w.mode_label.setText(f"live — {device_name} — {live.describe()}")
        w.setWindowTitle(f"gemmscope — live on {device_name}")
        w.controls.set_unavailable("")
        w.replay_toolbar.hide()

    def runner_notice(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 15000)

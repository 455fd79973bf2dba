"""File ▸ Open baseline… and ``replay A --baseline B``: a second recording read in a
worker (app/sources/replay.py RecordingLoader) and set beside the session
(SessionStore.set_baseline); the status bar says what differs between the two runs."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QFileDialog, QStatusBar, QWidget

from ...kernels.protocol import ProtocolError, read_session
from ...kernels.protocol import Recording as Session
from ..core.baseline_run import baseline_of, baseline_warning, previous_of
from ..core.store import SessionStore
from ..sources.replay import RecordingLoader

STATUS_MS = 15000


class BaselineHost(Protocol):
    """What a baseline needs of the main window (the window is one)."""

    # the loader reading a baseline, kept until the next: the worker reports to it
    baseline_loader: RecordingLoader | None

    @property
    def store(self) -> SessionStore: ...
    def statusBar(self) -> QStatusBar: ...
    def dialog_parent(self) -> QWidget: ...
    def flush_views(self) -> None: ...


def open_baseline(window: BaselineHost, path: str) -> RecordingLoader:
    """Read ``path`` in a worker; when read, it becomes the store's baseline."""
    loader = RecordingLoader(path)

    def loaded(session: Session, _note: str, _times: object, _contents: object) -> None:
        base = baseline_of(path, session.header, session.events)
        window.store.set_baseline(base)
        said = baseline_warning(window.store, base)
        window.statusBar().showMessage(
            f"baseline {loader.path.name}" + (f": {said}" if said else
                                               ": the same GPU, software and code"), STATUS_MS)
        window.flush_views()

    def failed(why: str) -> None:
        window.statusBar().showMessage(f"baseline not opened: {why}", STATUS_MS)

    loader.loaded.connect(loaded)
    loader.failed.connect(failed)
    window.baseline_loader = loader
    loader.start()
    return loader


def set_baseline_now(window: BaselineHost, path: str) -> str | None:
    """Read ``path`` now (a picture from the command line waits for it anyway) and set it
    as the baseline; why it could not be read, or None."""
    try:
        session = read_session(path)
    except (ProtocolError, OSError, ValueError) as exc:
        return str(exc)
    window.store.set_baseline(baseline_of(path, session.header, session.events))
    return None


def open_baseline_dialog(window: BaselineHost) -> None:
    path, _ = QFileDialog.getOpenFileName(window.dialog_parent(), "Open baseline recording",
                                          "", "Sessions (*.jsonl *.jsonl.gz);;All files (*)")
    if path:
        open_baseline(window, path)


def previous_as_baseline(window: BaselineHost) -> bool:
    """File ▸ Previous results as baseline: the recording's older result of each run it
    measured again (``record --update``) beside the newest; the status bar says so, or that
    no run was measured again. Whether a baseline was set."""
    base = previous_of(window.store)
    if base is None:
        window.statusBar().showMessage("no previous results: no run of this recording was "
                                       "measured again (record --update)", STATUS_MS)
        return False
    window.store.set_baseline(base)
    runs = len(base.store.results)
    window.statusBar().showMessage(
        f"baseline: the previous result of {runs} run{'s' * (runs != 1)} measured again "
        "in this recording (before / after)", STATUS_MS)
    window.flush_views()
    return True

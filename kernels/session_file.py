"""Recording a live session: every event line appended and flushed as it arrives.

The file is the exact event stream (the runner's lines, plus the app's own ``error`` and
``info`` events for crashes, timeouts and stops), so a crash of the app or the runner
loses nothing already measured, and the file replays like any recording.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import IO, Any

from .protocol import dumps


def default_session_path(folder: str | Path, now: _dt.datetime | None = None) -> Path:
    now = now or _dt.datetime.now()
    return Path(folder) / f"live-{now:%Y%m%d-%H%M%S}.jsonl"


class SessionWriter:
    """Appends event lines to one file, flushing after each."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = self.path.open("a", encoding="utf-8")
        self.lines = 0

    def write_line(self, line: str) -> None:
        if self._fh is None:
            return
        self._fh.write(line.rstrip("\n") + "\n")
        self._fh.flush()
        self.lines += 1

    def write_event(self, event: dict[str, Any]) -> None:
        self.write_line(dumps(event))

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @property
    def closed(self) -> bool:
        return self._fh is None

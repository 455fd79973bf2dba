"""Recording a live session: every event line appended and flushed as it arrives.

The file is the exact event stream (the runner's lines, plus the app's own ``error`` and
``info`` events for crashes, timeouts and stops), so a crash of the app or the runner
loses nothing already measured, and the file replays like any recording.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import IO


def default_session_path(folder: str | Path, now: _dt.datetime | None = None) -> Path:
    """A new, empty file for a live session, named by the time: created here, exclusively,
    so two sessions started in the same second get two files (the second with ``-2``)."""
    now = now or _dt.datetime.now()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"live-{now:%Y%m%d-%H%M%S}"
    for n in range(1, 10_000):
        path = folder / (f"{stem}.jsonl" if n == 1 else f"{stem}-{n}.jsonl")
        try:
            with path.open("x", encoding="utf-8"):
                return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free session file name for {stem} in {folder}")


class SessionWriter:
    """Appends event lines to one file, flushing after each. A file whose last line was
    cut (a crash, no newline at its end) gets its newline first, so the first new line
    is not glued onto it: readers skip the cut line and read what follows."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = self.path.open("a", encoding="utf-8")
        self.lines = 0
        if self._ends_cut():
            self._fh.write("\n")
            self._fh.flush()

    def _ends_cut(self) -> bool:
        with self.path.open("rb") as fh:
            if fh.seek(0, 2) == 0:
                return False
            fh.seek(-1, 2)
            return fh.read(1) != b"\n"

    def write_line(self, line: str) -> None:
        if self._fh is None:
            return
        self._fh.write(line.rstrip("\n") + "\n")
        self._fh.flush()
        self.lines += 1

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @property
    def closed(self) -> bool:
        return self._fh is None

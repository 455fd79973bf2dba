"""Recording a live session: every event line appended and flushed as it arrives.

The file is the exact event stream (the runner's lines, plus the app's own ``error`` and
``info`` events for crashes, timeouts and stops), so a crash of the app or the runner
loses nothing already measured, and the file replays like any recording.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from pathlib import Path
from typing import IO

import msgspec


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


BUILD_START = '{"type":"build"'
# the fields a build event carries that say when and for which run, not what was built
_OCCASION = ("t", "id")


def build_key(line: str | bytes) -> str | None:
    """What a build event line says, less when and for which run it was compiled (its
    ``t`` and ``id``), hashed; None for a line that is not a readable build event."""
    try:
        event = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None
    if not isinstance(event, dict) or event.get("type") != "build":
        return None
    for name in _OCCASION:
        event.pop(name, None)
    return hashlib.sha256(msgspec.json.encode(event, order="sorted")).hexdigest()


def builds_in(path: Path) -> set[str]:
    """The keys of the build events already in ``path`` (none for a new or empty file)."""
    keys: set[str] = set()
    try:
        with path.open("rb") as fh:
            for raw in fh:
                if raw.startswith(BUILD_START.encode()) and (key := build_key(raw)):
                    keys.add(key)
    except FileNotFoundError:
        pass
    return keys


class RecordingFailed(OSError):
    """The session file could not be written (its message names the file)."""


class SessionWriter:
    """Appends event lines to one file, flushing after each. A file whose last line was
    cut (a crash, no newline at its end) gets its newline first, so the first new line
    is not glued onto it: readers skip the cut line and read what follows."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # the builds the file holds (by what they say, not when or for which run): one
        # written again, by a restarted runner or a session appended to the file, is left
        # out (it was 74 builds for 27 distinct in an appended recording: 60% of it)
        self.builds = builds_in(self.path)
        self.skipped_builds = 0
        self._fh: IO[str] | None = self.path.open("a", encoding="utf-8")
        self.lines = 0
        self.error: OSError | None = None  # the write that failed, if one did
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
        """One line, flushed. A write that fails (a full disk) raises RecordingFailed
        once, naming the file; the file is closed then, what reached it kept, and later
        lines go nowhere (so the runner can still be stopped cleanly)."""
        if self._fh is None:
            return
        if line.startswith(BUILD_START):
            key = build_key(line)
            if key is not None and key in self.builds:
                self.skipped_builds += 1
                return
            if key is not None:
                self.builds.add(key)
        try:
            self._fh.write(line.rstrip("\n") + "\n")
            self._fh.flush()
        except OSError as exc:
            self.error = exc
            self._drop()
            raise RecordingFailed(exc.errno, f"cannot write {self.path} "
                                             f"({exc.strerror or exc})", str(self.path)) from None
        self.lines += 1

    def _drop(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError:  # its buffer could not be written either: already said
                pass

    def close(self) -> None:
        """Close the file; a last write that fails raises RecordingFailed as above."""
        fh = self._fh
        if fh is None:
            return
        try:
            fh.flush()
        except OSError as exc:
            self.error = exc
            self._drop()
            raise RecordingFailed(exc.errno, f"cannot write {self.path} "
                                             f"({exc.strerror or exc})", str(self.path)) from None
        self._drop()

    @property
    def closed(self) -> bool:
        return self._fh is None

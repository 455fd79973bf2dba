"""Recording a live session: every event line appended and flushed as it arrives.

The file is the exact event stream (the runner's lines, plus the app's own ``error`` and
``info`` events for crashes, timeouts and stops), so a crash of the app or the runner
loses nothing already measured, and the file replays like any recording.
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import IO

import msgspec

from ..files.reading import open_regular
from .atomic_file import target_of
from .events import read_lines


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
        with open_regular(path) as fh:
            for raw in read_lines(fh):  # a line of gigabytes: its first 8 MB, not all
                if raw.startswith(BUILD_START.encode()) and (key := build_key(raw)):
                    keys.add(key)
    except FileNotFoundError:
        pass
    return keys


class RecordingFailed(OSError):
    """The session file could not be written (its message names the file)."""


def _append_to(path: Path) -> IO[str]:
    """``path`` opened to append (made if missing), never through a symlink at its name
    (one planted in a shared folder would send the session into another file): a link
    there is an OSError (ELOOP), said by whoever starts the session; so is a FIFO or a
    device."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | \
        getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o666)  # (non-blocking: a FIFO without a reader)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symlink in a folder others may write; a session "
                                       "is not written through it", str(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO, a device: never a session
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


class SessionWriter:
    """Appends event lines to one file, flushing after each. A file whose last line was
    cut (a crash, no newline at its end) gets its newline first, so the first new line
    is not glued onto it: readers skip the cut line and read what follows."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # opened first: a FIFO or a device at the name is refused before reading, and so
        # is a link someone else could have planted (the user's own: its target; see
        # atomic_file.target_of)
        self._file = target_of(self.path)
        self._fh: IO[str] | None = _append_to(self._file)
        # the builds the file holds (by what they say, not when or for which run): one
        # written again, by a restarted runner or a session appended to the file, is left
        # out (it was 74 builds for 27 distinct in an appended recording: 60% of it)
        try:
            self.builds = builds_in(self._file)
        except BaseException:
            self._fh.close()
            raise
        self.skipped_builds = 0
        self.lines = 0
        self.error: OSError | None = None  # the write that failed, if one did
        if self._ends_cut():
            self._fh.write("\n")
            self._fh.flush()

    def _ends_cut(self) -> bool:
        with self._file.open("rb") as fh:
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

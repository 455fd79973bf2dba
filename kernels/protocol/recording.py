"""A recording read whole: every readable event of a session file, on one time axis, with
the lines that could not be read named and counted (the reader rules of docs/protocol.md).
Each line goes through the one event validator (:mod:`protocol`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .atomic_file import open_regular
from .events import NewerProtocol, ProtocolError, Timeline, parse_line, read_lines


@dataclass(slots=True)
class Skipped:
    """Lines a reader could not read and went past: the first few, and how many."""

    keep: int = 20
    first: list[ProtocolError] = field(default_factory=list)
    count: int = 0

    def add(self, exc: ProtocolError) -> None:
        self.count += 1
        if len(self.first) < self.keep:
            self.first.append(exc)


def iter_events(lines: Iterable[str | bytes], source: str | None = None,
                skipped: Skipped | None = None) -> Iterator[dict[str, Any]]:
    """Validated events from session-file lines; the first must be the session header.

    With ``skipped``, a line after the header that cannot be read (damaged, cut off by a
    crash, not an event) is counted there and the reader goes on; without, it raises.
    A header this reader cannot read, or one of a newer protocol, always raises.
    """
    header = False
    timeline = Timeline()
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            event = parse_line(raw, lineno, source)
            if not header and event["type"] != "session":
                raise ProtocolError(f'the first event must be "session", not '
                                    f'{event["type"]!r}', lineno, source)
        except NewerProtocol:
            raise
        except ProtocolError as exc:
            if not header or skipped is None:
                raise
            if not (raw.endswith(b"\n") if isinstance(raw, bytes) else raw.endswith("\n")):
                exc = ProtocolError(f"{exc.reason} (a cut line: no newline at its end)",
                                    lineno, source)
            skipped.add(exc)
            continue
        try:
            placed = timeline.place(event)
        except ProtocolError as exc:  # a time past the bound, as the line's own
            if not header or skipped is None:
                raise ProtocolError(exc.reason, lineno, source) from None
            skipped.add(ProtocolError(exc.reason, lineno, source))
            continue
        header = True
        yield placed
    if not header:
        raise ProtocolError("no session header: the file is empty", None, source)


@dataclass(frozen=True, slots=True)
class Session:
    """A recording read whole: its header and every event (header included), and the
    lines that could not be read."""

    path: str
    header: dict[str, Any]
    events: list[dict[str, Any]]
    skipped: tuple[ProtocolError, ...] = ()  # the first lines that were skipped
    skipped_count: int = 0  # all of them

    @property
    def results(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "result"]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "error"]

    @property
    def counters(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "counters"]

    @property
    def problem(self) -> str | None:
        """The first line that could not be read and how many more; None if none."""
        if not self.skipped_count:
            return None
        more = self.skipped_count - 1
        return f"{self.skipped[0]}" + (
            f" (and {more} more unreadable line{'s' * (more > 1)}, skipped)" if more
            else " (skipped)")


PROGRESS_EVERY = 5_000  # lines between two calls of read_session's ``progress``


def read_session(path: str | Path,
                 progress: Callable[[float], None] | None = None) -> Session:
    """Every readable event of a recording; see the reader rules in docs/protocol.md.
    ``progress`` is called with the fraction of the file read, every PROGRESS_EVERY
    lines (a reader on a worker thread says how far it got)."""
    path = Path(path)
    skipped = Skipped()
    try:
        with open_regular(path) as fh:  # /dev/zero, a FIFO: refused at once
            lines = read_lines(fh)
            if progress is not None:
                lines = _reporting(lines, fh, os.fstat(fh.fileno()).st_size, progress)
            events = list(iter_events(lines, str(path), skipped))
    except OSError as exc:
        raise ProtocolError(f"cannot open: {exc.strerror or exc}", None, str(path)) from None
    return Session(str(path), events[0], events, tuple(skipped.first), skipped.count)


def _reporting(lines: Iterator[bytes], fh: IO[bytes], size: int,
               progress: Callable[[float], None]) -> Iterator[bytes]:
    for i, line in enumerate(lines, start=1):
        if i % PROGRESS_EVERY == 0:
            progress(fh.tell() / size if size else 1.0)
        yield line

"""A recording read whole: every readable event of a session file as its record, on one
time axis, with the lines that could not be read named and counted (the reader rules of
docs/protocol.md). Each line goes through the one decoder (:mod:`.decoding`).

The file is read in large chunks and each line decoded straight from its bytes; NVML
samples go into columns (:class:`~.telemetry_columns.TelemetryColumns`), one per GPU, and
the event list holds a :class:`~.telemetry_columns.TelemetryBlock` where they were. A
reader that needs only some event types (``gemmscope report``: results and errors) names
them: the other lines are told apart by their first bytes and not decoded, only checked
to be whole lines.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable, Collection, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec

from ..files.reading import MAX_BYTES, Kind, open_regular
from . import records as rec
from .decoding import EventRecord, check_any, decode, has_long_number
from .events import MAX_EVENT_BYTES, MAX_SESSION_S, NewerProtocol, ProtocolError
from .inflating import GZIP_MAGIC, Inflating
from .timeline import Timeline

if TYPE_CHECKING:  # numpy is imported with the first samples: a report needs none
    from .telemetry_columns import TelemetryBlock, TelemetryColumns


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


def _cut(exc: ProtocolError, raw: str | bytes, lineno: int, source: str | None
         ) -> ProtocolError:
    if raw.endswith(b"\n") if isinstance(raw, bytes) else raw.endswith("\n"):
        return exc
    return ProtocolError(f"{exc.reason} (a cut line: no newline at its end)", lineno, source)


def iter_events(lines: Iterable[str | bytes], source: str | None = None,
                skipped: Skipped | None = None) -> Iterator[EventRecord]:
    """Event records from session-file lines; the first must be the session header.

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
            event = decode(raw, lineno, source)
            if not header and not isinstance(event, rec.Session):
                raise ProtocolError(f'the first event must be "session", not '
                                    f'{event.type!r}', lineno, source)
        except NewerProtocol:
            raise
        except ProtocolError as exc:
            if not header or skipped is None:
                raise
            skipped.add(_cut(exc, raw, lineno, source))
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
    """A recording read whole: its header, every event (header included; the NVML samples
    as blocks of ``telemetry``'s columns), and the lines that could not be read."""

    path: str
    header: rec.Session
    events: list[EventRecord | TelemetryBlock]
    skipped: tuple[ProtocolError, ...] = ()  # the first lines that were skipped
    skipped_count: int = 0  # all of them
    telemetry: dict[int, TelemetryColumns] = field(default_factory=dict)  # by GPU
    # a compressed file that ends inside a gzip member, or with bytes that are not one
    gzip_cut: bool = False

    @property
    def results(self) -> list[rec.Result]:
        return [e for e in self.events if isinstance(e, rec.Result)]

    @property
    def errors(self) -> list[rec.Error]:
        return [e for e in self.events if isinstance(e, rec.Error)]

    @property
    def counters(self) -> list[rec.Counters]:
        return [e for e in self.events if isinstance(e, rec.Counters)]

    @property
    def samples(self) -> int:
        return sum(len(c) for c in self.telemetry.values())

    @property
    def problem(self) -> str | None:
        """The first line that could not be read and how many more; None if none."""
        if not self.skipped_count:
            return None
        more = self.skipped_count - 1
        return f"{self.skipped[0]}" + (
            f" (and {more} more unreadable line{'s' * (more > 1)}, skipped)" if more
            else " (skipped)")


# read at a time (``progress`` is called after each): small enough that a chunk's scans,
# which hold the interpreter, never keep the GUI thread waiting long while a worker reads
CHUNK_BYTES = 1 << 20
# unreadable lines read past before the rest of a file is left unread, said as a cut: a
# damaged recording has a few; a file of millions of short junk lines is not one, and
# reading each the careful way (for its message) cost 25 µs a line, a 100 MB file 20 min
MAX_UNREADABLE_LINES = 100_000
_NOT_EMPTY = re.compile(rb"[^\n]+")
_EMPTY = re.compile(rb"\n+")


def read_session(path: str | Path, progress: Callable[[float], None] | None = None,
                 only: Collection[type[rec.Event]] | None = None) -> Session:
    """Every readable event of a recording; see the reader rules in docs/protocol.md.
    ``progress`` is called with the fraction of the file read after each chunk (a reader
    on a worker thread says how far it got). ``only``: the event types the caller needs
    (the header is always read); lines of other types are not decoded."""
    path = Path(path)
    try:
        with open_regular(path) as fh:  # /dev/zero, a FIFO: refused at once
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_BYTES[Kind.RECORDING]:
                raise ProtocolError(f"{size:,} bytes; a recording is at most "
                                    f"{MAX_BYTES[Kind.RECORDING]:,}", None, str(path))
            magic = fh.read(2)
            fh.seek(0)  # a regular file (open_regular): it seeks
            if magic != GZIP_MAGIC:
                return _read(fh, str(path), size, progress, only)
            inflating = Inflating(fh, str(path), size)
            session = _read(inflating, str(path), size, progress, only, inflating.consumed)
            if not inflating.cut:
                return session
            cut = ProtocolError(inflating.cut_reason, None, str(path))
            return dataclasses.replace(session, skipped=(*session.skipped, cut)[:20],
                                       skipped_count=session.skipped_count + 1,
                                       gzip_cut=True)
    except OSError as exc:
        raise ProtocolError(f"cannot open: {exc.strerror or exc}", None, str(path)) from None


# a sample's line as the runner writes it, or as Python's json.dumps does (a recording made
# or converted by another tool): decoded with the others of its run, not one by one
_TELEMETRY = (b'{"type":"telemetry",', b'{"type": "telemetry",')
_samples = msgspec.json.Decoder(list[rec.Telemetry])


def _read(fh: IO[bytes] | Inflating, source: str, size: int,
          progress: Callable[[float], None] | None,
          only: Collection[type[rec.Event]] | None,
          consumed: Callable[[], int] | None = None) -> Session:
    # the types of the whole lines passed over (``only``): none before the header is read
    skip: set[bytes] | None = None if only is None else set()
    unwanted = () if only is None else tuple(
        tag.encode() for tag, cls in rec.BY_TYPE.items()
        if cls not in only and cls is not rec.Session)
    kept = tuple(only or ())
    skipped = Skipped()
    timeline = Timeline()
    events: list[EventRecord | TelemetryBlock] = []
    columns: dict[int, TelemetryColumns] = {}
    # telemetry lines since the last other event (decoded together, into columns)
    lines: list[bytes] = []
    numbers: list[int] = []
    header: rec.Session | None = None
    shared = _Shared()

    def samples() -> None:
        from .telemetry_columns import TelemetryBlock, TelemetryColumns

        try:
            got: list[rec.Telemetry] = _samples.decode(b"[" + b",".join(lines) + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError):
            got = []
            for lineno, raw in zip(numbers, lines, strict=True):
                try:
                    got.append(_sample(decode(raw, lineno, source)))
                except ProtocolError as exc:
                    skipped.add(_cut(exc, raw, lineno, source))
        else:
            if any(e.id is not None for e in got):
                for lineno, e in zip(numbers, got, strict=True):
                    try:
                        check_any(e)
                    except ProtocolError as exc:
                        skipped.add(ProtocolError(exc.reason, lineno, source))
                        e.t = float("nan")  # dropped below
                got = [e for e in got if e.t == e.t]
        if timeline.offset_s:
            for e in got:
                e.t = round(e.t + timeline.offset_s, 6)
            if any(abs(e.t) > MAX_SESSION_S for e in got):  # restarts add up
                far = {id(e) for e in got if abs(e.t) > MAX_SESSION_S}
                got = [e for e in got if id(e) not in far]
                skipped.add(ProtocolError(f'telemetry event: a runner restart puts it past '
                                          f'{MAX_SESSION_S:g} s from the session\'s start',
                                          numbers[0], source))
        lines.clear()
        numbers.clear()
        runs: dict[int, list[rec.Telemetry]] = {}
        for e in got:
            runs.setdefault(e.device or 0, []).append(e)
        for device, run in runs.items():
            cols = columns.get(device)
            if cols is None:
                cols = columns[device] = TelemetryColumns()
            start = len(cols)
            cols.add(run)
            timeline.last_s = max(timeline.last_s, float(cols.t[start:len(cols)].max()))
            events.append(TelemetryBlock(device, cols, start, len(cols)))

    for lineno, raw, scanned in _lines(fh, progress, size, skip, consumed):
        if raw[:1] != b"{" and not raw.strip():
            continue
        if scanned and header is not None and raw.startswith(_TELEMETRY):
            lines.append(raw)  # a sample, decoded with the others of its run
            numbers.append(lineno)
            continue
        try:
            kind = _peek(raw)
            likely = _BY_TAG.get(kind) if kind is not None else None
            event = decode(raw, lineno, source, scanned=scanned, likely=likely)
            if header is None and not isinstance(event, rec.Session):
                raise ProtocolError(f'the first event must be "session", not '
                                    f'{event.type!r}', lineno, source)
        except NewerProtocol:
            raise
        except ProtocolError as exc:
            if header is None:
                raise
            skipped.add(_cut(exc, raw, lineno, source))
            if skipped.count >= MAX_UNREADABLE_LINES:  # said first, as a cut is
                skipped.first.insert(0, ProtocolError(
                    f"{skipped.count:,} unreadable lines: the file is not read past this "
                    "one", lineno, source))
                break
            continue
        if skip is not None and not isinstance(event, (rec.Session, *kept)):
            continue  # a type not asked for, in a line written otherwise than the runner's
        if lines:
            samples()
        if isinstance(event, rec.Telemetry):  # a sample the careful way read
            lines.append(raw)
            numbers.append(lineno)
            continue
        try:
            event = timeline.place(event)
        except ProtocolError as exc:  # a time past the bound, as the line's own
            if header is None:
                raise ProtocolError(exc.reason, lineno, source) from None
            skipped.add(ProtocolError(exc.reason, lineno, source))
            continue
        if header is None:
            assert isinstance(event, rec.Session)
            header = event
            if skip is not None:
                skip.update(unwanted)  # from the next line on
        elif isinstance(event, rec.Build | rec.SourceCounters):
            shared.share(event)
        events.append(event)
    if lines:
        samples()
    if header is None:
        raise ProtocolError("no session header: the file is empty", None, source)
    for cols in columns.values():
        cols.fit()
    return Session(source, header, events, tuple(skipped.first), skipped.count, columns)


class _Shared:
    """The large texts of a recording held once: a build's sources and SASS, and the rows
    of per-line counters, are mostly the same from event to event (every level's build
    carries the shared headers, a restarted runner writes its builds again), so each
    distinct one is kept once and the records share it (records are read, never changed)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.rows: dict[bytes, list[Any]] = {}

    def text(self, value: str | None) -> str | None:
        return None if value is None else self.texts.setdefault(value, value)

    def share(self, event: rec.Build | rec.SourceCounters) -> None:
        if isinstance(event, rec.Build):
            if event.sources:
                event.sources = {k: self.texts.setdefault(v, v)
                                 for k, v in event.sources.items()}
            event.sass = self.text(event.sass)
        elif event.lines:
            key = msgspec.json.encode(event.lines)
            event.lines = self.rows.setdefault(key, event.lines)


def _sample(event: EventRecord) -> rec.Telemetry:
    if not isinstance(event, rec.Telemetry):
        raise ProtocolError(f"a {event.type} event where a telemetry sample was")
    return event


def _peek(raw: bytes) -> bytes | None:
    """The type of a line as the runner writes it (``{"type":"...``), without decoding."""
    if raw.startswith(b'{"type":"'):
        end = raw.find(b'"', 9)
        if end > 0:
            return raw[9:end]
    return None


def _lines(fh: IO[bytes] | Inflating, progress: Callable[[float], None] | None, size: int,
           skip: Collection[bytes] | None = None,
           consumed: Callable[[], int] | None = None) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, line with its newline, no long digit run in it) of a byte stream,
    read in chunks (each scanned for digit runs once); of a line longer than
    MAX_EVENT_BYTES only the first MAX_EVENT_BYTES + 1 bytes (and its newline) are kept,
    so that no line fills the memory: the decoder refuses it as too long.

    ``skip``: the types (``b"telemetry"``...) of the lines the caller does not need,
    read as the chunks go (the caller fills it once the header is read): a whole line of
    one (:func:`_kept`) is passed over, and the lines yielded are not scanned."""
    lineno = 0
    carry = b""  # the start of a line the next chunk ends
    long_line = False  # dropping the rest of a line already too long (``carry`` kept)
    done = 0
    while True:
        data = fh.read(CHUNK_BYTES)
        if not data:
            break
        done += len(data)
        if long_line:
            newline = data.find(b"\n")
            if newline >= 0:
                lineno += 1
                yield lineno, carry + b"\n", False
                carry, long_line, data = b"", False, data[newline + 1:]
        if not long_line:
            start = 0
            if skip is not None and carry and (newline := data.find(b"\n")) >= 0:
                # the line the last chunk began, read alone: the chunk is not copied
                first = carry + data[:newline + 1]
                lineno = yield from _kept(first, len(first), skip, lineno)
                carry, start = b"", newline + 1
            chunk = carry + data if carry else data
            end = chunk.rfind(b"\n") + 1  # its whole lines end here
            if skip is not None:
                if end > start:
                    lineno = yield from _kept(chunk, end, skip, lineno, start)
            elif end:
                clean = not has_long_number(chunk)  # its whole lines are scanned
                # the lines that are not empty, found by one scan in C: a run of empty
                # lines (a file of newlines) costs no step of Python per line
                base, at = lineno, 0
                for m in _NOT_EMPTY.finditer(chunk, 0, end):
                    base += chunk.count(b"\n", at, m.start())
                    at = m.start()
                    yield base + 1, m[0][:MAX_EVENT_BYTES + 1] + b"\n", clean
                lineno += chunk.count(b"\n", 0, end)
            carry = chunk[end:]
            if len(carry) > MAX_EVENT_BYTES:
                carry, long_line = carry[:MAX_EVENT_BYTES + 1], True
        if progress is not None:  # by the bytes of the file read (compressed: consumed)
            at = consumed() if consumed is not None else done
            progress(min(1.0, at / size) if size else 1.0)
    if carry:
        yield lineno + 1, carry, False


_BEGIN = b'{"type":"'
_BY_TAG = {tag.encode(): cls for tag, cls in rec.BY_TYPE.items()}  # by a line's first bytes
_LONGEST_TAG = max(map(len, _BY_TAG))
# a run of short whole lines of one type, matched at once (a longer line ends the run: it
# is looked at alone, its end found by the fast byte search the regex engine lacks)
_SHORT = 4096


@functools.cache
def _run_of(tag: bytes) -> re.Pattern[bytes]:
    line = re.escape(_BEGIN + tag + b'"') + rb"[^\n]{0,%d}\}\n" % _SHORT
    return re.compile(b"(?:" + line + b")+")


def _kept(chunk: bytes, end: int, skip: Collection[bytes], lineno: int, start: int = 0
          ) -> Generator[tuple[int, bytes, bool], None, int]:
    """(line number, line, False) of the lines of ``chunk[start:end]`` (whole lines) but the
    whole lines of a type in ``skip``: begun as the runner writes an event
    (``{"type":"telemetry"``, the type unescaped), ended by ``}`` and not too long. Any
    other line is yielded (a cut or damaged one, one written otherwise: the decoder
    judges it). Returns the number of the last line."""
    find, starts = chunk.find, chunk.startswith
    at = start
    while at < end:
        if skip and starts(_BEGIN, at):
            quote = find(b'"', at + 9, at + 10 + _LONGEST_TAG)
            tag = chunk[at + 9:quote] if quote > 0 else b""
            if tag in skip:
                run = _run_of(tag).match(chunk, at, end)
                if run is not None:  # short lines, one after another
                    lineno += chunk.count(b"\n", at, run.end())
                    at = run.end()
                    continue
                newline = find(b"\n", at)
                if chunk[newline - 1] == 0x7D and newline - at <= MAX_EVENT_BYTES:  # "}"
                    lineno += 1
                    at = newline + 1
                    continue
        if chunk[at] == 0x0A:  # a run of empty lines, passed over at once
            blank = _EMPTY.match(chunk, at, end)
            assert blank is not None
            lineno += blank.end() - at
            at = blank.end()
            continue
        newline = find(b"\n", at)
        lineno += 1
        yield lineno, chunk[at:min(newline, at + MAX_EVENT_BYTES + 1)] + b"\n", False
        at = newline + 1
    return lineno

"""What a runner session makes of one line the runner wrote: its record, decoded once at
the edge; a line that is no event (or too long to read), said and dropped; or a runner
this reader cannot talk to (a newer protocol in its header, ``ready`` before any
header), refused. And what it says of a runner that exited."""

from __future__ import annotations

from typing import Any

import msgspec

from ..protocol import records as rec
from ..protocol.decoding import EventRecord, decode
from ..protocol.events import MAX_LINE_BYTES, NewerProtocol, ProtocolError

TOO_LONG = f"the runner wrote a line longer than {MAX_LINE_BYTES:,} bytes; it was dropped"


class Incompatible(Exception):
    """The runner speaks a protocol this reader cannot talk to; starting it again will
    not help. The message is the reason."""


def runner_event(line: str, header_seen: bool, header_extra: dict[str, Any]) -> EventRecord:
    """``line`` (stripped, not empty) as its record; ``header_extra``'s fields are added
    to the first ``session`` header. ProtocolError: not an event; Incompatible: see there."""
    try:
        event = decode(line, source="runner")
    except NewerProtocol as exc:
        if not header_seen and '"session"' in line:
            raise Incompatible(str(exc.reason)) from exc
        raise
    if isinstance(event, rec.Ready) and not header_seen:
        raise Incompatible("it said ready without a session header")
    if isinstance(event, rec.Session) and not header_seen and header_extra:
        event = msgspec.structs.replace(event, **header_extra)
    return event


def not_an_event_text(line: str, exc: ProtocolError) -> str:
    """What the session says of a line that is no event (the line cut to 120 characters)."""
    short = line if len(line) <= 120 else line[:117] + "..."
    return f"the runner wrote a line that is not an event ({exc}): {short}"


def exit_text(ran_on: bool, code: int | None, stderr_tail: str) -> str:
    """Why the runner stopped, where no transport explains it better: it closed its
    output and ran on (``ran_on``), or exited with ``code``; then its last stderr lines."""
    why = "the runner closed its output and ran on; it was killed" if ran_on \
        else f"the runner exited (code {code})"
    return why + (f": {stderr_tail}" if stderr_tail else "")

"""The session's time axis: the one place where runner restarts are joined."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from .decoding import EventRecord
from .events import MAX_SESSION_S, ProtocolError
from .records import Event, Other, Restart, Session

if TYPE_CHECKING:
    from .telemetry_columns import TelemetryBlock


class Timeline:
    """Puts events on the session's time axis.

    Each runner counts ``t`` from its own header (t = 0, the moment it is written). The
    first ``session`` header anchors the axis; a later one (a runner restarted in the same
    session, or a version 1 file) becomes a ``restart`` event carrying that header as
    ``runner``, and the new runner's events are shifted to go on from there. Live, ``now``
    is the owner's clock when the event arrived, so every event is placed on that clock;
    reading a file, no ``now`` is given and a restart goes on from the latest time seen.
    Events are placed in place: a record placed is the record read.
    """

    def __init__(self) -> None:
        self.offset_s = 0.0
        self.last_s = 0.0
        self.header: Session | None = None
        self.restarts = 0

    def stamp(self, now: float) -> float:
        """The time of an event of the owner's own (not a runner's) that happens ``now``:
        never before the latest event placed. A runner's events are placed by when its
        header arrived, so a header read late (a busy machine) places the lines after it
        later than they arrived, and an error said on the owner's clock as the runner
        exits could otherwise come before the runner's last repeat."""
        t = max(now, self.last_s)
        self.last_s = t
        return t

    @overload
    def place(self, event: EventRecord, now: float | None = None) -> EventRecord: ...
    @overload
    def place(self, event: TelemetryBlock, now: float | None = None) -> TelemetryBlock: ...
    def place(self, event: EventRecord | TelemetryBlock, now: float | None = None
              ) -> EventRecord | TelemetryBlock:
        if not isinstance(event, Event | Other):
            return event  # a recording's block of samples: placed as they were read
        t = event.t
        if isinstance(event, Session):
            if self.header is None:
                self.header = event
                if now is not None:
                    self.offset_s = now - t
            else:
                self.restarts += 1
                # never before what the previous runner said: one axis, in order
                self.offset_s = max(now - t, self.last_s - t) if now is not None \
                    else self.last_s - t
                event = Restart(t=t, restarts=self.restarts, runner=event)
        if self.offset_s:
            placed = round(t + self.offset_s, 6)
            if not -MAX_SESSION_S <= placed <= MAX_SESSION_S:  # restarts add up
                raise ProtocolError(f'{event.type} event: "t" = {t:.6g} s puts it '
                                    f'{placed:.6g} s from the session\'s start, past '
                                    f'{MAX_SESSION_S:g} s')
            event.t = placed
        if event.t > self.last_s:
            self.last_s = event.t
        return event

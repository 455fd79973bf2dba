"""What every event record shares (``records`` lists them all): the one number rule,
a session time, a device index, the base of every record and part of one, an event's
``type`` and ``t``, and where it ran."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from .events import MAX_SESSION_S

# the one number rule: a finite double (JSON ints read as floats; a bool is no number)
Number = Annotated[float, msgspec.Meta(ge=-1.7976931348623157e308, le=1.7976931348623157e308)]


# a time on the session's axis: at most MAX_SESSION_S either side of its start
SessionTime = Annotated[float, msgspec.Meta(ge=-MAX_SESSION_S, le=MAX_SESSION_S)]


Index = Annotated[int, msgspec.Meta(ge=0)]  # a device index: 0, 1, ...


class Record(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """A part of an event (a device, a catalog entry...)."""


class Event(Record, tag_field="type", kw_only=True):
    """Every event has a ``type`` (its record class) and ``t``, session seconds."""

    t: SessionTime

    # fields whose entries must all read, or the event is refused (elsewhere an entry of
    # another type in a list or map is dropped: reader rule 7)
    STRICT: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def repair(cls, obj: dict[str, Any]) -> None:
        """The careful way's first step for a line whose fields did not decode (in place):
        what only the record's owner knows how to read (source_counters' rows)."""

    @property
    def type(self) -> str:
        return str(self.__struct_config__.tag)


class Placed(Event, kw_only=True):
    """Where an event ran (version 4: absent, device 0) and the run it belongs to."""

    device: Index | None = None
    host: str | None = None
    worker: str | None = None
    id: Any = None  # the run command's id, echoed (any JSON value)

    @property
    def device_index(self) -> int:
        return self.device or 0

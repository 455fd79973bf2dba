"""A line, or a dict made in this process, into its event record: the one validator.

One pass for a good line: msgspec decodes and validates it into its record
(:mod:`.records`) straight from the bytes. A line that fails goes the careful way, which
says why, line by line, as the reader rules of docs/protocol.md ask: the bounded decoder
of :mod:`.events` (UTF-8, nesting, integer digits, NaN and overflow as null), then the
record's fields one by one, where an optional field of another type reads as null, a list
or map keeps the entries that read, and a required field that does not read refuses the
line with a message naming the field.

The limits at the edge hold on both ways: a line longer than MAX_EVENT_BYTES is refused
before anything is decoded; a digit run longer than MAX_INT_DIGITS sends the line the
careful way (whose decoder refuses an integer that long); nesting is bounded by the
records' types, and the values typed ``Any`` (a run's ``id``, a build's ``occupancy``) are
held to MAX_DEPTH and MAX_INT_DIGITS after decoding.
"""

from __future__ import annotations

import functools
import math
from typing import Any, TypeVar, overload

import msgspec
import msgspec.inspect as mi

from . import records as rec
from .events import (
    MAX_DEPTH,
    MAX_EVENT_BYTES,
    MAX_INT_DIGITS,
    MAX_SESSION_S,
    PROTOCOL_VERSION,
    NewerProtocol,
    ProtocolError,
    loads,
)

EventRecord = rec.Event | rec.Other

_encoder = msgspec.json.Encoder()
# digits stay digits, everything else a space: a run of MAX_INT_DIGITS + 1 zeros is a
# long number somewhere in the line (or a long run of digits in a text: the careful way
# then tells them apart)
_DIGITS = bytes(48 if 48 <= b < 58 else 32 for b in range(256))
_LONG_RUN = b"0" * (MAX_INT_DIGITS + 1)


def decode(line: str | bytes, lineno: int | None = None, source: str | None = None, *,
           scanned: bool = False, likely: type[rec.Event] | None = None) -> EventRecord:
    """The record of one event line; ProtocolError naming the line (``lineno``, ``source``)
    when it cannot be read, NewerProtocol for a header of a newer protocol.

    ``scanned``: the caller found no long digit run in the line already (a reader that
    scans its chunks whole); ``likely``: the type the line probably is (its first bytes
    said), decoded as that type first."""
    try:
        return _decode(line, scanned, likely)
    except ProtocolError as exc:
        raise type(exc)(exc.reason, lineno, source) from None


def has_long_number(data: bytes) -> bool:
    """Whether ``data`` holds a run of more than MAX_INT_DIGITS digits (in a number, or
    in a text: the careful way tells them apart)."""
    return _LONG_RUN in data.translate(_DIGITS)


@functools.cache
def _decoder_of(cls: type[rec.Event] | None) -> msgspec.json.Decoder[Any]:
    """The decoder of one record type, or of every event type (None): made when first
    needed (the one of every type takes a while to build)."""
    return msgspec.json.Decoder(rec.AnyEvent if cls is None else cls)


def _decode(line: str | bytes, scanned: bool, likely: type[rec.Event] | None
            ) -> EventRecord:
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    size = len(raw) - raw.endswith(b"\n")
    if size > MAX_EVENT_BYTES:
        raise ProtocolError(f"longer than {MAX_EVENT_BYTES} bytes")
    if not scanned and size > MAX_INT_DIGITS and has_long_number(raw):
        return from_builtins(loads(raw))
    try:
        event = _decoder_of(likely).decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return from_builtins(loads(raw))
    check_any(event)
    return _checked(event)


def from_builtins(obj: Any) -> EventRecord:
    """The record of a decoded event (a dict, as json or the session builds them); the
    reader rules as for a line (ProtocolError without a line number)."""
    if not isinstance(obj, dict):
        raise ProtocolError("an event must be a JSON object")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolError('an event needs a string "type"')
    t = obj.get("t")
    if not isinstance(t, int | float) or isinstance(t, bool) or not math.isfinite(t):
        raise ProtocolError(f'{kind} event needs a number "t"')
    _session_time(kind, t)
    cls = rec.BY_TYPE.get(kind)
    if cls is None:
        return rec.Other(kind, float(t), {k: v for k, v in obj.items() if k not in ("type", "t")})
    try:
        event = msgspec.convert(obj, cls)
    except msgspec.ValidationError:
        obj = dict(obj)
        cls.repair(obj)
        event = msgspec.convert(_read_event(obj, cls, kind), cls)
    return _checked(event)


_T = TypeVar("_T")


@overload
def of(obj: dict[str, Any]) -> rec.Event: ...
@overload
def of(obj: _T) -> _T: ...
def of(obj: Any) -> Any:
    """A known event made in this process (the session's own, a test's), as its record
    (what is not a dict, a record already, is returned as it is); ValueError for an
    unknown type."""
    if not isinstance(obj, dict):
        return obj
    event = from_builtins(obj)
    if isinstance(event, rec.Other):
        raise ValueError(f"not an event type of this protocol: {event.type!r}")
    return event


def encode(event: EventRecord) -> str:
    """One event as one line of JSON (no newline); the defaults are left out."""
    if isinstance(event, rec.Other):
        from .events import dumps

        return dumps({"type": event.type, "t": event.t, **event.fields})
    return _encoder.encode(event).decode()


def to_builtins(event: EventRecord) -> dict[str, Any]:
    """The event as JSON values (``type`` first), as :func:`encode` writes it."""
    if isinstance(event, rec.Other):
        return {"type": event.type, "t": event.t, **event.fields}
    out: dict[str, Any] = msgspec.to_builtins(event)
    return out


def _session_time(kind: str, t: float) -> None:
    if not -MAX_SESSION_S <= t <= MAX_SESSION_S:  # 1e300: no session lasts that long
        raise ProtocolError(f'{kind} event: "t" = {t:.6g} s is not a session time (at '
                            f'most {MAX_SESSION_S:g} s either side of its start)')


def _checked(event: rec.Event) -> rec.Event:
    _session_time(event.type, event.t)
    if isinstance(event, rec.Session) and event.protocol > PROTOCOL_VERSION:
        raise NewerProtocol(f"protocol {event.protocol} is newer than this reader "
                            f"({PROTOCOL_VERSION}); update gemmscope to read it")
    return event


# ------------------------------------------------------------------ values typed Any
def check_any(event: rec.Event) -> None:
    """The limits on what the types do not bound: a run id, a build's nested facts."""
    values: list[Any] = []
    if isinstance(event, rec.Placed) and event.id is not None:
        values.append(event.id)
    if isinstance(event, rec.Build):
        values += [event.occupancy, event.sass_from]
    for value in values:
        problem = _unbounded(value, 2)  # the event object is the first level
        if problem:
            raise ProtocolError(problem)


def _unbounded(value: Any, depth: int) -> str | None:
    if isinstance(value, dict | list):
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        items = value.values() if isinstance(value, dict) else value
        return next((p for v in items if (p := _unbounded(v, depth + 1))), None)
    if type(value) is int and len(str(abs(value))) > MAX_INT_DIGITS:
        return f"an integer of {len(str(abs(value)))} digits (at most {MAX_INT_DIGITS})"
    return None


# ------------------------------------------------------------------ the careful way
class _Unread(Exception):
    """A value that does not read as its type; ``why`` says what it should be."""

    def __init__(self, why: str, key: Any = None):
        super().__init__(why)
        self.why = why
        self.key = key


@functools.cache
def _info(cls: type) -> mi.StructType:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return info


def _read_event(obj: dict[str, Any], cls: type[rec.Event], kind: str) -> dict[str, Any]:
    """The fields of ``obj`` that read as ``cls``'s; ProtocolError where a required (or
    strict) one does not."""
    out: dict[str, Any] = {}
    for f in _info(cls).fields:
        name = f.encode_name
        if name not in obj:
            if f.required:
                raise ProtocolError(f'{kind} event lacks "{name}"')
            continue
        value = obj[name]
        if value is None and not f.required:
            continue  # null: absent (its default)
        strict = name in cls.STRICT
        try:
            out[name] = _read(value, f.type, strict)
        except _Unread as exc:
            if not (f.required or strict):
                continue  # reads as absent: null (rule 7)
            if exc.key is not None:
                noun = name[:-1] if name.endswith("s") else name
                raise ProtocolError(f"{kind} event: {noun} {exc.key!r} must be {exc.why}, "
                                    f"not {value[exc.key]!r}") from None
            if isinstance(value, bool) and "bool" not in exc.why:
                raise ProtocolError(f'{kind} event: "{name}" must not be a boolean') from None
            raise ProtocolError(f'{kind} event: "{name}" must be {exc.why}, not {value!r}'
                                ) from None
    return out


def _read(value: Any, info: mi.Type, strict: bool = False) -> Any:
    """``value`` as ``info`` says; in a list or map the entries that read (all of them,
    or _Unread naming the first that does not, where ``strict``)."""
    if isinstance(info, mi.AnyType):
        return value
    if isinstance(info, mi.UnionType):
        if value is None and any(isinstance(t, mi.NoneType) for t in info.types):
            return None
        for t in info.types:
            if not isinstance(t, mi.NoneType):
                try:
                    return _read(value, t, strict)
                except _Unread as exc:
                    if exc.key is not None:
                        raise  # the right container, an entry that does not read
                    continue
        raise _Unread(_text(info))
    if isinstance(info, mi.ListType | mi.VarTupleType):
        if not isinstance(value, list):
            raise _Unread(_text(info))
        return [v for v in (_entry(x, info.item_type, strict, i) for i, x in enumerate(value))
                if v is not _SKIP]
    if isinstance(info, mi.TupleType):
        if not isinstance(value, list) or len(value) != len(info.item_types):
            raise _Unread(_text(info))
        return [_read(x, t) for x, t in zip(value, info.item_types, strict=True)]
    if isinstance(info, mi.DictType):
        if not isinstance(value, dict):
            raise _Unread(_text(info))
        out = {}
        for k, x in value.items():
            if not isinstance(k, str):
                continue
            v = _entry(x, info.value_type, strict, k)
            if v is not _SKIP:
                out[k] = v
        return out
    if isinstance(info, mi.StructType) and info.array_like:
        if not isinstance(value, list) or len(value) > len(info.fields):
            raise _Unread("a list")
        cells = []
        for f, x in zip(info.fields, value, strict=False):
            try:
                cells.append(_read(x, f.type))
            except _Unread:
                if f.required:
                    raise _Unread("a list") from None
                cells.append(f.default)
        return cells
    if isinstance(info, mi.StructType):
        if not isinstance(value, dict):
            raise _Unread("an object")
        fields = {}
        for f in info.fields:
            if f.encode_name in value:
                try:
                    fields[f.encode_name] = _read(value[f.encode_name], f.type)
                except _Unread:
                    if f.required:
                        raise _Unread("an object") from None
            elif f.required:
                raise _Unread("an object")
        return fields
    if _scalar_reads(value, info):
        return value
    raise _Unread(_text(info))


_SKIP = object()


def _entry(value: Any, info: mi.Type, strict: bool, key: Any) -> Any:
    try:
        return _read(value, info)
    except _Unread as exc:
        if strict:
            raise _Unread(exc.why, key) from None
        return _SKIP


def _scalar_reads(value: Any, info: mi.Type) -> bool:
    kind = type(value)
    if isinstance(info, mi.IntType):
        return kind is int and _within(value, info)
    if isinstance(info, mi.FloatType):
        return kind in (int, float) and math.isfinite(value) and _within(value, info)
    if isinstance(info, mi.StrType):
        return kind is str
    if isinstance(info, mi.BoolType):
        return kind is bool
    if isinstance(info, mi.EnumType):
        return kind is str and value in {m.value for m in info.cls}
    if isinstance(info, mi.NoneType):
        return value is None
    return False


def _within(value: float, info: mi.IntType | mi.FloatType) -> bool:
    return ((info.ge is None or value >= info.ge) and (info.le is None or value <= info.le)
            and (info.gt is None or value > info.gt) and (info.lt is None or value < info.lt))


def _text(info: mi.Type) -> str:
    """What a value of this type is, in a message."""
    if isinstance(info, mi.UnionType):
        parts = [_text(t) for t in info.types if not isinstance(t, mi.NoneType)]
        null = " or null" if len(parts) < len(info.types) else ""
        return " or ".join(parts) + null
    if isinstance(info, mi.EnumType):
        return "one of " + ", ".join(m.value for m in info.cls)
    if isinstance(info, mi.IntType) and info.ge == 0:
        return "an index (0, 1, ...)"
    return {mi.IntType: "int", mi.FloatType: "a number", mi.StrType: "str",
            mi.BoolType: "bool", mi.DictType: "dict", mi.ListType: "list",
            mi.VarTupleType: "list", mi.TupleType: "list", mi.StructType: "an object",
            mi.NoneType: "null"}.get(type(info), "any value")

"""The ``source_counters`` event: per-SASS-line counters of one level, as Nsight Compute's
source page gave them (``gemmscope record --ncu-source``; docs/protocol.md).

This module owns the event's shape: its per-line fields, its bounds, and how a reader
bounds its rows (``normalize``, run once as ``records.SourceCounters`` decodes), so that the writer
(``kernels/profile/ncu_source_step.py``) and the readers agree on one definition. Qt-free.

Lines are stored as rows (lists) under ``fields``, the names in ``FIELDS`` order: a whole
kernel is a few thousand SASS lines, and a dict per line would repeat every name on each.
A reader gets each row as a :class:`SassLine` (decoded from the row as it is when the
event is in ``FIELDS`` order and within the bounds, which is how gemmscope writes it; read
cell by cell by :func:`clean_row` otherwise).
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated, Any

import msgspec

TYPE = "source_counters"

# per-line fields, in row order; ``columns`` in the event says which ncu column each came
# from, and a field ncu did not give is null in every row
FIELDS = ("offset", "sass", "source", "inst_executed", "stall_samples",
          "stall_samples_not_issued", "smem_wavefronts", "smem_wavefronts_ideal",
          "smem_excess_wavefronts", "smem_conflicts_n_way", "stalls")
NUMBER_FIELDS = FIELDS[3:10]
INDEX = {name: i for i, name in enumerate(FIELDS)}

MAX_LINES = 4096  # rows kept per event (the largest kernel, mma_sync scalar, has ~6000)
MAX_REASONS = 4  # stall reasons kept per line (the largest ones)
MAX_SASS_CHARS = 120  # of an instruction's text
MAX_PATH_CHARS = 300
MAX_TEXT_CHARS = 2000  # reason, cut, command items


class Status(StrEnum):
    """Whether the event holds lines, and if not, why not."""

    OK = "ok"  # lines from the profiler's source page
    MISSING = "missing"  # no profiler here
    REFUSED = "refused"  # the profiler could not read the GPU's counters (permissions)
    TIMEOUT = "timeout"  # the profiler ran past its time
    UNREADABLE = "unreadable"  # it printed a page in a format this reader does not know
    FAILED = "failed"  # any other failure (exit code, no kernel profiled, no time left)


_Num = Annotated[float, msgspec.Meta(ge=-1.7976931348623157e308, le=1.7976931348623157e308)]


class SassLine(msgspec.Struct, array_like=True, gc=False):
    """One row: a SASS line's counts (None where ncu gave none)."""

    offset: Annotated[int, msgspec.Meta(ge=0, lt=1 << 40)]
    sass: Annotated[str, msgspec.Meta(max_length=MAX_SASS_CHARS)] | None = None
    source: tuple[Annotated[str, msgspec.Meta(max_length=MAX_PATH_CHARS)],
                  Annotated[int, msgspec.Meta(ge=0)]] | None = None  # (file, line)
    inst_executed: _Num | None = None
    stall_samples: _Num | None = None
    stall_samples_not_issued: _Num | None = None
    smem_wavefronts: _Num | None = None
    smem_wavefronts_ideal: _Num | None = None
    smem_excess_wavefronts: _Num | None = None
    smem_conflicts_n_way: _Num | None = None
    stalls: Annotated[dict[str, _Num], msgspec.Meta(max_length=MAX_REASONS)] | None = None


def _text(value: Any, limit: int = MAX_TEXT_CHARS) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _source(value: Any) -> list[Any] | None:
    """``[file, line]`` or null."""
    if (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], int) and not isinstance(value[1], bool)
            and value[1] >= 0):
        return [value[0][:MAX_PATH_CHARS], value[1]]
    return None


def largest(value: Any, keep: int) -> dict[str, int | float] | None:
    """{name: number}: the ``keep`` largest numbers, largest first (None for a non-map)."""
    if not isinstance(value, dict):
        return None
    pairs = [(k[:60], n) for k, v in value.items()
             if isinstance(k, str) and (n := _number(v)) is not None]
    pairs.sort(key=lambda kv: -kv[1])
    return dict(pairs[:keep])


def clean_row(row: Any, where: list[int | None] | None = None) -> list[Any] | None:
    """One line's row in ``FIELDS`` order, bounded and typed; None for a row without an
    integer offset. ``where``: each field's position in the row as written (None: absent),
    for rows written under another ``fields`` list."""
    if not isinstance(row, list) or not row:
        return None
    if where is None:
        cells = list(row[:len(FIELDS)]) + [None] * (len(FIELDS) - len(row))
    else:
        cells = [row[i] if i is not None and i < len(row) else None for i in where]
    offset = cells[0]
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 1 << 40:
        return None
    out: list[Any] = [offset, _text(cells[1], MAX_SASS_CHARS), _source(cells[2])]
    out += [_number(v) for v in cells[3:3 + len(NUMBER_FIELDS)]]
    out.append(largest(cells[-1], MAX_REASONS))
    return out


def positions(fields: Any) -> list[int | None] | None:
    """Where each of ``FIELDS`` is in rows written under ``fields`` (None: rows cannot be
    read, there is no ``offset``)."""
    if not isinstance(fields, list) or "offset" not in fields:
        return None
    names = [f if isinstance(f, str) else None for f in fields]
    return [names.index(f) if f in names else None for f in FIELDS]


def repair(obj: dict[str, Any]) -> None:
    """The careful way (an event whose rows did not decode as SassLines): each row read cell
    by cell, in ``FIELDS`` order, before the record is made."""
    rows, where = obj.get("lines"), positions(obj.get("fields"))
    if not isinstance(rows, list) or where is None:
        if isinstance(rows, list) and not isinstance(obj.get("reason"), str):
            obj["reason"] = 'lines without a "fields" list naming "offset"'
        obj["lines"] = None
        return
    kept = [r for r in (clean_row(x, where) for x in rows[:MAX_LINES]) if r is not None]
    if len(kept) < len(rows):
        obj["lines_unread"] = len(rows) - len(kept)  # past MAX_LINES or without an offset
    obj["lines"] = kept
    obj["fields"] = list(FIELDS)


def normalize(event: Any) -> None:
    """Bound a ``source_counters`` record as it is decoded (``records.SourceCounters``; the
    reader rules in docs/protocol.md): texts cut, rows in ``FIELDS`` order (rows decoded
    under another ``fields`` list read again by name), at most MAX_LINES of them; an ``ok``
    event without readable lines reads as ``unreadable``, saying why."""
    for name in ("reason", "cut", "kernel", "variant", "tool_version", "launch"):
        setattr(event, name, _text(getattr(event, name)))
    if event.command is not None:
        event.command = [c[:MAX_TEXT_CHARS] for c in event.command[:64]]
    rows = event.lines
    if rows is not None and event.fields != list(FIELDS):
        where = positions(event.fields)
        if where is None:
            event.reason = event.reason or 'lines without a "fields" list naming "offset"'
            rows = None
        else:
            cleaned = (clean_row(list(msgspec.structs.astuple(r)), where) for r in rows)
            rows = [SassLine(*r) for r in cleaned if r is not None]
            event.fields = list(FIELDS)
    if rows is None:
        event.lines = None
        if event.status == Status.OK:
            event.status = Status.UNREADABLE
            event.reason = event.reason or "the event holds no lines"
    else:
        if len(rows) > MAX_LINES:
            event.lines_unread = (event.lines_unread or 0) + len(rows) - MAX_LINES
            rows = rows[:MAX_LINES]
        event.lines = [SassLine(*r) if isinstance(r, list) else r for r in rows]
    event.columns = {k: v[:200] for k, v in (event.columns or {}).items() if k in FIELDS}
    event.totals = {k: v for k, v in (event.totals or {}).items() if k in NUMBER_FIELDS}
    event.stall_totals = largest(event.stall_totals, 32) or {}

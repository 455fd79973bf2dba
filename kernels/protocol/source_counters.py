"""The ``source_counters`` event: per-SASS-line counters of one level, as Nsight Compute's
source page gave them (``gemmscope record --ncu-source``; docs/protocol.md).

This module owns the event's shape: its per-line fields, its bounds, and the reader's
check (``check``, called by ``protocol.validate_event``), so that the writer
(``kernels/profile/ncu_source_step.py``) and the readers agree on one definition. Qt-free.

Lines are stored as rows (lists) under ``fields``, the names in ``FIELDS`` order: a whole
kernel is a few thousand SASS lines, and a dict per line would repeat every name on each.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any

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


def check(event: dict[str, Any]) -> str | None:
    """Clean a ``source_counters`` event in place (reader rules in docs/protocol.md);
    returns why it cannot be read at all (None when it can)."""
    status = event.get("status")
    if status not in tuple(Status):
        return f'"status" must be one of {", ".join(Status)}, not {status!r}'
    for name in ("reason", "cut", "kernel", "variant", "tool_version", "launch"):
        if name in event:
            event[name] = _text(event[name])
    command = event.get("command")
    event["command"] = ([_text(c) for c in command if isinstance(c, str)][:64]
                        if isinstance(command, list) else None)
    fields = event.get("fields")
    rows = event.get("lines")
    if rows is not None and not isinstance(rows, list):
        rows = None
    where = positions(fields)
    if rows is not None and where is None:
        event["reason"] = event.get("reason") or 'lines without a "fields" list naming "offset"'
        rows = None
    if rows is None:
        event["lines"] = None
        if status == Status.OK:
            event["status"] = str(Status.UNREADABLE)
            event["reason"] = event.get("reason") or "the event holds no lines"
    else:
        kept = [r for r in (clean_row(x, where) for x in rows[:MAX_LINES]) if r is not None]
        dropped = len(rows) - len(kept)
        event["lines"] = kept
        event["fields"] = list(FIELDS)
        if dropped:
            event["lines_unread"] = dropped  # rows past MAX_LINES or without an offset
    columns = event.get("columns")
    event["columns"] = ({k: v[:200] for k, v in columns.items()
                         if k in FIELDS and isinstance(v, str)}
                        if isinstance(columns, dict) else {})
    totals = event.get("totals")
    event["totals"] = ({k: _number(v) for k, v in totals.items() if k in NUMBER_FIELDS}
                       if isinstance(totals, dict) else {})
    event["stall_totals"] = largest(event.get("stall_totals"), 32) or {}
    for name in ("lines_total", "idle_left_out", "cap_left_out", "seconds"):
        event[name] = _number(event.get(name))
    return None

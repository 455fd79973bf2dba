"""Rows as text tables: the fixed-width table `bench` and `report` print, and Markdown
(`report --markdown`, the app's ladder report). Every cell is the row model's text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..protocol.records import LaunchClocks
from ..protocol.text_safety import clean_text, markdown_text, terminal_text
from .rows import NUMBER_COLUMNS, Column, Result, rows_of

COLUMNS = (Column.LEVEL, Column.SHAPE, Column.PRECISION, Column.MODE, Column.MEDIAN_MS,
           Column.TFLOPS,
           Column.PCT_OF_REFERENCE, Column.REFERENCE, Column.PCT_OF_PEAK, Column.REL_ERR,
           Column.VERIFIED, Column.SM_CLOCK, Column.REF_CLOCK, Column.ENERGY, Column.GFLOP_PER_J,
           Column.THROTTLED, Column.CODE, Column.OPERANDS, Column.NOTES)

# ``report --per-clock``: each run's TFLOPS per GHz held and the ratio at equal clocks,
# after the clocks they come from
PER_CLOCK_COLUMNS = (Column.TFLOPS_PER_GHZ, Column.PCT_EQUAL_CLOCKS, Column.LAUNCH_CLOCK,
                     Column.REF_LAUNCH_CLOCK)

Cells = Mapping[Column, str]


def with_per_clock(columns: Sequence[Column]) -> tuple[Column, ...]:
    """``columns`` with :data:`PER_CLOCK_COLUMNS` after the reference's clock."""
    at = columns.index(Column.REF_CLOCK) + 1 if Column.REF_CLOCK in columns else len(columns)
    return (*columns[:at], *PER_CLOCK_COLUMNS, *columns[at:])


def fixed_width(columns: Sequence[Column], rows: Iterable[Cells]) -> str:
    """Columns two spaces apart, numbers aligned right, a rule under the header; every
    cell safe on a terminal (a recording's text: kernels/protocol/text_safety.py), before the
    widths are measured."""
    body = [[terminal_text(row[c]) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c)
              for i, c in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(text.rjust(w) if column in NUMBER_COLUMNS else text.ljust(w)
                         for column, text, w in zip(columns, cells, widths, strict=True)
                         ).rstrip()

    rule = ["-" * w for w in widths]
    if columns and columns[-1] not in NUMBER_COLUMNS:  # the header's last word ends the rule,
        rule[-1] = "-" * len(columns[-1])  # as lines lose their trailing blanks
    return "\n".join([line(columns), line(rule), *map(line, body)])


def markdown_cell(column: Column, text: str) -> str:
    """A cell of a Markdown table: a text cell (a recording's) escaped so that it renders
    as itself; a number cell (the row model's own) cleaned, its ``|`` escaped."""
    if column in NUMBER_COLUMNS:
        return clean_text(text).replace("|", "\\|")
    return markdown_text(text)


def markdown_table(columns: Sequence[Column], rows: Iterable[Cells]) -> str:
    """A Markdown table, numbers aligned right; every cell as :func:`markdown_cell`."""
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "".join("---:|" if c in NUMBER_COLUMNS else "---|" for c in columns)]
    lines += ["| " + " | ".join(markdown_cell(c, row[c]) for c in columns) + " |"
              for row in rows]
    return "\n".join(lines)


def render(results: Iterable[Result], markdown: bool = False,
           peaks: Mapping[str, float | None] | None = None, per_clock: bool = False,
           clocks: Iterable[LaunchClocks] = ()) -> str:
    """The results table of result events (``peaks``: the header's, per precision;
    ``per_clock``: with the clock-normalised columns, by the clocks inside the launches
    where ``clocks``, the session's launch_clocks events, read them)."""
    parsed = list(results)
    rows = [row.texts() for row in rows_of(parsed, peaks, clocks)]
    # several GPUs in one session: each row says which (the header's devices, by id)
    columns: tuple[Column, ...] = (Column.DEVICE, *COLUMNS) \
        if len({r.device_index for r in parsed}) > 1 else COLUMNS
    if per_clock:
        columns = with_per_clock(columns)
    return markdown_table(columns, rows) if markdown else fixed_width(columns, rows)

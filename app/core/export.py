"""Results as CSV and the ladder as a Markdown report (text only; images come from Qt).

Every cell is the row model's text (:mod:`gemmscope.kernels.results.rows`), so the CSV, the
report, the ladder panel and `gemmscope report` show the same numbers and words.

Text in them comes from a recording, so it is made safe to open: a CSV text cell that a
spreadsheet would read as a formula is neutralised, Markdown gets no markup from the
recording. Files are written whole or not at all (``write_export``, ``replacing``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ...kernels.protocol.atomic_file import replacing, write_text
from ...kernels.protocol.throttle import NOT_COUNTED, THROTTLE_MARK
from ...kernels.results.rows import NUMBER_COLUMNS, Column, not_run_texts, sustained_texts
from ...kernels.results.table import markdown_table
from .store import SessionStore

CSV_COLUMNS = (Column.LEVEL, Column.PRECISION, Column.MODE, Column.DTYPE, Column.SHAPE, Column.M,
               Column.N, Column.K, Column.MEDIAN_MS, Column.TFLOPS, Column.PCT_OF_REFERENCE,
               Column.REFERENCE, Column.PCT_OF_PEAK, Column.REL_ERR, Column.VERIFIED,
               Column.REPEATS, Column.T, Column.SM_CLOCK, Column.SM_CLOCK_MIN, Column.POWER,
               Column.ENERGY, Column.GFLOP_PER_J, Column.THROTTLED, Column.NOTES)
__all__ = ["CSV_COLUMNS", "csv_text", "ladder_markdown", "markdown_text", "replacing",
           "results_csv", "write_export"]
MARKDOWN_COLUMNS = (Column.LEVEL, Column.PRECISION, Column.SHAPE, Column.TFLOPS,
                    Column.PCT_OF_REFERENCE, Column.REFERENCE, Column.PCT_OF_PEAK,
                    Column.ENERGY, Column.GFLOP_PER_J, Column.SUSTAINED_TFLOPS,
                    Column.POWER_LIMITED, Column.THROTTLED, Column.VERIFIED)


# a cell beginning with one of these is a formula to a spreadsheet (OWASP, "CSV Injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_MARKUP = re.compile(r"([\\`*\[\]<>|])")


def csv_text(text: str) -> str:
    """A text cell as data: one beginning like a formula gets a leading single quote.
    Number cells are the row model's texts of numbers and keep their sign."""
    return "'" + text if text.startswith(FORMULA_START) else text


def markdown_text(text: str) -> str:
    """Text from a recording as Markdown text, not markup: no links, images, HTML, code
    or table cells of its own, on one line."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def write_export(path: str | Path, text: str) -> Path:
    """An export (CSV, Markdown) written whole or not at all: a temporary file beside it,
    renamed onto ``path``. Images: ``with replacing(path) as temp: exporter.export(temp)``."""
    return write_text(path, text)


def _safe(texts: dict[Column, str], escape: Callable[[str], str]) -> dict[Column, str]:
    """The text cells of a row passed through ``escape``; number cells as they are."""
    return {c: t if c in NUMBER_COLUMNS else escape(t) for c, t in texts.items()}


def results_csv(store: SessionStore) -> str:
    """Every result of the session, in order."""
    out = io.StringIO()
    # RFC 4180 line ends: a cell holding a carriage return is quoted like one with a newline
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for r in store.results:
        texts = _safe(store.row(r).texts(), csv_text)
        writer.writerow([texts[c] for c in CSV_COLUMNS])
    return out.getvalue()


def ladder_markdown(store: SessionStore, source: str, images: Sequence[tuple[str, str]] = ()
                    ) -> str:
    """The ladder as a table (latest result per level) plus links to chart images."""
    device = store.device_name() or "no GPU recorded"
    synthetic = store.header is not None and store.header.synthetic
    lines = [f"# gemmscope ladder report — {markdown_text(device)}", ""]
    # the path in a code span, where nothing is markup; a backtick would end it
    lines.append(f"Source: `{' '.join(source.replace('`', chr(39)).split())}`"
                 + (" (synthetic data, not a measurement)" if synthetic else ""))
    lines.append("")
    rows, throttled_any = [], False
    for lv in store.levels:
        r = store.ladder_result(lv.id)
        if r is None:
            rows.append(_safe(not_run_texts(lv.id, lv.precision), markdown_text))
            continue
        row = store.row(r)
        throttled_any = throttled_any or row.throttled
        texts = row.texts()
        texts.update(sustained_texts(r, store.sustained_result(lv.id, r.shape),
                                     store.sm_clock_max_mhz()))
        rows.append(_safe(texts, markdown_text))
    lines.append(markdown_table(MARKDOWN_COLUMNS, rows))
    lines += ["", f"{Column.PCT_OF_REFERENCE}: of the reference's TFLOPS (cuBLAS of the same "
              "precision at the same shape)."]
    if throttled_any:
        lines += ["", f"{THROTTLE_MARK}: NVML saw clock-event reasons that hold clocks back "
                  f"({NOT_COUNTED}) during the run, so its numbers were measured at reduced "
                  "clocks."]
    errors = [m for m in store.messages if m.is_error]
    if errors:
        lines += ["", "## Errors", ""]
        lines += [f"- {markdown_text(m.describe())}" for m in errors]
    for title, path in images:
        lines += ["", f"## {title}", "", f"![{title}]({path})"]
    lines.append("")
    return "\n".join(lines)

"""Results as CSV and the ladder as a Markdown report (text only; images come from Qt).

Every cell is the row model's text (:mod:`gemmscope.kernels.rows`), so the CSV, the
report, the ladder panel and `gemmscope report` show the same numbers and words.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from ...kernels.rows import Column, not_run_texts
from ...kernels.table import markdown_table
from ...kernels.throttle import NOT_COUNTED, THROTTLE_MARK
from .store import SessionStore

CSV_COLUMNS = (Column.LEVEL, Column.PRECISION, Column.DTYPE, Column.SHAPE, Column.M,
               Column.N, Column.K, Column.MEDIAN_MS, Column.TFLOPS, Column.PCT_OF_REFERENCE,
               Column.REFERENCE, Column.PCT_OF_PEAK, Column.REL_ERR, Column.VERIFIED,
               Column.REPEATS, Column.T, Column.SM_CLOCK, Column.SM_CLOCK_MIN, Column.POWER,
               Column.ENERGY, Column.GFLOP_PER_J, Column.THROTTLED, Column.NOTES)
MARKDOWN_COLUMNS = (Column.LEVEL, Column.PRECISION, Column.SHAPE, Column.TFLOPS,
                    Column.PCT_OF_REFERENCE, Column.REFERENCE, Column.PCT_OF_PEAK,
                    Column.ENERGY, Column.GFLOP_PER_J, Column.THROTTLED, Column.VERIFIED)


def results_csv(store: SessionStore) -> str:
    """Every result of the session, in order."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in store.results:
        texts = store.row(r).texts()
        writer.writerow([texts[c] for c in CSV_COLUMNS])
    return out.getvalue()


def ladder_markdown(store: SessionStore, source: str, images: Sequence[tuple[str, str]] = ()
                    ) -> str:
    """The ladder as a table (latest result per level) plus links to chart images."""
    device = store.device_name() or "no GPU recorded"
    synthetic = bool((store.header or {}).get("synthetic"))
    lines = [f"# gemmscope ladder report — {device}", ""]
    lines.append(f"Source: `{source}`" + (" (synthetic data, not a measurement)"
                                           if synthetic else ""))
    lines.append("")
    rows, throttled_any = [], False
    for lv in store.levels:
        r = store.ladder_result(lv.id)
        if r is None:
            rows.append(not_run_texts(lv.id, lv.precision))
            continue
        row = store.row(r)
        throttled_any = throttled_any or row.throttled
        rows.append(row.texts())
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
        lines += [f"- {m.describe()}" for m in errors]
    for title, path in images:
        lines += ["", f"## {title}", "", f"![{title}]({path})"]
    lines.append("")
    return "\n".join(lines)

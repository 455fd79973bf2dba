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
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

from ...kernels.protocol import NOT_COUNTED, THROTTLE_MARK, clean_text, replacing, write_text
from ...kernels.protocol import markdown_text as _markdown_text
from ...kernels.results import (
    NUMBER_COLUMNS,
    UNPAIRED,
    Column,
    markdown_table,
    newest,
    not_run_texts,
    sustained_texts,
)
from .baseline_run import baseline_pair, baseline_warning
from .store import SessionStore
from .view_state import shape_text

# a paired ratio's 95% interval and pairs; the clock-normalised figures
INTERVAL_COLUMNS = (Column.PCT_CI_LOW, Column.PCT_CI_HIGH, Column.PAIRS, Column.TFLOPS_PER_GHZ,
                    Column.PCT_EQUAL_CLOCKS, Column.LAUNCH_CLOCK, Column.REF_LAUNCH_CLOCK)
CSV_COLUMNS = (Column.LEVEL, Column.PRECISION, Column.MODE, Column.DTYPE, Column.SHAPE, Column.M,
               Column.N, Column.K, Column.MEDIAN_MS, Column.TFLOPS, Column.PCT_OF_REFERENCE,
               Column.REFERENCE, Column.PCT_OF_PEAK, Column.REL_ERR, Column.VERIFIED,
               Column.REPEATS, Column.T, Column.SM_CLOCK, Column.SM_CLOCK_MIN, Column.REF_CLOCK,
               Column.POWER,
               Column.ENERGY, Column.GFLOP_PER_J, Column.THROTTLED, Column.CODE,
               Column.OPERANDS, Column.VERSIONS, Column.NOTES,
               # (after the older columns, which scripts may read by place)
               *INTERVAL_COLUMNS)
__all__ = ["CSV_COLUMNS", "csv_text", "ladder_csv", "ladder_markdown", "markdown_text",
           "replacing", "results_csv", "write_export"]
MARKDOWN_COLUMNS = (Column.LEVEL, Column.PRECISION, Column.SHAPE, Column.TFLOPS,
                    Column.PCT_OF_REFERENCE, Column.REFERENCE, Column.PCT_OF_PEAK,
                    Column.SM_CLOCK, Column.ENERGY, Column.GFLOP_PER_J, Column.SUSTAINED_TFLOPS,
                    Column.POWER_LIMITED, Column.THROTTLED, Column.VERIFIED,
                    Column.PCT_CI_LOW, Column.PCT_CI_HIGH, Column.TFLOPS_PER_GHZ,
                    Column.PCT_EQUAL_CLOCKS, Column.LAUNCH_CLOCK, Column.REF_LAUNCH_CLOCK)


# a cell beginning with one of these is a formula to a spreadsheet (OWASP, "CSV Injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text: str) -> str:
    """A text cell as data: control, format and bidi characters removed (one line), and
    one beginning like a formula gets a leading single quote. Number cells are the row
    model's texts of numbers and keep their sign."""
    text = clean_text(text)
    return "'" + text if text.lstrip().startswith(FORMULA_START) else text


def markdown_text(text: str) -> str:
    """Text from a recording as Markdown text, not markup: no links, images, HTML, code,
    headings or table cells of its own, on one line (kernels/protocol/text_safety.py)."""
    return _markdown_text(text)


def write_export(path: str | Path, text: str) -> Path:
    """An export (CSV, Markdown) written whole or not at all: a temporary file beside it,
    renamed onto ``path``. Images: ``with replacing(path) as temp: exporter.export(temp)``."""
    return write_text(path, text)


def _safe(texts: dict[Column, str], escape: Callable[[str], str]) -> dict[Column, str]:
    """The text cells of a row passed through ``escape``; number cells as they are."""
    return {c: clean_text(t) if c in NUMBER_COLUMNS else escape(t) for c, t in texts.items()}


def results_csv(store: SessionStore) -> str:
    """The session's results, in order (every shape, mode and GPU): of a run measured
    again (``record --update``, ``--append``), the newest (kernels/results/rows.py)."""
    return _csv(store, newest(store.results))


def ladder_csv(store: SessionStore) -> str:
    """The results the ladder shows: one row per level (and reference) with a result at
    the shape, in the mode and on the GPU of the view state, in ladder order; the same
    rows as the ladder table, the bars and the Markdown report. With a baseline open,
    its values and the changes follow each row (:func:`baseline_cells`)."""
    shown = [r for lv in store.levels if (r := store.ladder_result(lv.id)) is not None]
    return _csv(store, shown, baseline=store.baseline is not None)


def baseline_headers() -> list[str]:
    """The baseline's CSV columns: per compared field its value and the change."""
    from ...kernels.results import BASELINE_COLUMNS as COLUMNS

    out = []
    for title, _field, _fmt, relative in COLUMNS:
        out += [f"baseline {title}", f"change {title}" + (" (%)" if relative else "")]
    return [*out, "main-loop mix run / baseline"]


def baseline_cells(store: SessionStore, level_id: str) -> list[str]:
    """A level's baseline cells: for each compared field the baseline's value and the
    change (relative fields in percent, the others as run minus baseline), empty where
    either side lacks it; the two instruction mixes."""
    from ...kernels.results import BASELINE_COLUMNS as COLUMNS
    from ...kernels.results import mix_text

    pair = baseline_pair(store, level_id)
    out: list[str] = []
    for _title, field, fmt, relative in COLUMNS:
        a = pair.value(field) if pair is not None else None
        b = pair.value(field, of_base=True) if pair is not None else None
        out.append("" if b is None else fmt.format(b).rstrip("%"))
        if a is None or b is None:
            out.append("")
        elif relative:
            change = pair.change(field) if pair is not None else None
            out.append("" if change is None else f"{100 * change:+.2f}")
        else:
            out.append(f"{a - b:+.4g}")
    mix = mix_text(pair.run_mix, pair.base_mix) if pair is not None else "–"
    return [*out, csv_text(mix)]


def _csv(store: SessionStore, results: Sequence, baseline: bool = False) -> str:
    out = io.StringIO()
    # RFC 4180 line ends: a cell holding a carriage return is quoted like one with a newline
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([*CSV_COLUMNS, *(baseline_headers() if baseline else [])])
    for r in results:
        texts = _safe(store.row(r).texts(), csv_text)
        writer.writerow([texts[c] for c in CSV_COLUMNS]
                        + (baseline_cells(store, r.level) if baseline else []))
    return out.getvalue()


def shown_text(store: SessionStore) -> str:
    """What the view state shows, in words: "4096³, burst" (and the GPU, of several)."""
    parts = [shape_text(store.ladder_shape()), store.mode]
    if store.multi_device:
        parts.append(store.device_text())
    return ", ".join(parts)


def baseline_section(store: SessionStore) -> list[str]:
    """The report's section beside the baseline: what differs between the two runs,
    then each level's values, this session / the baseline, and the changes."""
    from ...kernels.results import BASELINE_COLUMNS as COLUMNS
    from ...kernels.results import MIX_TITLE
    from ...kernels.results import baseline_rows as rows

    base = store.baseline
    if base is None:
        return []
    said = baseline_warning(store, base)
    out = ["", f"## Against the baseline {markdown_text(Path(base.path).name)}", "",
           (f"**Warning:** {markdown_text(said)}." if said else "The two runs match in GPU, "
            "driver, CUDA, clocks, power limit, compiler and code."), ""]
    pairs = [p for lv in store.levels if (p := baseline_pair(store, lv.id)) is not None
             and (p.run is not None or p.base is not None)]
    head = ["level", "shape", "mode", "GPU", "in", *(c[0] + " run / base" for c in COLUMNS),
            MIX_TITLE]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    out += ["| " + " | ".join(markdown_text(c) for c in row) + " |"
            for row in rows(pairs)]
    return out


def ladder_markdown(store: SessionStore, source: str, images: Sequence[tuple[str, str]] = ()
                    ) -> str:
    """The ladder as a table (latest result per level) plus links to chart images."""
    device = store.device_name() or "no GPU recorded"
    synthetic = store.header is not None and store.header.synthetic
    lines = [f"# gemmscope ladder report — {markdown_text(device)}", ""]
    # the path in a code span, where nothing is markup; a backtick would end it
    lines.append(f"Source: `{' '.join(clean_text(source).replace('`', chr(39)).split())}`"
                 + (" (synthetic data, not a measurement)" if synthetic else ""))
    lines.append("")
    lines.append(f"Shown: {markdown_text(shown_text(store))} (the shape, mode and GPU "
                 "chosen in the app; `--shape`, `--mode` on the command line).")
    lines.append("")
    rows, throttled_any = [], False
    shape = store.ladder_shape()
    for lv in store.levels:
        r = store.ladder_result(lv.id)
        if r is None:  # (markdown_table escapes every cell)
            rows.append(not_run_texts(lv.id, lv.precision))
            continue
        row = store.row(r)
        throttled_any = throttled_any or row.throttled
        texts = row.texts()
        if row.reference:  # named as the pictures name it
            texts[Column.REFERENCE] = store.name_of(row.reference)
        texts.update(sustained_texts(store.burst_result(lv.id, shape),
                                     store.sustained_result(lv.id, shape),
                                     store.sm_clock_max_mhz()))
        rows.append(texts)
    lines.append(markdown_table(MARKDOWN_COLUMNS, rows))
    lines += ["", f"{Column.PCT_OF_REFERENCE}: of the reference's TFLOPS (cuBLAS of the same "
              "precision at the same shape); ± and the 95% columns: the interval of a ratio "
              "measured in pairs (the level and cuBLAS launched alternately), none where "
              f"it was not ({UNPAIRED} in the notes). {Column.TFLOPS_PER_GHZ}: TFLOPS per "
              f"GHz of the SM clock; {Column.PCT_EQUAL_CLOCKS}: the ratio at equal "
              "clocks, (TFLOPS / clock) / (cuBLAS TFLOPS / its clock); both by the clocks "
              f"inside the launches where the session read them ({Column.LAUNCH_CLOCK}, "
              f"{Column.REF_LAUNCH_CLOCK}: Nsight Compute, `record --launch-clocks`), else "
              "by the SM clock NVML saw held around them, which a Tensor Core launch runs "
              "10-21% under on the H200."]
    if throttled_any:
        lines += ["", f"{THROTTLE_MARK}: NVML saw clock-event reasons that hold clocks back "
                  f"({NOT_COUNTED}) during the run, so its numbers were measured at reduced "
                  "clocks."]
    lines += baseline_section(store)
    errors = [m for m in store.messages if m.is_error]
    if errors:
        lines += ["", "## Errors", ""]
        lines += [f"- {markdown_text(m.describe())}" for m in errors]
    for title, path in images:  # a chart's title names levels: a recording's text
        lines += ["", f"## {markdown_text(title)}", "",
                  f"![{markdown_text(title)}](<{quote(clean_text(path))}>)"]
    lines.append("")
    return "\n".join(lines)

"""Results as CSV and the ladder as a Markdown report (text only; images come from Qt).

Text in them comes from a recording, so it is made safe to open: a CSV text cell that a
spreadsheet would read as a formula is neutralised, Markdown gets no markup from the
recording. Files are written whole or not at all (``write_export``, ``replacing``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

from gemmscope.app.core.store import SessionStore
from gemmscope.app.core.units import THROTTLE_MARK, energy_text, gflop_per_j_text
from gemmscope.kernels.atomic_file import replacing, write_text

__all__ = ["CSV_COLUMNS", "csv_text", "ladder_markdown", "markdown_text", "replacing",
           "results_csv", "write_export"]

# energy_j is per GEMM; throttled lists the clock-event reasons seen, ";"-separated
CSV_COLUMNS = ("level", "precision", "dtype", "M", "N", "K", "median_ms", "tflops",
               "pct_of_reference", "reference", "pct_of_peak", "verified", "rel_err",
               "repeats", "t", "energy_j", "gflop_per_j", "avg_power_w", "sm_clock_mhz_avg",
               "sm_clock_mhz_min", "throttled")


def _num(value: float | None, spec: str = ".6g") -> str:
    return "" if value is None else f"{value:{spec}}"


# a cell beginning with one of these is a formula to a spreadsheet (OWASP, "CSV Injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text: str) -> str:
    """A text cell as data: one beginning like a formula gets a leading single quote.
    Number cells are written from numbers and keep their sign (-1.5 is no formula)."""
    return "'" + text if text.startswith(FORMULA_START) else text


def write_export(path: str | Path, text: str) -> Path:
    """An export (CSV, Markdown) written whole or not at all: a temporary file beside it,
    renamed onto ``path``. Images: ``with replacing(path) as temp: exporter.export(temp)``."""
    return write_text(path, text)


def results_csv(store: SessionStore) -> str:
    out = io.StringIO()
    # RFC 4180 line ends: a cell holding a carriage return is quoted like one with a newline
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for r in store.results:
        pct_ref = store.pct_of_reference(r)
        pct_peak = store.pct_of_peak(r)
        ref = store.reference_result(r)
        writer.writerow([
            csv_text(r.level), csv_text(r.precision), csv_text(r.dtype),
            r.shape.M, r.shape.N, r.shape.K,
            f"{r.median_ms:.6g}", f"{r.tflops:.6g}",
            "" if pct_ref is None else f"{pct_ref:.2f}",
            csv_text(r.reference or (ref.level if ref else "")),
            "" if pct_peak is None else f"{pct_peak:.2f}",
            "yes" if r.verified else "no",
            "" if r.rel_err is None else f"{r.rel_err:.3g}", r.repeats, f"{r.t:.3f}",
            _num(r.energy_j), _num(r.gflop_per_j), _num(r.avg_power_w),
            _num(r.sm_clock_mhz_avg, ".0f"), _num(r.sm_clock_mhz_min, ".0f"),
            csv_text(";".join(r.throttled))])
    return out.getvalue()


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "–" if value is None else f"{value:{spec}}{suffix}"


_MARKUP = re.compile(r"([\\`*\[\]<>|])")


def markdown_text(text: str) -> str:
    """Text from a recording as Markdown text, not markup: no links, images, HTML, code
    or table cells of its own, on one line."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def ladder_markdown(store: SessionStore, source: str, images: Sequence[tuple[str, str]] = ()
                    ) -> str:
    """The ladder as a table (latest result per level) plus links to chart images."""
    device = markdown_text(store.device_name() or "no GPU recorded")
    synthetic = bool((store.header or {}).get("synthetic"))
    lines = [f"# gemmscope ladder report — {device}", ""]
    code = " ".join(source.replace("`", "'").split())  # a code span: nothing in it is markup
    lines.append(f"Source: `{code}`" + (" (synthetic data, not a measurement)"
                                       if synthetic else ""))
    lines.append("")
    lines.append("| level | precision | shape | TFLOPS | % of cuBLAS (same precision) "
                 "| % of peak | energy per GEMM | GFLOP/J | clocks held back | verified |")
    lines.append("|---|---|---|---:|---:|---:|---:|---:|---|---|")
    throttled_any = False
    for lv in store.levels:
        r = store.ladder_result(lv.id)
        if r is None:
            lines.append(f"| {markdown_text(lv.id)} | {markdown_text(lv.precision)} "
                         "| – | – | – | – | – | – | – | not run |")
            continue
        mark = f" {THROTTLE_MARK}" if r.throttled else ""
        throttled_any = throttled_any or bool(r.throttled)
        held = (f"{THROTTLE_MARK} " + markdown_text(", ".join(r.throttled)) if r.throttled
                else "no")
        ref = store.reference_result(r)
        ref_name = f" of {markdown_text(ref.level)}" if ref is not None else ""
        pct_ref = _fmt(store.pct_of_reference(r), ".1f", "%")
        lines.append(
            f"| {markdown_text(lv.id)} | {markdown_text(r.precision)} | {r.shape} "
            f"| {r.tflops:.2f}{mark} | {pct_ref}{ref_name} "
            f"| {_fmt(store.pct_of_peak(r), '.1f', '%')} "
            f"| {energy_text(r.energy_j)}{mark if r.energy_j is not None else ''} "
            f"| {gflop_per_j_text(r.gflop_per_j)}{mark if r.gflop_per_j is not None else ''} "
            f"| {held} | {'yes' if r.verified else 'NO'} |")
    if throttled_any:
        lines += ["", f"{THROTTLE_MARK}: NVML saw clock-event reasons (GpuIdle not counted) "
                  "during the run, so its numbers were measured at reduced clocks."]
    errors = [m for m in store.messages if m.is_error]
    if errors:
        lines += ["", "## Errors", ""]
        lines += [f"- {markdown_text(m.describe())}" for m in errors]
    for title, path in images:
        lines += ["", f"## {markdown_text(title)}", "", f"![{markdown_text(title)}]({path})"]
    lines.append("")
    return "\n".join(lines)

"""Results as CSV and the ladder as a Markdown report (text only; images come from Qt)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from gemmscope.app.core.store import SessionStore

CSV_COLUMNS = ("level", "precision", "dtype", "M", "N", "K", "median_ms", "tflops",
               "pct_of_reference", "reference", "pct_of_peak", "verified", "rel_err",
               "repeats", "t")


def results_csv(store: SessionStore) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in store.results:
        pct_ref = store.pct_of_reference(r)
        pct_peak = store.pct_of_peak(r)
        ref = store.reference_result(r)
        writer.writerow([
            r.level, r.precision, r.dtype, r.shape.M, r.shape.N, r.shape.K,
            f"{r.median_ms:.6g}", f"{r.tflops:.6g}",
            "" if pct_ref is None else f"{pct_ref:.2f}",
            r.reference or (ref.level if ref else ""),
            "" if pct_peak is None else f"{pct_peak:.2f}",
            "yes" if r.verified else "no",
            "" if r.rel_err is None else f"{r.rel_err:.3g}", r.repeats, f"{r.t:.3f}"])
    return out.getvalue()


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "–" if value is None else f"{value:{spec}}{suffix}"


def ladder_markdown(store: SessionStore, source: str, images: Sequence[tuple[str, str]] = ()
                    ) -> str:
    """The ladder as a table (latest result per level) plus links to chart images."""
    device = store.device_name() or "no GPU recorded"
    synthetic = bool((store.header or {}).get("synthetic"))
    lines = [f"# gemmscope ladder report — {device}", ""]
    lines.append(f"Source: `{source}`" + (" (synthetic data, not a measurement)"
                                           if synthetic else ""))
    lines.append("")
    lines.append("| level | precision | shape | TFLOPS | % of cuBLAS (same precision) "
                 "| % of peak | verified |")
    lines.append("|---|---|---|---:|---:|---:|---|")
    for lv in store.levels:
        r = store.ladder_result(lv.id)
        if r is None:
            lines.append(f"| {lv.id} | {lv.precision} | – | – | – | – | not run |")
            continue
        ref = store.reference_result(r)
        ref_name = f" of {ref.level}" if ref is not None else ""
        pct_ref = _fmt(store.pct_of_reference(r), ".1f", "%")
        lines.append(
            f"| {lv.id} | {r.precision} | {r.shape} | {r.tflops:.2f} | {pct_ref}{ref_name} "
            f"| {_fmt(store.pct_of_peak(r), '.1f', '%')} "
            f"| {'yes' if r.verified else 'NO'} |")
    errors = [m for m in store.messages if m.is_error]
    if errors:
        lines += ["", "## Errors", ""]
        lines += [f"- {m.describe()}" for m in errors]
    for title, path in images:
        lines += ["", f"## {title}", "", f"![{title}]({path})"]
    lines.append("")
    return "\n".join(lines)

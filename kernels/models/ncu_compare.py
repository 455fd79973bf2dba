"""Reading Nsight Compute's ``--csv --page raw`` output and setting it beside the model.

ncu's stdout mixes ``==PROF==`` (and ``==WARNING==``/``==ERROR==``) lines and whatever the
profiled program prints with the CSV; the CSV has a header row, a units row, then one row
per profiled kernel; numbers carry thousands separators and unmeasured metrics read
``n/a``. :func:`parse_raw_csv` copes with all of that; :func:`compare` makes the rows of
the model-vs-measured table.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass
from typing import Any

from .level_model import NCU_EXTRA_METRICS, NCU_METRICS, SharedTotals

METRIC_LABELS = {
    NCU_METRICS["ld_conflicts"]: "ld bank conflicts",
    NCU_METRICS["st_conflicts"]: "st bank conflicts",
    NCU_METRICS["ld_wavefronts"]: "ld wavefronts",
    NCU_METRICS["st_wavefronts"]: "st wavefronts",
    NCU_EXTRA_METRICS["ld_instructions"]: "ld instructions",
    NCU_EXTRA_METRICS["st_instructions"]: "st instructions",
    NCU_EXTRA_METRICS["cp_instructions"]: "cp.async instr.",
    NCU_EXTRA_METRICS["cp_wavefronts"]: "cp.async wavefr.",
    NCU_EXTRA_METRICS["cp_conflicts"]: "cp.async conflicts",
}


class NcuParseError(ValueError):
    """The text holds no ncu raw CSV (the message says what was missing)."""


@dataclass(frozen=True, slots=True)
class NcuKernelRow:
    kernel: str
    values: dict[str, float | None]  # metric name -> value (None: n/a)
    units: dict[str, str]
    raw: dict[str, str]


def parse_number(text: str) -> float | None:
    """'126,976' -> 126976.0; 'n/a' or '' -> None; '1.5' -> 1.5."""
    t = text.strip().replace(",", "").replace("\u202f", "").replace(" ", "")
    if not t or t.lower() in {"n/a", "na", "nan"}:
        return None
    try:
        return float(t)
    except ValueError:
        return None


def parse_raw_csv(text: str) -> list[NcuKernelRow]:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("==")]
    header: list[str] | None = None
    rows: list[list[str]] = []
    for record in csv.reader(io.StringIO("\n".join(lines))):
        if header is None:
            if "Kernel Name" in record and "ID" in record:
                header = record
            continue
        if len(record) == len(header):
            rows.append(record)
    if header is None:
        raise NcuParseError("no ncu CSV header (a row with 'ID' and 'Kernel Name') found")
    id_col = header.index("ID")
    units: dict[str, str] = {}
    out = []
    for record in rows:
        if not record[id_col].strip().isdigit():  # the units row
            units = dict(zip(header, record, strict=True))
            continue
        raw = dict(zip(header, record, strict=True))
        values = {h: parse_number(v) for h, v in raw.items() if "__" in h}
        out.append(NcuKernelRow(raw.get("Kernel Name", ""), values, units, raw))
    return out


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    level: str
    metric: str
    label: str
    model: int
    measured: float | None
    diff_pct: float | None  # (model - measured) / measured * 100; 0 when both are 0
    model_phases_only: int | None = None  # the same without the uniform-pair rule

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def diff_pct(model: float, measured: float | None) -> float | None:
    if measured is None:
        return None
    if measured == 0:
        return 0.0 if model == 0 else None
    pct = (model - measured) / measured * 100.0
    return pct if math.isfinite(pct) else None  # a measured 1e-300 is no comparison


def compare(totals: SharedTotals, measured: NcuKernelRow | None,
            phases_only: SharedTotals | None = None) -> list[ComparisonRow]:
    """One row per core metric, plus one per extra metric the profiler reported."""
    alt = {} if phases_only is None else phases_only.metrics(extra=True)
    out = []
    for metric, value in totals.metrics(extra=True).items():
        if metric not in NCU_METRICS.values() and (measured is None
                                                    or metric not in measured.values):
            continue
        got = None if measured is None else measured.values.get(metric)
        out.append(ComparisonRow(totals.level, metric, METRIC_LABELS[metric], value, got,
                                 diff_pct(value, got), alt.get(metric)))
    return out


def format_table(rows: list[ComparisonRow]) -> str:
    head = (f"{'level':<14} {'metric':<18} {'model':>14} {'measured':>14} {'diff %':>8}"
            f" {'4-phase model':>14}")
    lines = [head, "-" * len(head)]
    for r in rows:
        meas = "n/a" if r.measured is None else f"{r.measured:,.0f}"
        diff = "n/a" if r.diff_pct is None else f"{r.diff_pct:+.1f}"
        alt = "" if r.model_phases_only is None else f"{r.model_phases_only:,}"
        lines.append(f"{r.level:<14} {r.label:<18} {r.model:>14,} {meas:>14} {diff:>8}"
                     f" {alt:>14}")
    return "\n".join(lines)

"""What a ladder bar shows: one level's row (its result, energy, burst vs sustained and
cuBLAS reference), the bars' metrics, and the texts over a bar and in its hover."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...kernels.ladder import Shape
from ...kernels.protocol import THROTTLE_MARK
from ...kernels.results import (
    DASH,
    MINUS,
    NOT_VERIFIED,
    UNPAIRED,
    counted,
    gflop_per_j_text,
    mhz_text,
    pct_interval_text,
    pct_text,
    per_ghz_text,
    tflops_short,
    tflops_text,
)

PAIR = "burst vs sustained TFLOPS"
PCT_REF = "% of cuBLAS (same precision)"
METRICS = ("TFLOPS", PCT_REF, "GFLOP/J", PAIR)
# per GHz of SM clock held (the view state's ``per_clock``): what TFLOPS and % of cuBLAS
# become; the other metrics stay as they are
TFLOPS_PER_GHZ = "TFLOPS/GHz"
PCT_CLOCK = "% of cuBLAS at equal clocks"
PER_CLOCK = {"TFLOPS": TFLOPS_PER_GHZ, PCT_REF: PCT_CLOCK}
PERCENT_METRICS = (PCT_REF, PCT_CLOCK)  # a ratio: its reference line is 100%


def shown_metric(metric: str, per_clock: bool) -> str:
    """The metric the bars draw: ``metric``, or its per-clock form where it has one."""
    return PER_CLOCK.get(metric, metric) if per_clock else metric

EMPTY_LADDER = "No ladder results yet: run the ladder (L) or open a recording"


@dataclass(frozen=True, slots=True)
class ReferenceBar:
    """A bar's reference (cuBLAS at the same precision), as its dashed line shows it."""

    level: str
    tflops: float
    gflop_per_j: float | None
    tflops_per_ghz: float | None = None  # at its own clock (None: clock unknown)


@dataclass(frozen=True, slots=True)
class BarRow:
    """One level's bar: its result as the tables show it (``kernels.results.rows.Row``'s
    percentages), what the energy and burst-vs-sustained metrics read, and its colour."""

    level: str
    precision: str
    tflops: float
    pct_ref: float | None
    pct_peak: float | None
    shape: str
    verified: bool
    gflop_per_j: float | None
    gflop_per_j_mode: str | None
    sustained_tflops: float | None
    burst_tflops: float | None
    ratio: float | None
    throttled: tuple[str, ...] | None
    color: str
    reference: ReferenceBar | None
    baseline_tflops: float | None = None  # the baseline recording's (File ▸ Open baseline)
    step: str = ""  # where its launches changed speed mid-burst (Row.step_note)
    # a paired ratio's 95% interval in percent (None: unpaired), its pairs and the note on
    # its throttled pairs (Row.pairs_note)
    pct_ci: tuple[float, float] | None = None
    pairs: int | None = None
    pairs_note: str = ""
    # per GHz of SM clock held: this run's TFLOPS/GHz, the ratio at equal clocks and its
    # interval (Row.pct_equal_clocks), the clocks they come from
    tflops_per_ghz: float | None = None
    pct_clock: float | None = None
    pct_clock_ci: tuple[float, float] | None = None
    sm_clock_mhz: float | None = None
    ref_clock_mhz: float | None = None
    in_launch: bool = False  # those clocks are inside the launches (Nsight Compute), not NVML's
    is_user: bool = False  # a kernel of the user's: its own colour, named in the legend

    def value(self, key: str) -> float | None:
        """The number a metric's key names (LadderBars.METRIC_KEYS)."""
        value: float | None = getattr(self, key)
        return value

    @property
    def unpaired(self) -> bool:
        """A percentage of cuBLAS without an interval (two runs one after the other)."""
        return self.pct_ref is not None and self.pct_ci is None

    def interval(self, metric: str) -> tuple[float, float] | None:
        """The 95% interval of what the bar of ``metric`` shows, in its units: the ratio's
        for % of cuBLAS (at equal clocks: the same interval scaled); on a TFLOPS (or
        TFLOPS/GHz) bar the ratio's interval carried to the bar, value × end / ratio
        (against its cuBLAS line, the bar is the ratio); None where there is none."""
        if metric == PCT_REF:
            return self.pct_ci
        if metric == PCT_CLOCK:
            return self.pct_clock_ci
        value = self.tflops if metric == "TFLOPS" else \
            self.tflops_per_ghz if metric == TFLOPS_PER_GHZ else None
        if value is None or self.pct_ci is None or not self.pct_ref:
            return None
        low, high = self.pct_ci
        return value * low / self.pct_ref, value * high / self.pct_ref


def intervals_drawn(rows: list[BarRow], metric: str, values: np.ndarray
                    ) -> tuple[list[int], np.ndarray]:
    """The bars that get an error bar for ``metric`` (drawn, with a finite positive
    interval) and their (low, high), one row each."""
    have, ends = [], []
    for i, row in enumerate(rows):
        interval = row.interval(metric) if values[i] > 0 else None
        if interval is None or not all(math.isfinite(v) and v > 0 for v in interval):
            continue
        have.append(i)
        ends.append((min(interval), max(interval)))
    return have, np.asarray(ends, float).reshape(-1, 2)


@dataclass(frozen=True, slots=True)
class LadderRows:
    """What the ladder bars draw, handed to them (``LadderBars.set_rows``): a row per level
    with a result at the shape and mode shown, and the words around them (app/views/
    chart_rows.py reads them from the store; the chart never does)."""

    rows: tuple[BarRow, ...] = ()
    shape: Shape | None = None  # the shape shown (None: no shape yet)
    mode: str = ""
    per_clock: bool = False  # the view state's: the bars per GHz of SM clock held
    empty_text: str = EMPTY_LADDER  # why there are no rows
    baseline_name: str | None = None  # the baseline recording's file name
    pending: bool = False  # a replay has yet to deliver (redrawn when that changes)


def short_value(row: BarRow, metric: str) -> str | None:
    """A label's value in three significant digits where the metric is TFLOPS."""
    if metric in ("GFLOP/J", *PERCENT_METRICS):
        return None
    value = row.burst_tflops if metric == PAIR else \
        row.tflops_per_ghz if metric == TFLOPS_PER_GHZ else row.tflops
    return tflops_short(value) if value is not None else None


def label_text(row: BarRow, metric: str) -> str:
    """The text over a level's bar(s): its value (the unit is on the axis), then % of
    cuBLAS and the marks (burst vs sustained: the sustained change; GFLOP/J: its mode)."""
    pct = DASH if row.pct_ref is None else f"{row.pct_ref:.0f}%"
    mark = ("" if row.verified else " ✗") + \
        (f" {THROTTLE_MARK}" if row.throttled else "")
    if metric == "GFLOP/J":
        return f"{gflop_per_j_text(row.gflop_per_j)}\n" \
            f"{row.gflop_per_j_mode or DASH}{mark}"
    if metric == PAIR:
        change = DASH if row.ratio is None else \
            f"{100 * (row.ratio - 1):+.0f}%".replace("-", MINUS)
        burst = DASH if row.burst_tflops is None else tflops_text(row.burst_tflops)
        return f"{burst}\nsust. {change}{mark}"
    if metric == PCT_REF:
        return f"{pct}{mark}"
    clock_pct = DASH if row.pct_clock is None else f"{row.pct_clock:.0f}%"
    if metric == PCT_CLOCK:
        return f"{clock_pct}{mark}"
    if metric == TFLOPS_PER_GHZ:
        return f"{per_ghz_text(row.tflops_per_ghz)}\n{clock_pct}{mark}"
    return f"{tflops_text(row.tflops)}\n{pct}{mark}"


def ratio_text(row: BarRow) -> str:
    """The hover's line on the ratio: with its interval and pairs, or "unpaired"."""
    prec = row.precision.upper()
    if row.pct_ci is None:
        return f"{pct_text(row.pct_ref)} of cuBLAS {prec}" + \
            (f" ({UNPAIRED}: no interval)" if row.unpaired else "")
    low, high = row.pct_ci
    pairs = f", {counted(row.pairs, 'pair')}" if row.pairs is not None else ""
    return (f"{pct_interval_text(row.pct_ref, low, high)} of cuBLAS {prec} (95% interval "
            f"{low:.1f}–{high:.1f}%{pairs})" + (f"\n{row.pairs_note}" if row.pairs_note
                                               else ""))


def per_clock_text(row: BarRow) -> str:
    """The hover's line per GHz of SM clock held; "" where the run's clock is unknown."""
    if row.tflops_per_ghz is None:
        return ""
    where = " in its launches" if row.in_launch else " held"
    text = (f"\n{per_ghz_text(row.tflops_per_ghz)} TFLOPS/GHz at "
            f"{mhz_text(row.sm_clock_mhz)} MHz{where}")
    if row.pct_clock is not None:
        low, high = row.pct_clock_ci or (None, None)
        text += (f"\n{pct_interval_text(row.pct_clock, low, high)} of cuBLAS at equal "
                 f"clocks (cuBLAS at {mhz_text(row.ref_clock_mhz)} MHz{where})")
    if row.in_launch:
        text += "\n(clocks inside the launches: Nsight Compute, record --launch-clocks)"
    return text


def hover_text(row: BarRow) -> str:
    """Every number of a level's bar, for its hover readout."""
    pct_peak = pct_text(row.pct_peak)
    prec = row.precision.upper()
    per_j = "" if row.gflop_per_j is None else \
        f"\n{gflop_per_j_text(row.gflop_per_j)} GFLOP/J ({row.gflop_per_j_mode})"
    if row.sustained_tflops is not None:
        per_j += f"\nsustained {tflops_text(row.sustained_tflops)} TFLOPS"
    held = f"\n{THROTTLE_MARK} clocks held back: {', '.join(row.throttled)}" \
        if row.throttled else ""
    if row.baseline_tflops:
        change = 100 * (row.tflops / row.baseline_tflops - 1)
        held += f"\nbaseline {tflops_text(row.baseline_tflops)} TFLOPS ({change:+.1f}%)"
    return (f"{row.level} ({prec}) at {row.shape}\n{tflops_text(row.tflops)} "
            f"TFLOPS\n{ratio_text(row)}{per_clock_text(row)}\n{pct_peak} of {prec} peak"
            f"{per_j}"
            + ("" if row.verified else f"\n{NOT_VERIFIED}") + held
            + (f"\n{row.step}" if row.step else ""))

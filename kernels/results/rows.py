"""Results as rows: one typed record per result, and the one set of texts for it.

The CLI table (``bench``, ``report``), the CSV and Markdown exports and the ladder panel
all render :class:`Row`, so for the same result they show the same numbers with the same
digits, the same dash where a number was not measured and the same verdict word. A row
is made from a result event (:class:`Result`, the record decoded at the edge) and the
result of its reference (cuBLAS of the same precision at the same shape). The texts of
its numbers are in :mod:`.number_texts`. No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

import msgspec

from ..ladder import registry
from ..ladder.registry import DEEPGEMM_DIFF_MAX
from ..ladder.shape import Shape, percent
from ..protocol.commands import ENERGY_S
from ..protocol.events import DEFAULT_DISTRIBUTION, Mode
from ..protocol.records import LaunchClocks, Result
from ..protocol.throttle import NOT_COUNTED, THROTTLE_MARK
from .counts import counted
from .launch_steps import LaunchStep
from .number_texts import (
    DASH,
    NOT_RUN,
    ci_end_text,
    energy_text,
    finite,
    fixed,
    gflop_per_j_text,
    mhz_text,
    ms_text,
    pct_interval_text,
    pct_text,
    per_ghz_text,
    rel_err_text,
    tflops_text,
    throttled_text,
    verdict_text,
    versions_text,
    watts_text,
)

# the texts of numbers; those rows.py does not use are imported from here too
from .number_texts import NOT_VERIFIED as NOT_VERIFIED
from .number_texts import VERIFIED as VERIFIED
from .number_texts import half_width as half_width
from .number_texts import half_width_text as half_width_text
from .number_texts import tflops_short as tflops_short


# ---------------------------------------------------------------------- result
def resolved(result: Result, level_precision: str | None = None) -> Result:
    """The result with its precision said: the event's own, else its level's (older
    recordings' results do not say; ``level_precision``: the session catalog's), else its
    dtype."""
    if result.precision:
        return result
    return msgspec.structs.replace(result, precision=level_precision or result.dtype or "?")


def params_ran(r: Result, own: Mapping[str, int] | None = None) -> str:
    """The template parameters a run used that differ from its level's own (``own``, else
    the registry's): "BN=192"; "" where it ran the level's own."""
    if not r.params:
        return ""
    if own is None:
        level = registry.BY_ID.get(r.level)
        if level is None:
            return ""
        own = level.params
    return ", ".join(f"{k}={v}" for k, v in r.params.items() if own.get(k) != v)


def reference_id(precision: str) -> str:
    """The cuBLAS reference a percentage of this precision compares against."""
    try:
        return registry.REFERENCE_FOR[registry.Precision(precision)]
    except ValueError:
        return f"cublas_{precision}"


ResultKey = tuple[str, Shape, Mode, int]


def result_key(result: Result) -> ResultKey:
    """(level, shape, mode, device): results with one key are runs of the same
    measurement."""
    return result.level, result.shape, result.mode, result.device_index


def reference_key(result: Result) -> ResultKey:
    """The key of the result a percentage of cuBLAS compares against: the same shape, the
    same mode (burst against burst, sustained against sustained), the same GPU."""
    return (result.reference or reference_id(result.precision), result.shape, result.mode,
            result.device_index)


def newest(results: Iterable[Result]) -> list[Result]:
    """The newest result of each :func:`result_key` (level, shape, mode, GPU), where the
    first of that key stood: the one rule by which every reader of a recording (``report``,
    CSV and Markdown, the README table, the app's store) shows a file that ``record
    --update`` or ``--append`` measured again; the older results stay in the file as
    history."""
    latest: dict[ResultKey, Result] = {}
    for r in results:
        latest[result_key(r)] = r  # a key seen before keeps its place, takes the newer
    return list(latest.values())


# ------------------------------------------------------------------------- rows
class Column(StrEnum):
    """A column of a results table; its value is its header, the same everywhere."""

    LEVEL = "level"
    DEVICE = "device"
    PRECISION = "precision"
    MODE = "mode"
    DTYPE = "dtype"
    SHAPE = "shape"
    M = "M"
    N = "N"
    K = "K"
    MEDIAN_MS = "median ms"
    TFLOPS = "TFLOPS"
    PCT_OF_REFERENCE = "% of cuBLAS"  # with its 95% interval where paired: "97.3% ±0.4"
    PCT_CI_LOW = "% of cuBLAS 95% low"
    PCT_CI_HIGH = "% of cuBLAS 95% high"
    PAIRS = "pairs"  # the pairs a paired ratio was measured in
    # clock-normalised: TFLOPS per GHz of SM clock held, and the ratio at equal clocks
    TFLOPS_PER_GHZ = "TFLOPS/GHz"
    PCT_EQUAL_CLOCKS = "% of cuBLAS at equal clocks"
    REFERENCE = "reference"
    PCT_OF_PEAK = "% of peak"
    REL_ERR = "rel. error"
    VERIFIED = "verified"
    REPEATS = "repeats"
    T = "t (s)"
    SM_CLOCK = "SM MHz"
    SM_CLOCK_MIN = "min SM MHz"
    REF_CLOCK = "ref. SM MHz"  # the clock the reference of "% of cuBLAS" ran at
    # the SM clocks inside the launches of the level and of its reference (launch_clocks)
    LAUNCH_CLOCK = "SM MHz in launch"
    REF_LAUNCH_CLOCK = "ref. SM MHz in launch"
    CODE = "code"  # the build's key (nvrtc.code_key), shortened: which code ran
    OPERANDS = "operands"  # what A and B were drawn from (events.Distribution)
    VERSIONS = "versions"  # the driver, CUDA, cuBLAS and NVRTC that made the result
    POWER = "avg W"
    ENERGY = "J/GEMM"
    GFLOP_PER_J = "GFLOP/J"
    THROTTLED = "clocks held back"
    SUSTAINED_TFLOPS = "sustained TFLOPS"
    POWER_LIMITED = "power-limited"
    NOTES = "notes"
    BASELINE = "baseline"  # a baseline recording's TFLOPS and the change against it


NUMBER_COLUMNS = frozenset({
    Column.M, Column.N, Column.K, Column.MEDIAN_MS, Column.TFLOPS, Column.PCT_OF_REFERENCE,
    Column.PCT_OF_PEAK, Column.REL_ERR, Column.REPEATS, Column.T, Column.SM_CLOCK,
    Column.SM_CLOCK_MIN, Column.REF_CLOCK, Column.POWER, Column.ENERGY, Column.GFLOP_PER_J,
    Column.SUSTAINED_TFLOPS, Column.BASELINE, Column.PCT_CI_LOW, Column.PCT_CI_HIGH,
    Column.PAIRS, Column.TFLOPS_PER_GHZ, Column.PCT_EQUAL_CLOCKS, Column.LAUNCH_CLOCK,
    Column.REF_LAUNCH_CLOCK})
THROTTLE_COLUMNS = (Column.TFLOPS, Column.ENERGY, Column.GFLOP_PER_J)  # what throttling skews
CODE_CHARS = 8  # hex digits of a build's key shown in tables (32 of its 64 bits)
# two runs' mean SM clocks this close (percent of the higher) count as the same clock
CLOCK_SAME_PCT = 2.0
UNPAIRED = "unpaired"  # a ratio from two runs one after the other (no interval)


@dataclass(frozen=True, slots=True)
class Row:
    """One result with what it is compared against: the numbers every table shows."""

    result: Result
    pct_of_reference: float | None
    reference: str | None  # the level the percentage is of
    pct_of_peak: float | None
    reference_clock_mhz: float | None = None  # the SM clock the reference ran at
    reference_tflops: float | None = None  # the TFLOPS the percentage is of
    # the SM clocks inside the level's launches and its reference's, where the session
    # read them (a launch_clocks event: Nsight Compute); NVML's clock held otherwise
    launch_mhz: float | None = None
    ref_launch_mhz: float | None = None

    @classmethod
    def of(cls, result: Result, reference: Result | None = None,
           peak_tflops: float | None = None, clocks: LaunchClocks | None = None) -> Row:
        """``reference``: the latest result at :func:`reference_key`; ``peak_tflops``: the
        device's peak for the precision (the header's), where the event has none;
        ``clocks``: a ``launch_clocks`` event of the result's level and shape (its clocks
        are taken where it read both sides and names the same reference)."""
        r = result
        # the runner's own percentage where it had the reference; else of the reference's
        # TFLOPS it names, or of the session's latest reference result
        ref_tflops = r.reference_tflops or (reference.tflops if reference else None)
        pct_ref = r.pct_of_reference if r.pct_of_reference is not None else \
            percent(r.tflops, ref_tflops)
        ref_name = r.reference or (reference.level if reference is not None else None)
        pct_peak = r.pct_of_peak if r.pct_of_peak is not None else \
            percent(r.tflops, r.peak_tflops or peak_tflops)
        ref_clock = r.reference_sm_clock_mhz_avg if r.reference_tflops else \
            (reference.sm_clock_mhz_avg if reference is not None else None)
        # the clocks inside the launches: of this level, its reference and both sides
        used = clocks if clocks is not None and clocks.complete and pct_ref is not None and \
            clocks.level == r.level and clocks.reference == ref_name else None
        return cls(r, pct_ref, ref_name if pct_ref is not None else None, pct_peak,
                   ref_clock if pct_ref is not None else None,
                   ref_tflops if pct_ref is not None else None,
                   used.level_mhz if used else None, used.ref_mhz if used else None)

    # ------------------------------------------------- the ratio's 95% interval
    @property
    def pct_interval(self) -> tuple[float, float] | None:
        """The 95% interval of the percentage of the reference (a paired ratio: the
        runner's pseudo-median of per-pair ratios, the plain median in files before
        stretch 39); None where it has none (unpaired)."""
        r = self.result
        if self.pct_of_reference is None or r.pct_of_reference is None or \
                r.pct_ci_low is None or r.pct_ci_high is None:
            return None
        return float(r.pct_ci_low), float(r.pct_ci_high)

    @property
    def unpaired(self) -> bool:
        """A percentage of the reference from two runs one after the other (older
        recordings, a reference refused), met by the limiter at different moments; not a
        paired ratio (``paired``), even one with too few pairs for an interval (a
        sustained run of 2 trials), and not a reference's 100% of itself."""
        return self.pct_of_reference is not None and self.result.paired is not True and \
            self.reference != self.result.level

    @property
    def too_few_pairs(self) -> bool:
        """A paired ratio with no 95% interval: fewer pairs than one needs (6)."""
        return self.pct_of_reference is not None and self.result.paired is True and \
            self.pct_interval is None

    def pct_text(self) -> str:
        """The percentage of the reference with its interval: "97.3% ±0.4"."""
        low, high = self.pct_interval or (None, None)
        return pct_interval_text(self.pct_of_reference, low, high)

    def pairs_note(self) -> str:
        """How a paired ratio was measured where that needs saying: "3 of 40 pairs
        throttled; 97.8% without them"; "paired, 2 pairs: too few for an interval"; ""
        otherwise."""
        r = self.result
        if self.too_few_pairs:
            return f"paired, {counted(r.pairs or 0, 'pair')}: too few for an interval"
        if self.pct_interval is None or not r.throttled_pairs:
            return ""
        pairs = f" of {r.pairs}" if r.pairs is not None else ""
        without = f"; {pct_text(r.pct_of_reference_unthrottled)} without them" \
            if r.pct_of_reference_unthrottled is not None else ""
        return f"{r.throttled_pairs}{pairs} pairs throttled{without}"

    # ---------------------------------------------------- clock-normalised
    @property
    def in_launch(self) -> bool:
        """Whether the clocks per GHz are those inside the launches (a launch_clocks event)
        rather than NVML's clock held around them."""
        return self.launch_mhz is not None and self.ref_launch_mhz is not None

    @property
    def clock_mhz(self) -> float | None:
        """The SM clock the per-GHz figures divide by: inside the launches where read,
        else the clock the run held (NVML)."""
        return self.launch_mhz if self.in_launch else self.result.sm_clock_mhz_avg

    @property
    def ref_clock_used_mhz(self) -> float | None:
        """The reference's clock the ratio at equal clocks divides by (as clock_mhz)."""
        return self.ref_launch_mhz if self.in_launch else self.reference_clock_mhz

    @property
    def tflops_per_ghz(self) -> float | None:
        """TFLOPS per GHz of the SM clock (clock_mhz; None: clock unknown)."""
        clock = self.clock_mhz
        if not clock or clock <= 0:
            return None
        return finite(self.result.tflops / (clock / 1000.0))

    @property
    def pct_equal_clocks(self) -> float | None:
        """The ratio to the reference at equal clocks, in percent: each side's TFLOPS per
        GHz, (tflops / clock) / (ref. tflops / ref. clock), by the clocks inside the
        launches where the session read them (the ratio of cycles), else by NVML's clocks
        held; None without both clocks."""
        mine, ref_clock, ref = self.tflops_per_ghz, self.ref_clock_used_mhz, \
            self.reference_tflops
        if mine is None or not ref_clock or ref_clock <= 0 or not ref or ref <= 0:
            return None
        return finite(100.0 * mine / (ref / (ref_clock / 1000.0)))

    @property
    def pct_equal_clocks_interval(self) -> tuple[float, float] | None:
        """The interval of :attr:`pct_equal_clocks`: the measured one scaled by the same
        factor (the clocks are taken as exact: their spread is not in it)."""
        interval, eq = self.pct_interval, self.pct_equal_clocks
        if interval is None or eq is None or not self.pct_of_reference:
            return None
        scale = eq / self.pct_of_reference
        return interval[0] * scale, interval[1] * scale

    def pct_equal_clocks_text(self) -> str:
        low, high = self.pct_equal_clocks_interval or (None, None)
        return pct_interval_text(self.pct_equal_clocks, low, high)

    def clock_comparison(self) -> str | None:
        """Whether the ratio to the reference compares runs at one clock: None without a
        ratio; "same" where both clocks are known and within CLOCK_SAME_PCT; else what
        differs, in words (a ratio across clocks is partly the clock)."""
        if self.pct_of_reference is None:
            return None
        mine, ref = self.result.sm_clock_mhz_avg, self.reference_clock_mhz
        if mine is None or ref is None:
            return "clock of " + ("both" if mine is None and ref is None else
                                  "the reference" if ref is None else "this run") + " unknown"
        if abs(mine - ref) <= CLOCK_SAME_PCT / 100 * max(mine, ref):
            return "same"
        return f"at {mhz_text(mine)} MHz, reference at {mhz_text(ref)} MHz"

    @property
    def throttled(self) -> bool:
        return bool(self.result.throttled)

    def notes(self) -> str:
        r, notes = self.result, []
        level = registry.BY_ID.get(r.level)
        if r.variant == "scalar" and level is not None and level.vector > 1:
            notes.append("scalar edge path")
        ran = params_ran(r)  # given by the run, or picked by the level for the shape
        if ran:
            notes.append("ran " + ran)
        if r.precision == "fp8" and r.deepgemm_diff is not None:
            notes.append(f"DeepGEMM diff {r.deepgemm_diff:.1e}")
        if r.mode == Mode.SUSTAINED and r.tflops_min is not None and r.tflops_max is not None:
            trials = counted(r.trials, "trial") + " " if r.trials is not None else ""
            notes.append(f"{trials}{tflops_text(r.tflops_min)}–"
                         f"{tflops_text(r.tflops_max)} TFLOPS")
        if r.energy_j is None and r.energy_reason:
            notes.append(f"no energy: {r.energy_reason}")
        window = r.energy_window
        if r.energy_j is not None and window is not None and window.asked_s is not None \
                and window.asked_s != ENERGY_S[0]:  # not the documented second: said
            notes.append(f"energy over {window.asked_s:g} s")
        if r.settle_s:
            notes.append(f"settled {r.settle_s:g} s first")
        if r.launch_step is not None:
            notes.append(self.step_note())
        if self.unpaired:
            notes.append(UNPAIRED)
        pairs = self.pairs_note()
        if pairs:
            notes.append(pairs)
        clocks = self.clock_comparison()
        # a note where both clocks are known and differ (the SM MHz and ref. SM MHz columns
        # show both, a dash where one is unknown)
        if clocks is not None and clocks.startswith("at "):
            notes.append(f"% of {self.reference} {clocks}")
        return "; ".join(notes)

    def texts(self) -> dict[Column, str]:
        """Every column's text."""
        r, interval = self.result, self.pct_interval
        return {
            Column.LEVEL: r.level, Column.DEVICE: str(r.device_index),
            Column.PRECISION: r.precision.upper(), Column.MODE: str(r.mode),
            Column.DTYPE: r.dtype, Column.SHAPE: str(r.shape), Column.M: str(r.shape.M),
            Column.N: str(r.shape.N), Column.K: str(r.shape.K),
            Column.MEDIAN_MS: ms_text(r.median_ms), Column.TFLOPS: tflops_text(r.tflops),
            Column.PCT_OF_REFERENCE: self.pct_text(),
            Column.PCT_CI_LOW: ci_end_text(interval[0] if interval else None),
            Column.PCT_CI_HIGH: ci_end_text(interval[1] if interval else None),
            Column.PAIRS: DASH if r.pairs is None or interval is None else str(r.pairs),
            Column.TFLOPS_PER_GHZ: per_ghz_text(self.tflops_per_ghz),
            Column.PCT_EQUAL_CLOCKS: self.pct_equal_clocks_text(),
            Column.REFERENCE: self.reference or DASH,
            Column.PCT_OF_PEAK: pct_text(self.pct_of_peak),
            Column.REL_ERR: rel_err_text(r.rel_err), Column.VERIFIED: verdict_text(r.verified),
            Column.REPEATS: str(r.repeats), Column.T: fixed(r.t, 3),
            Column.SM_CLOCK: mhz_text(r.sm_clock_mhz_avg),
            Column.SM_CLOCK_MIN: mhz_text(r.sm_clock_mhz_min),
            Column.REF_CLOCK: mhz_text(self.reference_clock_mhz),
            Column.LAUNCH_CLOCK: mhz_text(self.launch_mhz if self.in_launch else None),
            Column.REF_LAUNCH_CLOCK: mhz_text(self.ref_launch_mhz if self.in_launch else None),
            Column.CODE: (r.code_key or DASH)[:CODE_CHARS],
            Column.OPERANDS: r.operands or str(DEFAULT_DISTRIBUTION),
            Column.VERSIONS: versions_text(r.versions),
            Column.POWER: watts_text(r.avg_power_w), Column.ENERGY: energy_text(r.energy_j),
            Column.GFLOP_PER_J: gflop_per_j_text(r.gflop_per_j),
            Column.THROTTLED: throttled_text(r.throttled), Column.NOTES: self.notes(),
        }

    def summary(self) -> str:
        """One line of what the result says, every number with its unit."""
        r = self.result
        bits = [f"{tflops_text(r.tflops)} TFLOPS ({r.precision.upper()}) at {r.shape}",
                f"median {ms_text(r.median_ms)} ms over {counted(r.repeats, 'repeat')}"]
        if r.rel_err is not None:
            tol = f" (tolerance {r.tol:.0e})" if r.tol is not None else ""
            bits.append(f"rel. error {rel_err_text(r.rel_err)}{tol}")
        if r.deepgemm_diff is not None and r.precision == "fp8":
            bits.append(f"DeepGEMM diff {r.deepgemm_diff:.1e} (limit {DEEPGEMM_DIFF_MAX:.0e})")
        bits.append(verdict_text(r.verified))
        if r.variant:
            bits.append(f"variant {r.variant}")
        if r.regs is not None:
            bits.append(f"{r.regs} registers/thread")
        if r.smem_bytes is not None:
            bits.append(f"{r.smem_bytes} B shared memory")
        if r.sm_clock_mhz_avg is not None:
            low = f" (min {mhz_text(r.sm_clock_mhz_min)})" if r.sm_clock_mhz_min is not None \
                else ""
            bits.append(f"SM clock {mhz_text(r.sm_clock_mhz_avg)} MHz{low}")
        clocks = self.clock_comparison()
        if clocks is not None:
            bits.append(f"% of {self.reference}: " +
                        ("same SM clock" if clocks == "same" else clocks))
        if self.pct_interval is not None:
            pairs = f" over {counted(r.pairs, 'pair')}" if r.pairs is not None else ""
            bits.append(f"{self.pct_text()} of {self.reference} (95% interval{pairs})")
        elif self.unpaired:
            bits.append(f"{pct_text(self.pct_of_reference)} of {self.reference} ({UNPAIRED})")
        if r.energy_j is not None:
            bits.append(f"{energy_text(r.energy_j)} per GEMM")
        if r.avg_power_w:  # (the runner writes 0.0 where the energy counter did not advance)
            bits.append(f"{watts_text(r.avg_power_w)} W average")
        if r.gflop_per_j is not None:
            bits.append(f"{gflop_per_j_text(r.gflop_per_j)} GFLOP/J")
        if r.throttled:
            bits.append(f"clocks held back: {throttled_text(r.throttled)}")
        return "; ".join(bits)

    def step_note(self) -> str:
        """Where a burst's launches changed speed mid-burst, and which side its median
        is of (kernels/results/launch_steps.py); "" where they did not, or it is not said."""
        step = self.result.launch_step
        return "" if step is None else LaunchStep.of(step).note()

    def throttle_note(self, sm_clock_max_mhz: float | None = None) -> str:
        """Why a throttled result is marked: the reasons and the SM clock; "" if none."""
        r = self.result
        if not r.throttled:
            return ""
        text = (f"{THROTTLE_MARK} clocks held back during this run: {', '.join(r.throttled)}"
                f" (clock-event reasons seen by NVML; {NOT_COUNTED})")
        clocks = []
        if r.sm_clock_mhz_min is not None:
            clocks.append(f"min {mhz_text(r.sm_clock_mhz_min)} MHz")
        if r.sm_clock_mhz_avg is not None:
            clocks.append(f"avg {mhz_text(r.sm_clock_mhz_avg)} MHz")
        if clocks:
            of_max = f" of max {mhz_text(sm_clock_max_mhz)} MHz" if sm_clock_max_mhz else ""
            text += f"; SM clock {', '.join(clocks)}{of_max}"
        return text


def not_run_texts(level: str, precision: str) -> dict[Column, str]:
    """A level without a result: its name and precision, the dash, and "not run"."""
    texts = dict.fromkeys(Column, DASH)
    texts.update({Column.LEVEL: level, Column.PRECISION: precision.upper(),
                  Column.VERIFIED: NOT_RUN, Column.NOTES: ""})
    return texts


def rows_of(results: Iterable[Result],
            peaks: Mapping[str, float | None] | None = None,
            clocks: Iterable[LaunchClocks] = ()) -> list[Row]:
    """A row per result, in order, each against the latest result at its reference key
    (as the session store does); ``peaks``: the header's peak TFLOPS per precision;
    ``clocks``: the session's launch_clocks events (the latest complete one of a level
    and shape gives its row's clocks inside the launches)."""
    results = [resolved(r) for r in results]
    latest = {result_key(r): r for r in results}
    peaks = peaks or {}
    read = {(c.level, c.shape): c for c in clocks if c.complete}
    return [Row.of(r, latest.get(reference_key(r)), peaks.get(r.precision),
                   read.get((r.level, r.shape))) for r in results]

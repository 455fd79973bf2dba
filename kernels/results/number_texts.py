"""The texts of a result's numbers and verdicts: how many digits each kind of number
gets, the dash where one was not measured, the verdict and throttle words. Every table,
export and panel that renders a row (:mod:`.rows`) writes its numbers with these. No Qt.
"""

from __future__ import annotations

import math

from ..protocol.run_records import Versions
from ..protocol.throttle import THROTTLE_MARK

DASH = "–"  # a number that was not measured
VERIFIED = "verified"
NOT_VERIFIED = "NOT verified"
NOT_RUN = "not run"
NOT_THROTTLED = "no"
MINUS = "\u2212"  # a negative change in a text ("\u221213%")



def finite(value: float) -> float | None:
    """A derived number that overflowed (100 × 1e308 TFLOPS) is not a number: n/a."""
    return value if math.isfinite(value) else None


def _significant(value: float, digits: int) -> str:
    """``digits`` significant digits in fixed point, trailing zeros kept (0.3000, 45.63),
    whole numbers from 10**(digits-1) on (1090; not 1.09e+03); beyond a million, or below
    a millionth, a power of ten (what a damaged recording may hold: 1e+308)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:.{digits - 1}f}"
    if not 1e-6 <= abs(value) < 1e7:
        return f"{value:.{digits - 1}e}"
    magnitude = math.floor(math.log10(abs(value)))
    if abs(round(value, digits - 1 - magnitude)) >= 10 ** (magnitude + 1):
        magnitude += 1  # rounding carried into the next digit (9.996 -> 10.0)
    return f"{value:.{max(0, digits - 1 - magnitude)}f}"


def fixed(value: float, decimals: int) -> str:
    """Fixed point with ``decimals``, or a power of ten from ten million on (a damaged
    recording's 1e300 is "1.000e+300", not a label of 300 digits)."""
    if math.isfinite(value) and abs(value) >= 1e7:
        return f"{value:.3e}"
    return f"{value:.{decimals}f}"


def tflops_text(value: float) -> str:
    return _significant(value, 4)


def tflops_short(value: float) -> str:
    """Three significant digits (44.8, 0.498, 1252 stays whole): a value label where the
    four-digit one does not fit beside its neighbours."""
    return _significant(value, 3)


def ms_text(value: float) -> str:
    return _significant(value, 4)


def pct_text(value: float | None) -> str:
    return DASH if value is None else f"{fixed(value, 1)}%"


def half_width(value: float, low: float, high: float) -> float:
    """An interval's half-width about its median: the farther end's distance (a skewed
    interval is not made to look narrower than it is)."""
    return max(high - value, value - low, 0.0)


def pct_interval_text(value: float | None, low: float | None = None,
                      high: float | None = None) -> str:
    """A percentage with its 95% interval as "97.3% ±0.4" (:func:`half_width`); the
    percentage alone where there is no interval (an unpaired ratio)."""
    if value is None or low is None or high is None:
        return pct_text(value)
    return f"{pct_text(value)} ±{half_width_text(half_width(value, low, high))}"


def half_width_text(value: float) -> str:
    """A half-width in percentage points: one decimal, or one significant digit under 0.1
    ("±0.03", never a "±0.0" that reads as exact)."""
    return fixed(value, 1) if value >= 0.095 or value == 0 else _significant(value, 1)


def ci_end_text(value: float | None) -> str:
    """An end of an interval in its own column: four significant digits (the two ends of a
    narrow interval differ in them: 96.90%, 0.5976%)."""
    return DASH if value is None else f"{_significant(value, 4)}%"


def per_ghz_text(value: float | None) -> str:
    return DASH if value is None else _significant(value, 4)


def rel_err_text(value: float | None) -> str:
    return DASH if value is None else f"{value:.2e}"


def mhz_text(value: float | None) -> str:
    return DASH if value is None else fixed(value, 0)


def watts_text(value: float | None) -> str:
    return DASH if value is None else fixed(value, 0)


def energy_text(joules: float | None) -> str:
    """J per GEMM with an SI prefix (J, mJ, µJ, nJ)."""
    if joules is None:
        return DASH
    for scale, unit in ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ")):
        if abs(joules) >= scale:
            return f"{joules / scale:.3g} {unit}"
    return f"{joules / 1e-9:.3g} nJ"


def gflop_per_j_text(value: float | None) -> str:
    if value is None:
        return DASH
    return fixed(value, 0) if abs(value) >= 100 else f"{value:.3g}"


def versions_text(versions: Versions | None) -> str:
    """What made a result, in one short cell: "driver 580.95 · CUDA 13.0/13.0 · cuBLAS
    13.0.2 · NVRTC 13.0" (CUDA: the driver's, then the runtime's); a dash where not said."""
    if versions is None:
        return DASH
    v = versions
    cuda = "/".join(x for x in (v.cuda_driver, v.cuda_runtime) if x)
    bits = [f"{name} {value}" for name, value in (
        ("driver", v.driver), ("CUDA", cuda), ("cuBLAS", v.cublas), ("NVRTC", v.nvrtc))
        if value]
    return " · ".join(bits) or DASH


def verdict_text(verified: bool) -> str:
    return VERIFIED if verified else NOT_VERIFIED


def throttled_text(reasons: tuple[str, ...] | None) -> str:
    """The reasons with the mark; "no" when none; the dash when nothing was sampled."""
    if reasons is None:
        return DASH
    return f"{THROTTLE_MARK} {', '.join(reasons)}" if reasons else NOT_THROTTLED

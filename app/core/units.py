"""Numbers with their units as the app shows them (energy per GEMM, throttle notes)."""

from __future__ import annotations

from ...kernels.throttle import NOT_COUNTED, THROTTLE_MARK
from .store import Result


def energy_text(joules: float | None) -> str:
    """J per GEMM with an SI prefix (J, mJ, µJ, nJ); "–" where unknown."""
    if joules is None:
        return "–"
    for scale, unit in ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ")):
        if abs(joules) >= scale:
            return f"{joules / scale:.3g} {unit}"
    return f"{joules / 1e-9:.3g} nJ"


def tflops_text(value: float) -> str:
    """Three significant digits, but whole numbers from 1000 on (1090, not 1.09e+03)."""
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def gflop_per_j_text(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def throttle_note(r: Result, sm_clock_max_mhz: float | None = None) -> str:
    """Why a result is marked: the reasons, and the SM clock it ran at; "" if none."""
    if not r.throttled:
        return ""
    text = (f"{THROTTLE_MARK} clocks held back during this run: {', '.join(r.throttled)}"
            f" (clock-event reasons seen by NVML; {NOT_COUNTED})")
    clocks = []
    if r.sm_clock_mhz_min is not None:
        clocks.append(f"min {r.sm_clock_mhz_min:.0f} MHz")
    if r.sm_clock_mhz_avg is not None:
        clocks.append(f"avg {r.sm_clock_mhz_avg:.0f} MHz")
    if clocks:
        of_max = f" of max {sm_clock_max_mhz:.0f} MHz" if sm_clock_max_mhz else ""
        text += f"; SM clock {', '.join(clocks)}{of_max}"
    return text

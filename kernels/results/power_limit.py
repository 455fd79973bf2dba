"""A level's sustained run beside its burst one: whether the power limiter held it back,
and the two columns of the ladder table that say so (:class:`.rows.Column`). No Qt."""

from __future__ import annotations

from ..protocol.records import Result
from .number_texts import DASH, MINUS, NOT_THROTTLED, finite, tflops_text, watts_text
from .rows import Column

POWER_CAP = "SwPowerCap"  # NVML's reason when the power limiter holds the clocks back
CLOCK_DROP = 0.05  # a sustained min SM clock this far under the device's max: limited


def is_power_limited(sustained: Result, sm_clock_max_mhz: float | None = None) -> bool:
    """A level is power-limited when its sustained run saw the power cap among the
    reasons that held the clocks back, or its least SM clock in the windows was more
    than CLOCK_DROP under the device's max."""
    if sustained.throttled and POWER_CAP in sustained.throttled:
        return True
    low = sustained.sm_clock_mhz_min
    return bool(sm_clock_max_mhz and low is not None
                and low < (1.0 - CLOCK_DROP) * sm_clock_max_mhz)


def sustained_ratio(burst: Result | None, sustained: Result | None) -> float | None:
    """Sustained TFLOPS over burst TFLOPS at the same shape (None without both)."""
    if burst is None or sustained is None or burst.tflops <= 0:
        return None
    return finite(sustained.tflops / burst.tflops)


def power_limit_text(burst: Result | None, sustained: Result | None,
                     sm_clock_max_mhz: float | None = None) -> str:
    """How much the power limit costs the level: "−13% under the 700 W limit" (sustained
    against burst TFLOPS); "no" when the sustained run was not power-limited; the dash
    without a sustained result."""
    if sustained is None:
        return DASH
    if not is_power_limited(sustained, sm_clock_max_mhz):
        return NOT_THROTTLED
    ratio = sustained_ratio(burst, sustained)
    limit = f"the {watts_text(sustained.power_limit_w)} W limit" \
        if sustained.power_limit_w else "the power limit"
    if ratio is None:
        return f"under {limit}"
    change = f"{100.0 * (ratio - 1.0):+.0f}%".replace("-", MINUS)
    return f"{change} under {limit}"


def sustained_texts(burst: Result | None, sustained: Result | None,
                    sm_clock_max_mhz: float | None = None) -> dict[Column, str]:
    """The two columns that set a level's sustained run beside its burst one."""
    return {Column.SUSTAINED_TFLOPS: DASH if sustained is None
            else tflops_text(sustained.tflops),
            Column.POWER_LIMITED: power_limit_text(burst, sustained, sm_clock_max_mhz)}

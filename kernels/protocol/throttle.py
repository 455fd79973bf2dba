"""What counts as throttled: the one rule for the runner, the ladder, the exports and the
telemetry view.

NVML reports clock-event reasons, and some of them are not slowdowns: ``GpuIdle`` (the
GPU had nothing to do), ``ApplicationsClocksSetting`` and ``DisplayClockSetting`` (a
clock someone set) and ``SyncBoost`` (clocks kept in step with other GPUs). A run is
throttled when any other reason was active during its timed repeats; the telemetry
view's reason strip draws only those reasons, so a marked run has a bar under it.
"""

from __future__ import annotations

from collections.abc import Iterable

THROTTLE_MARK = "⚠"
NOT_A_SLOWDOWN = ("GpuIdle", "ApplicationsClocksSetting", "SyncBoost", "DisplayClockSetting")
NOT_COUNTED = f"{', '.join(NOT_A_SLOWDOWN)} not counted"  # said wherever reasons are listed


def is_slowdown(reason: str) -> bool:
    return reason not in NOT_A_SLOWDOWN


def slowdowns(reasons: Iterable[object] | None) -> tuple[str, ...]:
    """The reasons that held the clocks back, each once, in the order first seen."""
    names = (str(r) for r in reasons or ())
    return tuple(dict.fromkeys(r for r in names if is_slowdown(r)))

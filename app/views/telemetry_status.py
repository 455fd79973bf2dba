"""The Telemetry tab's status line: how many NVML samples, what held the clocks back, and
where the samples end if the session went on without them."""

from __future__ import annotations

from ...kernels.results import counted
from ..core.store import SessionStore
from .telemetry_spec import SAMPLES_END_NOTE_S


def status_text(store: SessionStore) -> str:
    tele = store.telemetry
    available, reason = store.telemetry_status()
    if not available:
        text = f"telemetry unavailable: {reason or 'no reason given'}"
        if tele.count:
            text += f" ({tele.count} NVML samples recorded before)"
    elif tele.count == 0:
        text = "no NVML samples yet"
    else:
        def listed(seen: dict[str, int]) -> str:
            return ", ".join(f"{r} ({counted(n, 'sample')})" for r, n in sorted(seen.items()))

        text = (f"{tele.count} NVML samples; clocks held back by: "
                f"{listed(tele.reasons_seen) or 'nothing'}")
        if tele.other_reasons_seen:  # reported, but not slowdowns (kernels.throttle)
            text += f"; not counted: {listed(tele.other_reasons_seen)}"
    tail_s = store.last_t_s - tele.last_t
    if tele.count and tail_s > SAMPLES_END_NOTE_S:
        text += (f"; samples end at {tele.last_t:.0f} s, the session at "
                 f"{store.last_t_s:.0f} s (no NVML samples after)")
    return text

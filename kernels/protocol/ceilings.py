"""The ``ceilings`` event (``gemmscope record --ceilings``): what this GPU sustained in
the probes of kernels/engine/ceilings.py, the measured roofs of the roofline.

Fields: ``bandwidth_gbs`` (DRAM, the better of the read and copy probes), ``read_gbs``,
``copy_gbs``, ``peak_tflops`` (per precision, the best probe of it), ``probes`` (each
probe: ``name``, ``precision``, ``instruction``, ``tflops`` or ``gbs``, ``ms``,
``sm_clock_mhz`` read by NVML after it; ``tflops`` null with a ``reason`` where the probe's
compiled code is not the instruction it counts), ``buffer_bytes``. Numbers are finite and not
negative, or null; a probe list is bounded."""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

from .events import ProtocolError

TYPE = "ceilings"
MAX_PROBES = 32
Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
_NUMBERS = ("bandwidth_gbs", "read_gbs", "copy_gbs", "buffer_bytes")
_PROBE_NUMBERS = ("tflops", "gbs", "ms", "sm_clock_mhz")
_PROBE_TEXTS = ("name", "precision", "instruction", "reason")


def _number(value: Any) -> bool:
    return (value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                              and math.isfinite(value) and value >= 0))


def check(obj: dict[str, Any]) -> str | None:
    """Why this ceilings event cannot be read, or None."""
    for name in _NUMBERS:
        if not _number(obj.get(name)):
            return f'"{name}" must be a number (not negative) or null'
    peaks = obj.get("peak_tflops")
    if not isinstance(peaks, dict):
        return '"peak_tflops" must map precisions to TFLOPS'
    for key, value in peaks.items():
        if key not in PRECISIONS or not _number(value):
            return f'"peak_tflops": {str(key)[:20]!r} must be a precision with a number'
    probes = obj.get("probes", [])
    if not isinstance(probes, list) or len(probes) > MAX_PROBES:
        return f'"probes" must be a list of at most {MAX_PROBES} probes'
    for probe in probes:
        if not isinstance(probe, dict):
            return '"probes" must hold objects'
        if any(not _number(probe.get(n)) for n in _PROBE_NUMBERS):
            return "a probe's numbers must be numbers (not negative) or null"
        if any(not isinstance(probe.get(n, ""), str) for n in _PROBE_TEXTS):
            return "a probe's name, precision and instruction must be text"
    return None


def refuse_unreadable(obj: dict[str, Any]) -> None:
    """ProtocolError saying why, for a ceilings event that breaks the rules (the careful
    way's first step, protocol.records.Ceilings)."""
    if (why := check(obj)) is not None:
        raise ProtocolError(f"{TYPE} event: {why}")

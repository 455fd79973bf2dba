"""A recording beside a baseline recording (``gemmscope report A --baseline B``, ``replay A
--baseline B``): the results of both joined per (level, shape, mode, GPU), the
differences of each pair, and what differs between the two runs (GPU, driver, CUDA,
clocks, power limit, compiler, code), said before any number is compared.

No Qt; reads events as the recording gives them (kernels/protocol/recording.py)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol.events import session_devices


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What a recording says of the run it holds, for the baseline warning."""

    gpus: tuple[str, ...]
    driver: str | None
    cuda: str | None
    cupy: str | None
    sm_clock_max_mhz: float | None
    sm_clock_run_mhz: float | None  # median of the results' average SM clocks
    power_limit_w: float | None
    compilers: tuple[str, ...]
    commit: str | None
    sources: Mapping[str, str] = field(default_factory=dict)  # file -> sha256


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def run_facts(header: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> RunFacts:
    devices = session_devices(dict(header))
    first = devices[0] if devices else {}
    clocks, limits, compilers = [], [], []
    for ev in events:
        kind = ev.get("type")
        if kind == "result" and (c := _num(ev.get("sm_clock_mhz_avg"))) is not None:
            clocks.append(c)
        elif kind == "telemetry" and (w := _num(ev.get("power_limit_w"))) is not None:
            limits.append(w)
        elif kind == "result" and (w := _num(ev.get("power_limit_w"))) is not None:
            limits.append(w)
        elif kind == "build" and isinstance(ev.get("compiler"), str):
            compilers.append(ev["compiler"])
    raw_levels = header.get("levels")
    levels: dict[str, Any] = raw_levels if isinstance(raw_levels, dict) else {}
    sources = {str(v["source"]): str(v["sha256"]) for v in levels.values()
               if isinstance(v, dict) and isinstance(v.get("source"), str)
               and isinstance(v.get("sha256"), str)}
    raw_version = header.get("gemmscope")
    version: dict[str, Any] = raw_version if isinstance(raw_version, dict) else {}
    return RunFacts(
        gpus=tuple(str(d.get("name") or "no GPU") for d in devices),
        driver=_text(first.get("driver")), cuda=_text(first.get("cuda_runtime")),
        cupy=_text(first.get("cupy")), sm_clock_max_mhz=_num(first.get("sm_clock_max_mhz")),
        sm_clock_run_mhz=statistics.median(clocks) if clocks else None,
        power_limit_w=limits[-1] if limits else None,
        compilers=tuple(sorted(set(compilers))), commit=_text(version.get("commit")),
        sources=sources)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mhz(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.0f} MHz"


def differences(a: RunFacts, b: RunFacts) -> list[str]:
    """What differs between the run and its baseline, one phrase each (empty: nothing
    this module compares). Clocks differ by more than 2 %, power limits by 1 W."""
    out = []
    if a.gpus != b.gpus:
        out.append(f"GPU: {', '.join(a.gpus) or 'none'} vs {', '.join(b.gpus) or 'none'}")
    for name, tx, ty in (("driver", a.driver, b.driver), ("CUDA", a.cuda, b.cuda),
                         ("CuPy", a.cupy, b.cupy)):
        if tx != ty:
            out.append(f"{name}: {tx or 'unknown'} vs {ty or 'unknown'}")
    for name, x, y in (("max SM clock", a.sm_clock_max_mhz, b.sm_clock_max_mhz),
                       ("SM clock during the runs (median)", a.sm_clock_run_mhz,
                        b.sm_clock_run_mhz)):
        if (x is None) != (y is None) or (x and y and abs(x - y) > 0.02 * max(x, y)):
            out.append(f"{name}: {_mhz(x)} vs {_mhz(y)}")
    wx, wy = a.power_limit_w, b.power_limit_w
    if (wx is None) != (wy is None) or (wx is not None and wy is not None
                                        and abs(wx - wy) >= 1):
        show = ["unknown" if v is None else f"{v:.0f} W" for v in (wx, wy)]
        out.append(f"power limit: {show[0]} vs {show[1]}")
    if a.compilers != b.compilers:
        out.append(f"compiler: {'; '.join(a.compilers) or 'unknown'} vs "
                   f"{'; '.join(b.compilers) or 'unknown'}")
    if a.commit != b.commit:
        out.append(f"gemmscope commit: {a.commit or 'unknown'} vs {b.commit or 'unknown'}")
    changed = sorted(f for f in set(a.sources) | set(b.sources)
                     if a.sources.get(f) != b.sources.get(f))
    if changed:
        shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4
                                          else "")
        out.append(f"code: {shown} differ (sha256)")
    return out


def warning(a: RunFacts, b: RunFacts) -> str | None:
    """The one line said before the comparison, or None where the runs match."""
    diffs = differences(a, b)
    return None if not diffs else "the baseline differs: " + "; ".join(diffs)


Key = tuple[str, int, int, int, str, str]  # level, M, N, K, mode, GPU name
COMPARED = ("tflops", "pct_of_reference", "sm_clock_mhz_avg", "avg_power_w", "energy_j",
            "regs", "smem_bytes")


@dataclass(frozen=True, slots=True)
class Pair:
    key: Key
    run: Mapping[str, Any] | None  # the result event of the recording (None: only B has it)
    base: Mapping[str, Any] | None  # the baseline's

    def value(self, field_name: str, of_base: bool = False) -> float | None:
        ev = self.base if of_base else self.run
        return None if ev is None else _num(ev.get(field_name))

    def change(self, field_name: str) -> float | None:
        """run / baseline - 1 of a field (None where either lacks it or the baseline's is
        zero)."""
        x, y = self.value(field_name), self.value(field_name, of_base=True)
        if x is None or y is None or y == 0:
            return None
        return x / y - 1


def _gpu_names(header: Mapping[str, Any]) -> dict[int, str]:
    return {int(d.get("id", 0)): str(d.get("name") or "no GPU")
            for d in session_devices(dict(header))}


def latest_results(header: Mapping[str, Any], events: Iterable[Mapping[str, Any]]
                   ) -> dict[Key, Mapping[str, Any]]:
    """Each (level, shape, mode, GPU)'s latest result."""
    names = _gpu_names(header)
    out: dict[Key, Mapping[str, Any]] = {}
    for ev in events:
        if ev.get("type") != "result":
            continue
        raw = ev.get("device")
        device = raw if isinstance(raw, int) and not isinstance(raw, bool) else 0
        key = (str(ev["level"]), int(ev["M"]), int(ev["N"]), int(ev["K"]),
               str(ev.get("mode") or "burst"), names.get(device, "no GPU"))
        out[key] = ev
    return out


def join(run: Mapping[Key, Mapping[str, Any]], base: Mapping[Key, Mapping[str, Any]]
         ) -> list[Pair]:
    """A pair per key of either, the run's keys first in their order, then the
    baseline's own."""
    keys = list(run) + [k for k in base if k not in run]
    return [Pair(k, run.get(k), base.get(k)) for k in keys]

"""A recording beside a baseline recording (``gemmscope report A --baseline B``, ``replay A
--baseline B``): the results of both joined per (level, shape, mode, GPU), the
differences of each pair, and what differs between the two runs (GPU, driver, CUDA,
clocks, power limit, compiler, code), said before any number is compared.

No Qt; reads events as the recording gives them (kernels/protocol/recording.py)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..protocol import records as rec
from ..protocol.events import Mode

if TYPE_CHECKING:
    from ..protocol.decoding import EventRecord
    from ..protocol.telemetry_columns import TelemetryBlock


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


def _block_limit(block: TelemetryBlock) -> float | None:
    """The latest power limit a block of NVML samples read (None: none did)."""
    column = block.columns.column("power_limit_w")[block.start:block.stop]
    read = [float(v) for v in column if math.isfinite(v)]
    return read[-1] if read else None


def run_facts(header: rec.Session | None,
              events: Iterable[EventRecord | TelemetryBlock]) -> RunFacts:
    """The facts of a recording: its header and events (NVML samples one by one, or in
    blocks of columns as kernels/protocol/recording.py reads them)."""
    from ..protocol.telemetry_columns import TelemetryBlock

    clocks: list[float] = []
    limits: list[float] = []
    compilers: list[str] = []
    for ev in events:
        if isinstance(ev, rec.Result):
            if ev.sm_clock_mhz_avg is not None:
                clocks.append(ev.sm_clock_mhz_avg)
            if ev.power_limit_w is not None:
                limits.append(ev.power_limit_w)
        elif isinstance(ev, rec.Telemetry) and ev.power_limit_w is not None:
            limits.append(ev.power_limit_w)
        elif isinstance(ev, TelemetryBlock) and (w := _block_limit(ev)) is not None:
            limits.append(w)
        elif isinstance(ev, rec.Build) and ev.compiler is not None:
            compilers.append(ev.compiler)
    return facts_of(header, clocks, limits[-1] if limits else None, compilers)


def facts_of(header: rec.Session | None, clocks: Iterable[float], power_limit_w: float | None,
             compilers: Iterable[str]) -> RunFacts:
    """The facts of a run: its header, the results' average SM clocks, the latest power
    limit, the compilers of its builds."""
    devices = header.gpus() if header is not None else []
    first = devices[0] if devices else rec.DeviceEntry(id=0)
    levels = header.levels if header is not None else {}
    version = header.gemmscope if header is not None else None
    clocks = list(clocks)
    return RunFacts(
        gpus=tuple(d.name or "no GPU" for d in devices),
        driver=first.driver, cuda=first.cuda_runtime, cupy=first.cupy,
        sm_clock_max_mhz=first.sm_clock_max_mhz,
        sm_clock_run_mhz=statistics.median(clocks) if clocks else None,
        power_limit_w=power_limit_w, compilers=tuple(sorted(set(compilers))),
        commit=version.commit if version is not None else None,
        sources={ref.source: ref.sha256 for ref in levels.values()})


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


Key = tuple[str, int, int, int, Mode, str]  # level, M, N, K, mode, GPU name


def _count(value: int | None) -> float | None:
    return None if value is None else float(value)


# the fields compared, each read as the decoder typed it (a finite number, or None):
# nothing is checked again here
COMPARED: dict[str, Callable[[rec.Result], float | None]] = {
    "tflops": lambda r: r.tflops, "pct_of_reference": lambda r: r.pct_of_reference,
    "sm_clock_mhz_avg": lambda r: r.sm_clock_mhz_avg, "avg_power_w": lambda r: r.avg_power_w,
    "energy_j": lambda r: r.energy_j, "regs": lambda r: _count(r.regs),
    "smem_bytes": lambda r: _count(r.smem_bytes)}


@dataclass(frozen=True, slots=True)
class Pair:
    key: Key
    run: rec.Result | None  # the result event of the recording (None: only B has it)
    base: rec.Result | None  # the baseline's
    # the main-loop instruction mix of each side's build ({class: count}, nonzero ones)
    run_mix: Mapping[str, int] | None = None
    base_mix: Mapping[str, int] | None = None

    def value(self, field_name: str, of_base: bool = False) -> float | None:
        ev = self.base if of_base else self.run
        return None if ev is None else COMPARED[field_name](ev)

    def change(self, field_name: str) -> float | None:
        """run / baseline - 1 of a field (None where either lacks it or the baseline's is
        zero)."""
        x, y = self.value(field_name), self.value(field_name, of_base=True)
        if x is None or y is None or y == 0:
            return None
        return x / y - 1


def _gpu_names(header: rec.Session | None) -> dict[int, str]:
    return {d.id: d.name or "no GPU" for d in (header.gpus() if header is not None else [])}


def latest_results(header: rec.Session | None, events: Iterable[object]
                   ) -> dict[Key, rec.Result]:
    """Each (level, shape, mode, GPU)'s latest result."""
    names = _gpu_names(header)
    out: dict[Key, rec.Result] = {}
    for ev in events:
        if isinstance(ev, rec.Result):
            key = (ev.level, ev.M, ev.N, ev.K, ev.mode,
                   names.get(ev.device_index, "no GPU"))
            out[key] = ev
    return out


def join(run: Mapping[Key, rec.Result], base: Mapping[Key, rec.Result],
         run_builds: Iterable[rec.Build] = (), base_builds: Iterable[rec.Build] = ()
         ) -> list[Pair]:
    """A pair per key of either, the run's keys first in their order, then the
    baseline's own; with the builds of each recording, the instruction mix of each."""
    keys = list(run) + [k for k in base if k not in run]
    mine, theirs = list(run_builds), list(base_builds)
    return [Pair(k, run.get(k), base.get(k), mix_of(build_of(run.get(k), mine)),
                 mix_of(build_of(base.get(k), theirs))) for k in keys]


def build_of(result: rec.Result | None, builds: Iterable[rec.Build]) -> rec.Build | None:
    """The build a result ran: the same code key, else the same level and variant, else
    the level's latest build."""
    if result is None:
        return None
    found: rec.Build | None = None
    for b in builds:
        if b.level != result.level:
            continue
        if result.code_key is not None and b.code_key == result.code_key:
            return b
        if found is None or b.variant == result.variant:
            found = b
    return found


def mix_of(build: rec.Build | None) -> dict[str, int] | None:
    """The build's main-loop instruction mix (the whole kernel's where it has no main
    loop), nonzero classes only; None where it has none."""
    mix = (build.instruction_mix or {}) if build is not None else {}
    part = mix.get("main_loop") or mix.get("kernel")
    return None if part is None else {c: n for c, n in part.items() if n}


def mix_text(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> str:
    """The two mixes side by side: "same (FFMA 64, LDS.128 16)", the classes that differ
    ("FFMA 64 / 32; LDS 0 / 8"), or a dash for a side without one."""
    if a is None and b is None:
        return "–"
    if a is None or b is None:
        one = a if a is not None else b
        text = ", ".join(f"{c} {n}" for c, n in (one or {}).items())
        return f"{text or 'none'} / –" if a is not None else f"– / {text or 'none'}"
    if dict(a) == dict(b):
        return "same (" + ", ".join(f"{c} {n}" for c, n in a.items()) + ")"
    classes = list(dict.fromkeys([*a, *b]))
    return "; ".join(f"{c} {a.get(c, 0)} / {b.get(c, 0)}" for c in classes
                     if a.get(c, 0) != b.get(c, 0))

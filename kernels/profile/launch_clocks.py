"""``gemmscope record --launch-clocks``: the SM clock inside a level's launches and inside
its reference's, one ``launch_clocks`` event per level (docs/protocol.md).

Why: NVML's clock, sampled around the launches, says 1980 MHz on the H200 while a Tensor
Core launch runs at its own clock, 10-21% lower, the denser its Tensor Core work the lower
(docs/perf-notes.md, "The SM clock inside a launch"). A ratio "at equal clocks" made from
NVML's figures is then the time ratio again; made from the clocks inside the launches it
is the ratio of cycles (mma_tma: 0.66 of cuBLAS FP16 in time, 0.61 in cycles).

How: each side is launched ``launches`` times in a process Nsight Compute starts, the
launches between cudaProfilerStart and Stop (``engine.launch --profiled-range``: the
random fill, the library's set-up call and the float64 check are outside), clocks left to
the GPU and caches flushed before each launch (ncu's default)::

    ncu --profile-from-start off --clock-control none \\
        --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \\
        -c LAUNCHES*MAX_KERNELS -f -o REPORT \\
        python -m gemmscope.kernels.engine.launch LEVEL M N K --launches N --profiled-range

ncu runs each launch alone (it serialises them), so a launch starts from a GPU that idled
for the profiler's milliseconds: the clocks are those of one launch at a time, not of a
burst. The main kernel of a side is the one with the most GPU time over the launches (a
library call may add a memset); the event keeps its median time and clock. A side ncu
gives nothing for has no numbers and the event says why: never made up.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..ladder import registry
from ..ladder.registry import Kind
from ..models.ncu_compare import NcuKernelRow, NcuParseError, parse_raw_csv
from ..protocol.records import MAX_CLOCK_LAUNCHES
from ..results.counts import counted
from . import ncu
from .ncu_reference import TIME_METRIC, kernel_ms, raw_command, run_tool
from .ncu_source_step import launch_report

TYPE = "launch_clocks"
CLOCK_METRIC = "sm__cycles_elapsed.avg.per_second"
DEFAULT_LAUNCHES = 20
DEFAULT_SIZE = 4096
MAX_KERNELS = 4  # kernels one launch of a side may make (a library call and its memset)
TIMEOUT_S = 180.0
# ncu's rate units -> MHz
RATE_UNITS = {"cycle/second": 1e-6, "cycle/msecond": 1e-3, "cycle/usecond": 1.0,
              "cycle/nsecond": 1e3, "hz": 1e-6, "khz": 1e-3, "mhz": 1.0, "ghz": 1e3}


def profile_command(exe: str, level_id: str, M: int, N: int, K: int, launches: int,
                    report: Path) -> list[str]:
    """The ncu command that times ``launches`` launches of a level or a reference."""
    if not 1 <= launches <= MAX_CLOCK_LAUNCHES:
        raise ValueError(f"launches must be 1 to {MAX_CLOCK_LAUNCHES}, not {launches}")
    return [exe, "--profile-from-start", "off", "--clock-control", "none",
            "--metrics", f"{TIME_METRIC},{CLOCK_METRIC}",
            "-c", str(launches * MAX_KERNELS), "-f", "-o", str(report),
            *ncu.launch_command(level_id, M, N, K, one_block_per_sm=False),
            "--launches", str(launches), "--profiled-range"]


def _us(row: NcuKernelRow) -> float | None:
    ms = kernel_ms(row)
    return ms * 1e3 if ms else None


def _mhz(row: NcuKernelRow) -> float | None:
    value = row.values.get(CLOCK_METRIC)
    unit = row.units.get(CLOCK_METRIC, "").strip().lower().replace(" ", "")
    scale = RATE_UNITS.get(unit)
    if value is None or scale is None or value <= 0:
        return None
    return value * scale


class Side:
    """What ncu read of one side's launches: the main kernel's median time (µs) and SM
    clock (MHz) and how many launches of it, or why there is none."""

    def __init__(self, kernel: str | None = None, us: float | None = None,
                 mhz: float | None = None, launches: int = 0, reason: str | None = None):
        self.kernel, self.us, self.mhz, self.launches, self.reason = \
            kernel, us, mhz, launches, reason

    @classmethod
    def of_rows(cls, rows: list[NcuKernelRow]) -> Side:
        """The main kernel of the rows (the name with the most GPU time in all) and its
        medians over the launches where ncu gave both numbers."""
        total: dict[str, float] = {}
        for r in rows:
            total[r.kernel] = total.get(r.kernel, 0.0) + (_us(r) or 0.0)
        if not total or max(total.values()) <= 0:
            return cls(reason="ncu gave no kernel with a GPU time")
        name = max(total, key=lambda k: total[k])
        timed = [(us, mhz) for r in rows if r.kernel == name
                 for us, mhz in [(_us(r), _mhz(r))] if us is not None and mhz is not None]
        if not timed:
            return cls(name, reason=f"ncu gave no SM clock ({CLOCK_METRIC}) for {name}")
        return cls(name, statistics.median(u for u, _ in timed),
                   statistics.median(m for _, m in timed), len(timed))


def measure(exe: str, level_id: str, M: int, N: int, K: int, launches: int,
            timeout_s: float = TIMEOUT_S) -> Side:
    """One side: ncu on ``launches`` launches of the level or reference."""
    with tempfile.TemporaryDirectory(prefix="gemmscope-clocks-") as tmp:
        report = Path(tmp) / "clocks"
        done = run_tool(profile_command(exe, level_id, M, N, K, launches, report), timeout_s)
        if isinstance(done, str):
            return Side(reason=done)
        said = launch_report(done.stdout)
        if said.get("verified") is False:
            return Side(reason=f"{level_id} did not verify at {M}x{N}x{K} "
                               f"(rel. error {said.get('rel_err')})")
        files = list(Path(tmp).glob("clocks*.ncu-rep"))
        if done.returncode != 0 or not files:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
            return Side(reason=f"ncu exited {done.returncode}: {tail[0][:300]}")
        raw = run_tool(raw_command(exe, files[0]), timeout_s)
        if isinstance(raw, str):
            return Side(reason=raw)
        try:
            rows = parse_raw_csv(raw.stdout)
        except NcuParseError as exc:
            return Side(reason=f"ncu's raw page: {exc}")
    return Side.of_rows(rows)


def event(level_id: str, M: int, N: int, K: int, reference: str | None, level: Side,
          ref: Side | None, launches: int, t: float, version: str | None) -> dict[str, Any]:
    """The ``launch_clocks`` event of a level and its reference."""
    reasons = [f"{who}: {s.reason}" for who, s in (("level", level), ("reference", ref))
               if s is not None and s.reason]
    if ref is None:
        reasons.append(f"no reference for {level_id}")
    return {"type": TYPE, "t": t, "level": level_id, "M": M, "N": N, "K": K, "tool": ncu.TOOL,
            "reference": reference, "launches": launches,
            "level_mhz": level.mhz, "level_us": level.us, "level_kernel": level.kernel,
            "ref_mhz": ref.mhz if ref else None, "ref_us": ref.us if ref else None,
            "ref_kernel": ref.kernel if ref else None, "tool_version": version,
            "clock_control": "none", "reason": "; ".join(reasons)[:2000] or None}


def clock_levels(ids: list[str]) -> list[str]:
    """The ladder levels among ``ids`` that have a reference ("all": every one)."""
    levels = [lv for lv in registry.LEVELS if lv.kind is Kind.LEVEL and lv.reference]
    if ids == ["all"]:
        return [lv.id for lv in levels]
    known = {lv.id for lv in levels}
    unknown = [i for i in ids if i not in known]
    if unknown or not ids:
        raise ValueError(f"--launch-clocks: {', '.join(unknown) or 'no level'}: not a ladder "
                         f"level with a reference; those: {', '.join(sorted(known))}")
    return ids


class LaunchClocksStep(ncu.CountersStep):
    """After the runs: each level and its reference under ncu, a ``launch_clocks`` event
    per level (a reference shared by several levels is measured once per shape)."""

    def __init__(self, levels: list[str], exe: str, size: tuple[int, int, int],
                 launches: int, timeout_s: float, stderr: TextIO):
        super().__init__(levels, exe, size, timeout_s, stderr)
        self.launches = launches

    def check(self) -> None:
        if self.exe is None:
            self.say(f"--launch-clocks: {self.asked!r} not found; no launch clocks will be "
                     "recorded (pass --ncu /path/to/ncu)")

    def __call__(self, now: Callable[[], float], emit: Callable[[dict[str, Any]], None]
                 ) -> None:
        if self.exe is None:
            self.failed = list(self.levels)
            return
        M, N, K = self.size
        version = ncu.tool_version(self.exe)
        refs: dict[str, Side] = {}
        for level_id in self.levels:
            reference = registry.get(level_id).reference
            self.say(f"ncu launch clocks {level_id} and {reference} {M}x{N}x{K} ...")
            many = counted(self.launches, "launch", "launches")
            emit({"type": "info", "t": now(), "level": level_id, "M": M, "N": N, "K": K,
                  "message": f"ncu reads the SM clock inside {many} of {level_id} and of "
                             f"{reference} at {M}×{N}×{K}, each launch alone: not timed"})
            start = time.monotonic()
            mine = measure(self.exe, level_id, M, N, K, self.launches, self.timeout_s)
            ref = None
            if reference:
                if reference not in refs:
                    refs[reference] = measure(self.exe, reference, M, N, K, self.launches,
                                              self.timeout_s)
                ref = refs[reference]
            ev = event(level_id, M, N, K, reference, mine, ref, self.launches, now(), version)
            emit(ev)
            if ev["reason"] is None:
                self.recorded.append(level_id)
                self.say(f"  {level_id}: {mine.mhz:.0f} MHz, {mine.us:.1f} us; {reference}: "
                         f"{ref.mhz:.0f} MHz, {ref.us:.1f} us"  # type: ignore[union-attr]
                         f" ({time.monotonic() - start:.0f} s)")
            else:
                self.failed.append(level_id)
                self.say(f"  {level_id}: {ev['reason']}")

    def summary(self) -> str:
        text = f"launch clocks of {len(self.recorded)} level(s) recorded"
        if self.failed:
            text += f"; incomplete for {', '.join(self.failed)} (their events say why)"
        return text

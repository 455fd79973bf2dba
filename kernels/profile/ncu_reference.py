"""``gemmscope record --ncu`` on the references: which kernel cuBLAS (cuBLASLt) ran, one
``library_kernel`` event per reference (docs/protocol.md), and its per-SASS-line counters
as a ``source_counters`` event where ncu's source page gave them.

After the timed runs, each reference is called once in a process ncu starts, its call
between cudaProfilerStart and Stop (``engine.launch --profiled-range``: the random fill,
the library's set-up call and the float64 check are outside)::

    ncu --profile-from-start off --section LaunchStats --section SourceCounters \\
        --metrics gpu__time_duration.sum --clock-control none -c 16 -f -o REPORT \\
        python -m gemmscope.kernels.engine.launch cublas_bf16 M N K --profiled-range

A call may launch several kernels (a split-K GEMM and its reduction): the report's raw page
(``ncu -i REPORT --csv --page raw``) names each with its time, grid, block, registers and
shared memory, and the one with the most GPU time is the reference's kernel. Its SASS and
the executed count of each instruction come from the source page (``--print-source
sass``); cuBLAS ships no source, so there are no source lines. Where ncu is missing,
refused, fails or prints what this reader does not know, the event says so (``status``,
``reason``) and has no numbers: never made up.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..ladder import registry
from ..ladder.registry import Kind
from ..models.ncu_compare import NcuKernelRow, NcuParseError, parse_raw_csv
from ..protocol import source_counters as sc
from ..protocol.source_counters import Status
from ..results.counts import counted
from . import library_sass, ncu, ncu_source_step
from .ncu_source import SourcePage, SourcePageError, parse_sass_pages

TYPE = "library_kernel"
SECTIONS = ("LaunchStats", "SourceCounters")
TIME_METRIC = "gpu__time_duration.sum"
MAX_KERNELS = 16  # profiled of one call
TIMEOUT_S = 120.0
# raw page metric -> LaunchedKernel field
LAUNCH_METRICS = {"launch__registers_per_thread": "regs",
                  "launch__shared_mem_per_block_static": "smem_static_bytes",
                  "launch__shared_mem_per_block_dynamic": "smem_dynamic_bytes"}
TIME_UNITS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0,
              "ms": 1.0, "second": 1e3, "s": 1e3}
_DIMS = re.compile(r"^\(?\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)?$")


def references_of(runs: Sequence[Any]) -> list[str]:
    """The references a plan runs, in order, each once: the references asked for, and
    the one each compared level is measured against."""
    out: list[str] = []
    for r in runs:
        level = registry.BY_ID.get(r.level)
        if level is None:
            continue
        if level.kind is Kind.REFERENCE:
            out.append(level.id)
        elif getattr(r, "compare", None) is not False and level.reference in registry.BY_ID:
            out.append(level.reference)
    return list(dict.fromkeys(out))


def profile_command(exe: str, level_id: str, M: int, N: int, K: int, report: Path
                    ) -> list[str]:
    if registry.get(level_id).kind is not Kind.REFERENCE:
        raise ValueError(f"{level_id} is a level: its kernel is its own (record --ncu-source)")
    sections = [a for s in SECTIONS for a in ("--section", s)]
    return [exe, "--profile-from-start", "off", *sections, "--metrics", TIME_METRIC,
            "--clock-control", "none", "-c", str(MAX_KERNELS), "-f", "-o", str(report),
            *ncu.launch_command(level_id, M, N, K, one_block_per_sm=False),
            "--profiled-range"]


def raw_command(exe: str, report: Path) -> list[str]:
    return [exe, "-i", str(report), "--csv", "--page", "raw", "--print-units", "base"]


def dims(cell: str | None) -> list[int] | None:
    """ncu's "(132, 1, 1)" as [132, 1, 1]; None where it is not three counts."""
    m = _DIMS.match((cell or "").strip())
    return [int(g) for g in m.groups()] if m else None


def _int(value: float | None) -> int | None:
    return int(value) if value is not None and value >= 0 and value.is_integer() else None


def kernel_ms(row: NcuKernelRow) -> float | None:
    """A kernel's GPU time on the raw page (TIME_METRIC, in its unit) in ms; None where
    ncu gave none or a unit this reader does not know."""
    ms = row.values.get(TIME_METRIC)
    scale = TIME_UNITS.get(row.units.get(TIME_METRIC, "nsecond").strip(), None)
    return ms * scale if ms is not None and scale and ms >= 0 else None


def launched(row: NcuKernelRow) -> dict[str, Any]:
    """One kernel of the raw page as a ``LaunchedKernel``'s fields."""
    out: dict[str, Any] = {"name": row.kernel[:2000], "ms": kernel_ms(row),
                           "grid": dims(row.raw.get("Grid Size")),
                           "block": dims(row.raw.get("Block Size"))}
    for metric, name in LAUNCH_METRICS.items():
        out[name] = _int(row.values.get(metric))
    return out


def main_kernel(kernels: list[dict[str, Any]]) -> int:
    """The index of the kernel with the most GPU time (the first where none has one)."""
    timed = [(k["ms"], i) for i, k in enumerate(kernels) if k.get("ms") is not None]
    return max(timed)[1] if timed else 0


def page_of(pages: list[SourcePage], kernels: list[dict[str, Any]], index: int
            ) -> SourcePage | None:
    """The source page of kernel ``index``: by position where the page lists the same
    kernels as the raw page, else the first page of its name."""
    name = kernels[index]["name"]
    if len(pages) == len(kernels) and pages[index].kernel in (name, None):
        return pages[index]
    return next((p for p in pages if p.kernel == name), None)


def run_tool(cmd: list[str], timeout_s: float) -> subprocess.CompletedProcess[str] | str:
    """A profiler's run, or why it gave nothing (past its time, not started)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"{Path(cmd[0]).name} ran past {timeout_s:g} s"
    except OSError as exc:
        return f"cannot start {cmd[0]}: {exc.strerror or exc}"


class Profiled:
    """What one reference's profile gave."""

    def __init__(self, status: Status, reason: str | None = None,
                 kernels: list[dict[str, Any]] | None = None, page: SourcePage | None = None,
                 command: list[str] | None = None, seconds: float | None = None,
                 variant: str | None = None):
        self.status, self.reason = status, reason
        self.kernels = kernels or []
        self.page, self.command, self.seconds, self.variant = page, command or [], seconds, variant


def profile(exe: str, level_id: str, M: int, N: int, K: int,
            timeout_s: float = TIMEOUT_S) -> Profiled:
    with tempfile.TemporaryDirectory(prefix="gemmscope-ncu-ref-") as tmp:
        report = Path(tmp) / level_id
        cmd = profile_command(exe, level_id, M, N, K, report)
        t0 = time.perf_counter()
        proc = run_tool(cmd, timeout_s)
        seconds = round(time.perf_counter() - t0, 1)
        if isinstance(proc, str):
            status = Status.TIMEOUT if "ran past" in proc else Status.MISSING
            return Profiled(status, proc, command=cmd, seconds=seconds)
        said = proc.stderr + "\n" + proc.stdout
        variant = ncu_source_step.launch_report(proc.stdout).get("variant")
        variant = variant if isinstance(variant, str) else None
        rep = report.with_suffix(".ncu-rep")
        if "ERR_NVGPUCTRPERM" in said:
            return Profiled(Status.REFUSED, " ".join(
                ln for ln in ncu_source_step._error_lines(said) if "ERR_NVGPUCTRPERM" in ln
            )[:500], command=cmd, seconds=seconds, variant=variant)
        if proc.returncode or not rep.exists():
            why = "; ".join(ncu_source_step._error_lines(said)) or "no output"
            what = (f"ncu exit code {proc.returncode}" if proc.returncode
                    else "ncu wrote no report (no kernel in the profiled range?)")
            return Profiled(Status.FAILED, f"{what}: {why}"[:sc.MAX_TEXT_CHARS], command=cmd,
                            seconds=seconds, variant=variant)
        left = max(ncu_source_step.EXPORT_MIN_S, timeout_s - (time.perf_counter() - t0))
        done = _read(exe, rep, left)
        done.command, done.variant = cmd, variant
        done.seconds = round(time.perf_counter() - t0, 1)
        return done


def _read(exe: str, rep: Path, timeout_s: float) -> Profiled:
    raw = run_tool(raw_command(exe, rep), timeout_s)
    if isinstance(raw, str):
        return Profiled(Status.TIMEOUT if "ran past" in raw else Status.FAILED, raw)
    try:
        rows = parse_raw_csv(raw.stdout)
    except NcuParseError as exc:
        return Profiled(Status.UNREADABLE, f"the report's raw page: {exc}")
    if not rows:
        return Profiled(Status.FAILED, "ncu profiled no kernel in the reference's call")
    kernels = [launched(r) for r in rows]
    page_run = run_tool(ncu_source_step.page_command(exe, rep, "sass"),
                    max(ncu_source_step.EXPORT_MIN_S, timeout_s / 2))
    if isinstance(page_run, str):
        return Profiled(Status.OK, f"no SASS: {page_run}", kernels)
    try:
        page = page_of(parse_sass_pages(page_run.stdout), kernels, main_kernel(kernels))
    except SourcePageError as exc:
        return Profiled(Status.OK, f"no SASS: {exc}", kernels)
    return Profiled(Status.OK, None if page is not None else
                    "no SASS: the source page did not list the kernel with the most time",
                    kernels, page)


def event(level_id: str, M: int, N: int, K: int, p: Profiled, t: float,
          version: str | None) -> dict[str, Any]:
    """The reference's ``library_kernel`` event."""
    ev: dict[str, Any] = {"type": TYPE, "t": t, "level": level_id, "M": M, "N": N, "K": K,
                          "tool": ncu.TOOL, "tool_version": version, "status": str(p.status),
                          "variant": p.variant,
                          "reason": p.reason, "command": list(p.command),
                          "seconds": p.seconds}
    if p.kernels:
        top = p.kernels[main_kernel(p.kernels)]
        block = top.get("block")
        ev.update(kernel=top["name"], kernels=p.kernels[:32], kernels_total=len(p.kernels),
                  grid=top.get("grid"), block=block, regs=top.get("regs"),
                  smem_static_bytes=top.get("smem_static_bytes"),
                  smem_dynamic_bytes=top.get("smem_dynamic_bytes"), ms=top.get("ms"),
                  threads_per_block=block[0] * block[1] * block[2] if block else None,
                  sources=None, sources_reason="a library kernel: the library ships no "
                                               "source, only its SASS")
    if p.page is None:
        ev["sass_reason"] = ev["instruction_mix_reason"] = (
            p.reason or "no SASS" if p.kernels else p.reason)
        return ev
    # branch targets are absolute addresses on the page: the base makes them offsets
    text = library_sass.compact(((ln.offset, ln.sass, None) for ln in p.page.lines),
                                p.page.base)
    ev.update(library_sass.fields(text))
    ev["executed_mix"] = library_sass.executed_mix(
        {ln.offset: ln.values.get("inst_executed") for ln in p.page.lines}, text)
    return ev


def counters_event(level_id: str, M: int, N: int, K: int, p: Profiled, t: float,
                   version: str | None) -> dict[str, Any] | None:
    """The per-line counters of the reference's kernel (a ``source_counters`` event), or
    None where its page was not read."""
    if p.page is None:
        return None
    out = ncu_source_step.Outcome(Status.OK, page=p.page, variant=p.variant,
                                  seconds=p.seconds, command=p.command)
    ev = ncu_source_step.event(level_id, M, N, K, out, t, version)
    ev["launch"] = "library_call"
    if len(p.kernels) > 1:
        ev["reason"] = (f"the call launched {counted(len(p.kernels), 'kernel')}; these are "
                        "the lines of the one with the most GPU time")
    return ev


class ReferenceKernelsStep(ncu.CountersStep):
    """After the runs: ncu on each reference's call, one ``library_kernel`` event each
    whatever happened, and a ``source_counters`` event where the SASS page was read."""

    # (the options, the ncu found and how the step speaks: ncu.CountersStep's)

    def check(self) -> None:
        if self.exe is None and self.levels:
            self.say(f"--ncu: {self.asked!r} not found; the references' library_kernel "
                     "events will say so")

    def __call__(self, now: Callable[[], float], emit: Callable[[dict[str, Any]], None]
                 ) -> None:
        M, N, K = self.size
        version = ncu_source_step.tool_version(self.exe) if self.exe and self.levels else None
        for level_id in self.levels:
            if self.exe is None:
                p = Profiled(Status.MISSING, f"{self.asked!r} not found (no Nsight Compute "
                                             "on this machine)")
            else:
                self.say(f"ncu {level_id}'s library kernel {M}x{N}x{K} ...")
                emit({"type": "info", "t": now(), "level": level_id, "M": M, "N": N,
                      "K": K, "message": f"ncu profiles {level_id}'s library call at "
                                         f"{M}×{N}×{K}: one call under Nsight Compute, "
                                         "not timed"})
                p = profile(self.exe, level_id, M, N, K, self.timeout_s)
            emit(event(level_id, M, N, K, p, now(), version))
            lines = counters_event(level_id, M, N, K, p, now(), version)
            if lines is not None:
                emit(lines)
            if p.status is Status.OK and p.kernels:
                self.recorded.append(level_id)
            else:
                self.failed.append(level_id)
                if self.exe is not None:
                    self.say(f"ncu on {level_id}'s call: {p.status}: {p.reason}")

    def summary(self) -> str:
        text = f"library kernels of {len(self.recorded)} reference(s) recorded"
        if self.failed:
            text += f"; none for {', '.join(self.failed)} (their events say why)"
        return text

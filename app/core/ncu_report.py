"""A user's Nsight Compute report (``.ncu-rep``) read through NVIDIA's ``ncu_report`` module
(the ``ncu`` extra: ``pip install 'gemmscope[ncu]'``; imported here only when a report is
opened, never part of the bundle), each kernel as the records the Code view shows: a
``library_kernel`` record (name, launch, resources, SASS, instruction mix, its roofline
numbers) and a ``source_counters`` record (per-instruction counts and stall reasons, with
the source line of each where the report has line info). No Qt.

The report is untrusted input: its size is bounded before it is opened, what is read of it
is bounded (kernels, instructions, sources), texts are data (never markup, never run), and
whatever goes wrong is a :class:`ReportError` in words.

Per-instruction metrics are the report's source-correlated metrics (an instance value per
instruction, its correlation id the instruction's address): instructions executed, warp
samples, the stall reason of each sample group, shared-memory wavefronts, under the names
in METRICS and STALL_PREFIX. A report without them shows its SASS without counts.
"""

from __future__ import annotations

import importlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...kernels import protocol as rec
from ...kernels.files import MAX_BYTES, Kind, NotRegularFile, open_regular
from ...kernels.profile import MAX_SASS_LINES, Outcome, PageLine, SourcePage, executed_mix
from ...kernels.profile import MAX_TEXT_CHARS as MAX_SASS_TEXT_CHARS
from ...kernels.profile import compact as compact_sass
from ...kernels.profile import event as source_counters_event
from ...kernels.profile import fields as sass_fields
from ...kernels.protocol import MAX_TEXT_CHARS, Status, of
from ...kernels.toolchain import repo_path
from .library_build import REPORT_TOOL
from .ncu_extra import INSTALL, MISSING, MODULE, missing

__all__ = ["INSTALL", "MISSING", "MODULE", "Report", "ReportError", "ReportKernel",
           "checked_path", "missing", "read_in_process"]

MAX_REPORT_BYTES = MAX_BYTES[Kind.REPORT]
MAX_KERNELS = 64
MAX_INSTRUCTIONS = MAX_SASS_LINES
MAX_SOURCE_CHARS = 1 << 20  # of one source file
MAX_SOURCES_CHARS = 4 << 20  # of a kernel's sources together
SUFFIXES = (".ncu-rep", ".ncu-repz")

# source_counters field -> the report's source-correlated metric names (first found)
METRICS = {
    "inst_executed": ("inst_executed", "sass__inst_executed", "smsp__sass_inst_executed"),
    "stall_samples": ("smsp__pcsamp_sample_count", "pcsamp_sample_count"),
    "smem_wavefronts": ("memory_l1_wavefronts_shared",),
    "smem_wavefronts_ideal": ("memory_l1_wavefronts_shared_ideal",),
    "smem_excess_wavefronts": ("derived__memory_l1_wavefronts_shared_excessive",
                               "memory_l1_wavefronts_shared_excessive"),
}
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
TIME_METRIC = "gpu__time_duration.sum"
# the time's unit as the module names it (Nsight Compute 2025.3 writes "ns")
TIME_UNITS = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0,
              "msecond": 1.0, "s": 1e3, "second": 1e3}
DRAM_METRICS = (("dram__bytes.sum",), ("dram__bytes_read.sum", "dram__bytes_write.sum"))
# thread-level SASS instruction counts: (metric, FLOPs each, precision). A report of
# `--set full` holds them as rates (".sum.per_cycle_elapsed", the SpeedOfLight roofline's
# inputs), whose count is the rate times CYCLES (checked on an H200 report of
# register_2d at 1024^3: 1024^3 FFMAs exactly)
CYCLES_METRIC = "smsp__cycles_elapsed.avg"
PER_CYCLE = ".per_cycle_elapsed"
FLOP_METRICS = tuple(
    (f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum", 2 if op == "fma" else 1, prec)
    for p, prec in (("f", "fp32"), ("h", "fp16"), ("d", "fp64"))
    for op in ("fma", "add", "mul"))
DIMS = {"grid": ("launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z"),
        "block": ("launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z")}
SIZES = {"grid": "launch__grid_size", "block": "launch__block_size"}
RESOURCES = {"regs": "launch__registers_per_thread",
             "smem_static_bytes": "launch__shared_mem_per_block_static",
             "smem_dynamic_bytes": "launch__shared_mem_per_block_dynamic"}


class ReportError(ValueError):
    """The report could not be read; the message says why, in words."""


@dataclass(frozen=True, slots=True)
class ReportKernel:
    key: str  # "report.ncu-rep #2": the Code view's id for it
    kernel: rec.LibraryKernel
    lines: rec.SourceCounters | None  # None: the report has no per-instruction counts
    precision: str | None = None  # of most of its FLOPs, where counted


@dataclass(frozen=True, slots=True)
class Report:
    path: str
    kernels: tuple[ReportKernel, ...]
    left_out: int = 0  # kernels past MAX_KERNELS

    def tflops(self, k: ReportKernel) -> float | None:
        lk = k.kernel
        if lk.flops is None or not lk.ms:
            return None
        return lk.flops / (lk.ms * 1e-3) / 1e12


def _value(metric: Any, idx: int | None = None) -> float | None:
    try:
        v = metric.value() if idx is None else metric.value(idx)
    except Exception:  # a metric the module cannot give: absent
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


def _metric(action: Any, name: str) -> float | None:
    try:
        m = action.metric_by_name(name)
    except Exception:
        return None
    return None if m is None else _value(m)


def _count(v: float | None) -> int | None:
    return int(v) if v is not None and v >= 0 and v.is_integer() and v < 2 ** 53 else None


def _text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    return str(value)[:limit] if value is not None else ""


def _dims(action: Any, which: str) -> list[int] | None:
    d = [_count(_metric(action, n)) for n in DIMS[which]]
    if all(x is not None for x in d):
        return [int(x) for x in d if x is not None]
    size = _count(_metric(action, SIZES[which]))
    return [size] if size is not None else None


def _per_pc(action: Any) -> tuple[dict[str, dict[int, float]], dict[str, str]]:
    """field -> {address: value} and field -> metric name, for the source-correlated
    metrics the report has; stall reasons as fields "stall:<reason>"."""
    try:
        names = list(action.metric_names())
    except Exception:
        return {}, {}
    wanted = {n: f for f, names_of in METRICS.items() for n in names_of}
    out: dict[str, dict[int, float]] = {}
    columns: dict[str, str] = {}
    for name in names:
        name = str(name)
        field = wanted.get(name)
        if field is None and name.startswith(STALL_PREFIX) and not name.endswith("not_issued"):
            field = "stall:" + name[len(STALL_PREFIX):]
        if field is None or field in out:
            continue
        try:
            m = action.metric_by_name(name)
            if m is None or not m.has_correlation_ids():
                continue
            ids = m.correlation_ids()
            n = min(int(m.num_instances()), MAX_INSTRUCTIONS * 4)
        except Exception:
            continue
        values = {}
        for i in range(n):
            a, v = _count(_value(ids, i)), _value(m, i)
            if a is not None and v is not None:
                values[a] = v
        if values:
            out[field] = values
            columns[field] = name
    return out, columns


def _kernel(action: Any, key: str, index: int) -> ReportKernel:
    try:
        name = action.name(getattr(type(action), "NameBase_DEMANGLED", 1))
    except Exception:
        name = f"kernel {index + 1}"
    name = _text(name, 2000)
    per_pc, columns = _per_pc(action)
    addresses = sorted({a for values in per_pc.values() for a in values})[:MAX_INSTRUCTIONS]
    base = addresses[0] if addresses else 0
    where: dict[int, tuple[str, int]] = {}
    sass: list[tuple[int, str, tuple[tuple[str, int], ...] | None]] = []
    for a in addresses:
        try:
            text = _text(action.sass_by_pc(a), MAX_SASS_TEXT_CHARS)
            info = action.source_info(a)
            src = (repo_path(_text(info.file_name(), 300), []), int(info.line())) \
                if info is not None else None
        except Exception:
            text, src = "", None
        if src is not None and src[1] > 0:
            where[a - base] = src
        sass.append((a - base, text or "?", (src,) if src else None))
    ms = _metric(action, TIME_METRIC)
    try:
        unit = str(action.metric_by_name(TIME_METRIC).unit())
    except Exception:
        unit = "nsecond"
    ms = ms * TIME_UNITS[unit] if ms is not None and unit in TIME_UNITS else None
    ev: dict[str, Any] = {"type": "library_kernel", "t": 0.0, "level": key, "M": 0, "N": 0,
                          "K": 0, "tool": REPORT_TOOL, "status": "ok", "kernel": name,
                          "grid": _dims(action, "grid"), "block": _dims(action, "block"),
                          "ms": ms}
    ev.update({f: _count(_metric(action, m)) for f, m in RESOURCES.items()})
    block = ev["block"]
    ev["threads_per_block"] = math.prod(block) if block else None
    ev["kernels"] = [{k: ev[k] for k in ("grid", "block", "regs", "smem_static_bytes",
                                          "smem_dynamic_bytes", "ms")} | {"name": name}]
    ev["sources"], ev["sources_reason"] = _sources(action, set(f for f, _ in where.values()))
    precision = _roofline(action, ev)
    if sass:
        text = compact_sass(sass, base)  # branch targets are addresses
        ev.update(sass_fields(text))
        inst = per_pc.get("inst_executed")
        if inst:
            ev["executed_mix"] = executed_mix(
                {a - base: v for a, v in inst.items()}, text)
    else:
        ev["sass_reason"] = ev["instruction_mix_reason"] = (
            "the report has no per-instruction metrics of this kernel (profile it with "
            "--section SourceCounters)")
    lines = _lines(key, name, per_pc, columns, base, sass, where) if sass else None
    kernel = of(ev)
    assert isinstance(kernel, rec.LibraryKernel)  # ev's "type" says so
    return ReportKernel(key, kernel, lines, precision)


def _sources(action: Any, files: set[str]) -> tuple[dict[str, str] | None, str | None]:
    try:
        found = dict(action.source_files())
    except Exception:
        found = {}
    out: dict[str, str] = {}
    total = 0
    for path, text in found.items():
        key = repo_path(_text(path, 300), [])
        if not isinstance(text, str) or not text or key not in files:
            continue
        text = text[:MAX_SOURCE_CHARS]
        if total + len(text) > MAX_SOURCES_CHARS:
            break
        out[key] = text
        total += len(text)
    if out:
        return out, None
    return None, ("the report holds no source of this kernel (profile with --import-source "
                  "yes and -lineinfo)")


def _roofline(action: Any, ev: dict[str, Any]) -> str | None:
    """FLOPs counted from the report's SASS instruction metrics and its DRAM bytes, into
    ``ev``; the precision with the most FLOPs."""
    by_precision: dict[str, float] = {}
    used = []
    cycles = _metric(action, CYCLES_METRIC)
    for name, flops, precision in FLOP_METRICS:
        n, source = _metric(action, name), name
        if n is None and cycles is not None and (rate := _metric(action, name + PER_CYCLE)
                                                 ) is not None:
            n, source = rate * cycles, f"{name}{PER_CYCLE} x {CYCLES_METRIC}"
        if n is not None and n > 0:
            by_precision[precision] = by_precision.get(precision, 0.0) + flops * n
            used.append(source)
    if by_precision:
        ev["flops"] = sum(by_precision.values())
        ev["flops_from"] = ("SIMT FMA/ADD/MUL thread instructions (" + ", ".join(used)
                            + "); Tensor Core work is not counted")[:MAX_TEXT_CHARS]
    for names in DRAM_METRICS:
        values = [_metric(action, n) for n in names]
        if all(v is not None and v >= 0 for v in values):
            ev["dram_bytes"] = sum(v for v in values if v is not None)
            break
    return max(by_precision, key=lambda p: by_precision[p]) if by_precision else None


def _lines(key: str, name: str, per_pc: dict[str, dict[int, float]],
           columns: dict[str, str], base: int,
           sass: list[tuple[int, str, Any]], where: dict[int, tuple[str, int]]
           ) -> rec.SourceCounters:
    plain = {f: v for f, v in per_pc.items() if not f.startswith("stall:")}
    stalls = {f[len("stall:"):]: v for f, v in per_pc.items() if f.startswith("stall:")}
    page_lines = []
    for off, text, _ in sass:
        a = off + base
        values = {f: _num(v.get(a)) for f, v in plain.items()}
        reasons = {r: n for r, v in stalls.items() if (n := _num(v.get(a)))}
        page_lines.append(PageLine(off, text, values, reasons))
    page = SourcePage(name, {f: columns[f] for f in plain}, page_lines, sorted(stalls), 1,
                      base)
    out = Outcome(Status.OK, page=page, where=where)
    ev = source_counters_event(key, 0, 0, 0, out, 0.0, None)
    ev.update(tool=REPORT_TOOL, launch="report", command=None)
    counters = of(ev)
    assert isinstance(counters, rec.SourceCounters)  # source_counters_event's type
    return counters


def _num(v: float | None) -> int | float | None:
    if v is None:
        return None
    return int(v) if v.is_integer() and abs(v) < 2 ** 53 else v


def checked_path(path: str | Path, module: str = MODULE) -> Path:
    """The report's path, where it may be opened: a report's suffix, a size within
    MAX_REPORT_BYTES and the module installed; ReportError in words before anything reads
    it."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise ReportError(f"{p.name} is not an Nsight Compute report (.ncu-rep)")
    try:  # a regular file (a device or FIFO is never handed to the native reader)
        with open_regular(p) as fh:
            size = os.fstat(fh.fileno()).st_size
    except NotRegularFile:
        raise ReportError(f"{p.name}: not a regular file (a device, FIFO or folder); a "
                          "report is a file") from None
    except OSError as exc:
        raise ReportError(f"cannot read {p.name}: {exc.strerror or exc}") from None
    if size > MAX_REPORT_BYTES:
        raise ReportError(f"{p.name} is {size / 2**20:,.0f} MiB, over the "
                          f"{MAX_REPORT_BYTES / 2**20:,.0f} MiB this app opens")
    why = missing(module)
    if why is not None:
        raise ReportError(why)
    return p


def read_in_process(path: str | Path, module: str = MODULE) -> Report:
    """Every kernel of the report (at most MAX_KERNELS), read in this process; ReportError
    in words. The app reads through app/core/ncu_report_process.py, which runs this in a
    child (the module is native code reading an untrusted file)."""
    p = checked_path(path, module)
    try:
        context = importlib.import_module(module).load_report(str(p))
        actions = [r.action_by_idx(i) for r in (context.range_by_idx(j) for j in
                                                  range(context.num_ranges()))
                   for i in range(r.num_actions())]
    except Exception as exc:  # the module's own errors, in its words
        raise ReportError(f"ncu_report could not read {p.name}: {_text(exc, 300)}"
                          ) from None
    if not actions:
        raise ReportError(f"{p.name} holds no profiled kernel (not a report, or empty)")
    kernels = tuple(_kernel(a, f"{p.name} #{i + 1}", i)
                    for i, a in enumerate(actions[:MAX_KERNELS]))
    return Report(str(p), kernels, max(0, len(actions) - MAX_KERNELS))

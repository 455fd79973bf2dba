"""A library's kernel (a ``library_kernel`` event: the kernel a reference ran, or a kernel
of an opened Nsight Compute report) as the Code view shows a level: a ``build`` record of
what the profiler saw, and the sentences of its launch panel. Free of Qt.

A library ships no source, so the Source tab says so; its SASS, instruction mix and launch
geometry are the profiler's. Where the profile gave nothing, every panel says why."""

from __future__ import annotations

from ...kernels import protocol as rec
from ...kernels.protocol import Status
from ...kernels.results import counted
from ...kernels.toolchain import CLASSES

REPORT_TOOL = "ncu-report"  # a kernel of an opened .ncu-rep (app/core/ncu_report.py)
NO_SOURCE = "a library kernel: the library ships no source, only its SASS"
_cache: dict[int, tuple[rec.LibraryKernel, rec.Build]] = {}


def as_build(lk: rec.LibraryKernel) -> rec.Build:
    """The event as a build record (the same object for the same event)."""
    kept = _cache.get(id(lk))
    if kept is not None and kept[0] is lk:
        return kept[1]
    failed = None if lk.status is Status.OK else (
        f"ncu gave no kernel for {lk.level} ({lk.status}): {lk.reason or '?'}")
    build = rec.Build(
        t=lk.t, level=lk.level, variant=lk.variant or "library", kernel=lk.kernel,
        compiler=None, sources=lk.sources, sources_reason=failed or lk.sources_reason
        or NO_SOURCE, regs=lk.regs, smem_static_bytes=lk.smem_static_bytes,
        smem_dynamic_bytes=lk.smem_dynamic_bytes, threads_per_block=lk.threads_per_block,
        sass=lk.sass, sass_reason=failed or lk.sass_reason, main_loop=lk.main_loop,
        instruction_mix=lk.instruction_mix,
        instruction_mix_reason=failed or lk.instruction_mix_reason)
    if len(_cache) > 256:
        _cache.clear()
    _cache[id(lk)] = (lk, build)
    return build


NAME_CHARS = 22  # of a kernel's name in the launch panel (the notice has it whole)


def short(name: str) -> str:
    """A kernel's name cut for the narrow launch panel: its start, then "…"."""
    return name if len(name) <= NAME_CHARS else name[:NAME_CHARS - 1] + "…"


def dims_text(dims: list[int] | None) -> str:
    return "?" if not dims else "×".join(str(d) for d in dims)


def _bytes(n: int | None) -> str:
    return "?" if n is None else f"{n:,} B"


def _ms(ms: float | None) -> str:
    return "time ?" if ms is None else f"{ms:.4g} ms"


def what(lk: rec.LibraryKernel) -> str:
    """Where the kernel comes from, in words: a reference's call or a report."""
    if lk.tool == REPORT_TOOL:
        return f"a kernel of the Nsight Compute report {lk.level}"
    return (f"the kernel {lk.level} ran, as ncu saw one call at {lk.M}×{lk.N}×{lk.K}"
            + (f" (ncu {lk.tool_version})" if lk.tool_version else ""))



def notice(lk: rec.LibraryKernel) -> str:
    """The Code view's line above the panels."""
    if lk.status is not Status.OK or lk.kernel is None:
        return (f"{lk.level}: ncu gave no kernel ({lk.status}): {lk.reason or '?'}")
    return (f"{lk.level}: {lk.kernel} (grid {dims_text(lk.grid)}, block "
            f"{dims_text(lk.block)}; {what(lk)})")


def launch_lines(lk: rec.LibraryKernel) -> list[str]:
    """The launch panel's sentences (where a level shows its occupancy)."""
    if lk.status is not Status.OK or lk.kernel is None:
        return [notice(lk), "nothing of its kernel was recorded: no name, launch, "
                            "resources or SASS"]
    out = [f"{short(lk.kernel)}, {what(lk)}:",
           f"grid {dims_text(lk.grid)} blocks of {dims_text(lk.block)} threads"
           + (f" ({lk.threads_per_block} per block)" if lk.threads_per_block else ""),
           f"{'?' if lk.regs is None else lk.regs} registers per thread, shared memory "
           f"{_bytes(lk.smem_static_bytes)} static + {_bytes(lk.smem_dynamic_bytes)} "
           f"dynamic",
           f"GPU time {_ms(lk.ms)}"]
    total = lk.kernels_total or len(lk.kernels)
    if total > 1:
        out.append(f"the call launched {counted(total, 'kernel')} (the one with the most time is "
                   "shown):")
        out += [f"  {short(k.name)}: {_ms(k.ms)}, grid {dims_text(k.grid)}, block "
                f"{dims_text(k.block)}, {'?' if k.regs is None else k.regs} registers"
                for k in lk.kernels]
        if total > len(lk.kernels):
            out.append(f"  and {total - len(lk.kernels)} more")
    mix = executed_text(lk)
    out.append(mix if mix else "executed instruction mix: "
               + (lk.instruction_mix_reason or "not recorded (no per-line counts)"))
    return out


def executed_text(lk: rec.LibraryKernel) -> str | None:
    """The executed instruction mix in words, largest first (None: not recorded)."""
    mix = lk.executed_mix
    if not mix:
        return None
    total = sum(v for v in mix.values() if v > 0)
    if total <= 0:
        return None
    parts = sorted(((v, c) for c, v in mix.items() if v > 0 and c in CLASSES), reverse=True)
    return "executed (warp instructions, whole kernel): " + ", ".join(
        f"{c} {100 * v / total:.1f}%" for v, c in parts[:8])


def no_profile_text(level_id: str) -> str:
    """Why a reference shows no code: the recording has no profile of its call."""
    return (f"{level_id} is a reference: this recording has no profile of the kernel its "
            "library ran (gemmscope record --ncu profiles each reference's call and records "
            "its kernel's name, launch, resources and SASS)")

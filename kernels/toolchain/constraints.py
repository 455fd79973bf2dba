"""The constraint check: whether a variant (a level or a user's kernel, with parameters,
at a shape) can launch on the device, said in words before anything runs.

One list of findings, each a line a person reads: the parameters against their values
and the kernel's rules; threads per block against 1024 and the block's sides; the grid's
sides; shared memory against the default 48 KiB (above it the kernel opts in) and the
opt-in limit; registers (from a compile, where one was made) against 255 per thread and
the register file per block; then blocks and warps per SM and what limits them (the
occupancy calculator, ``occupancy.py``). :func:`over_limits` is the same per-block check
as one sentence, which the engine asks before it launches.

No GPU and no Qt: the CLI checks before it sends a run, and the app shows the findings
beside the parameters it edits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..device.gpu import DeviceLimits as BlockLimits
from ..ladder.level import Level
from ..results.counts import counted
from . import occupancy
from .occupancy import HOPPER, DeviceLimits

DEFAULT_SMEM_BYTES = 48 * 1024  # without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize)
MAX_GRID = (2**31 - 1, 65535, 65535)


class Status(StrEnum):
    OK = "ok"
    NOTE = "note"  # holds, with something to know (an opt-in, a limit reached)
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Finding:
    what: str  # "parameters", "launch", "threads", "grid", "shared memory", "registers",
    # "occupancy"
    status: Status
    text: str

    def line(self) -> str:
        mark = {Status.OK: "ok  ", Status.NOTE: "note", Status.FAIL: "FAIL"}[self.status]
        return f"{mark} {self.what}: {self.text}"


@dataclass(frozen=True, slots=True)
class Variant:
    """What the check needs of one variant at one shape."""

    label: str  # "regblock_f4 BM=128 BN=128 ..." for messages
    problems: tuple[str, ...]  # parameter and shape rules that failed, in words
    block: tuple[int, int] = (1, 1)
    grid: tuple[int, int, int] = (1, 1, 1)
    dyn_smem: int = 0
    regs: int | None = None  # per thread, from a compile
    static_smem: int | None = None  # from a compile
    resources_from: str = ""  # "NVRTC 13.0 for sm_90" where regs came from a compile
    local_bytes: int = 0  # per thread, from a compile: spilled registers and stack
    # the block, grid and shared memory were computed from the parameters (False: they
    # could not be, and the defaults above are no launch: nothing is checked against them)
    launch: bool = True


@dataclass(frozen=True, slots=True)
class Check:
    findings: tuple[Finding, ...]
    occupancy: dict[str, Any] | None = field(default=None)

    @property
    def ok(self) -> bool:
        return all(f.status is not Status.FAIL for f in self.findings)

    @property
    def refusal(self) -> str | None:
        """Every failure in one line (None when the variant can launch)."""
        fails = [f"{f.what}: {f.text}" for f in self.findings if f.status is Status.FAIL]
        return "; ".join(fails) if fails else None

    def lines(self) -> list[str]:
        return [f.line() for f in self.findings]


def check(v: Variant, limits: DeviceLimits = HOPPER,
          default_smem: int = DEFAULT_SMEM_BYTES) -> Check:
    out: list[Finding] = []
    if v.problems:
        out += [Finding("parameters", Status.FAIL, p) for p in v.problems]
    else:
        out.append(Finding("parameters", Status.OK, "within their values and rules"))
    if not v.launch:  # no block, grid or shared memory to check: say so, claim nothing
        out.append(Finding("launch", Status.NOTE, "threads, grid, shared memory, registers "
                           "and occupancy not checked: the launch could not be computed "
                           "from these parameters (above)"))
        return Check(tuple(out), None)
    bx, by = v.block
    threads = bx * by
    if bx < 1 or by < 1:  # (two negative sides make a positive count)
        out.append(Finding("threads", Status.FAIL,
                           f"a block of {bx}x{by}: each side is at least 1"))
    elif threads > limits.max_threads_per_block:
        out.append(Finding("threads", Status.FAIL,
                           f"{threads} per block ({bx}x{by}); CUDA allows at most "
                           f"{limits.max_threads_per_block}"))
    elif threads < 1:
        out.append(Finding("threads", Status.FAIL, "a block needs at least one thread"))
    else:
        warn = threads % limits.warp_size
        out.append(Finding("threads", Status.NOTE if warn else Status.OK,
                           f"{threads} per block ({bx}x{by}, {-(-threads // 32)} warps)"
                           + (f"; not a multiple of {limits.warp_size}: the last warp "
                              "runs partly idle" if warn else "")))
    bad = [f"{'xyz'[i]} of {g} is below 1" if g < 1 else
           f"{'xyz'[i]} of {g} is above {MAX_GRID[i]}" for i, g in enumerate(v.grid)
           if not 1 <= g <= MAX_GRID[i]]
    out.append(Finding("grid", Status.FAIL if bad else Status.OK,
                       "; ".join(bad) if bad else
                       f"{v.grid[0]}x{v.grid[1]}x{v.grid[2]} blocks"))
    static = v.static_smem or 0
    smem = static + v.dyn_smem
    parts = (f" ({v.dyn_smem} dynamic + {static} static)" if v.static_smem else
             " dynamic, the static part known after a compile" if v.static_smem is None
             else "")
    if v.dyn_smem < 0:
        out.append(Finding("shared memory", Status.FAIL,
                           f"{counted(v.dyn_smem, 'byte')} of dynamic shared memory: at least 0"))
    elif smem > limits.smem_per_block_optin:
        out.append(Finding("shared memory", Status.FAIL,
                           f"{smem} bytes ({smem / 1024:.1f} KiB) per block{parts}; the "
                           f"device allows at most {limits.smem_per_block_optin} "
                           f"({limits.smem_per_block_optin / 1024:.0f} KiB), opted in"))
    elif smem > default_smem:
        out.append(Finding("shared memory", Status.NOTE,
                           f"{smem / 1024:.1f} KiB per block{parts}: above the default "
                           f"{default_smem // 1024} KiB, so the launch opts in (up to "
                           f"{limits.smem_per_block_optin / 1024:.0f} KiB)"))
    else:
        out.append(Finding("shared memory", Status.OK,
                           f"{smem / 1024:.1f} KiB per block{parts}, within the default "
                           f"{default_smem // 1024} KiB"))
    occ = None
    if v.regs is None:
        out.append(Finding("registers", Status.NOTE,
                           "not known before a compile; occupancy below counts none"))
    else:
        per_block = v.regs * threads
        src = f" ({v.resources_from})" if v.resources_from else ""
        if v.regs > limits.max_regs_per_thread:
            out.append(Finding("registers", Status.FAIL,
                               f"{v.regs} per thread{src}; at most "
                               f"{limits.max_regs_per_thread}"))
        elif per_block > limits.regs_per_block:
            out.append(Finding("registers", Status.FAIL,
                               f"{v.regs} per thread x {threads} threads = {per_block} per "
                               f"block{src}; the register file gives a block at most "
                               f"{limits.regs_per_block}"))
        elif v.local_bytes:
            out.append(Finding("registers", Status.NOTE,
                               f"{v.regs} per thread{src} and "
                               f"{counted(v.local_bytes, 'byte')} of local memory per "
                               "thread: registers spill (or a stack array)"))
        else:
            out.append(Finding("registers", Status.OK,
                               f"{v.regs} per thread{src}, {per_block} per block of "
                               f"{limits.regs_per_block}"))
    if 0 < threads <= limits.max_threads_per_block and \
            smem <= limits.smem_per_block_optin:
        calc = occupancy.occupancy(v.regs or 0, threads, static, v.dyn_smem, limits)
        occ = calc.as_dict()
        out.append(_occupancy_finding(calc, limits, v.regs is None))
    return Check(tuple(out), occ)


def _occupancy_finding(calc: occupancy.Occupancy, limits: DeviceLimits,
                       no_regs: bool) -> Finding:
    if calc.blocks_per_sm == 0:
        by = ", ".join(r for r, n in calc.limits.items() if n == 0)
        return Finding("occupancy", Status.FAIL, f"no block fits on an SM ({by})")
    names = {"registers": "registers", "shared_memory": "shared memory",
             "threads": "warp slots", "blocks": "the 32-block limit", "barriers": "barriers"}
    limited = " and ".join(names[r] for r in calc.limited_by if not (no_regs and
                                                                      r == "registers"))
    others = ", ".join(f"{names[r]} {n}" for r, n in calc.limits.items()
                       if r not in calc.limited_by and not (no_regs and r == "registers"))
    return Finding("occupancy", Status.OK,
                   f"{calc.blocks_per_sm} blocks per SM, {calc.warps_per_sm} of "
                   f"{limits.max_warps_per_sm} warps ({calc.pct:.0f}%), limited by "
                   f"{limited or 'nothing'}" + (f" (would allow: {others})" if others else ""))


def over_limits(level: Level, limits: BlockLimits, static_smem: int = 0,
                dyn_smem: int | None = None, regs: int | None = None,
                max_threads: int | None = None) -> str | None:
    """Which of the device's per-block limits a launch of the level would break, or None.
    Before compiling only the block and the dynamic shared memory are known; after,
    ``static_smem``, ``regs`` and the kernel's ``max_threads`` (what its registers allow)."""
    bx, by = level.threads
    threads = bx * by
    if threads > limits.max_threads_per_block:
        return (f"a block of {threads} threads; the device allows "
                f"{limits.max_threads_per_block} threads per block (MaxThreadsPerBlock)")
    if bx > limits.max_block_dim_x or by > limits.max_block_dim_y:
        return (f"a block of {bx}x{by} threads; the device allows {limits.max_block_dim_x}x"
                f"{limits.max_block_dim_y} (MaxBlockDimX, MaxBlockDimY)")
    dyn = level.dyn_smem_bytes() if dyn_smem is None else dyn_smem
    smem = static_smem + dyn
    if smem > limits.smem_per_block_optin_bytes:
        parts = f" ({dyn} dynamic + {static_smem} static)" if static_smem else ""
        return (f"{smem} bytes ({smem / 1024:.0f} KiB) of shared memory per block{parts}; the "
                f"device allows at most {limits.smem_per_block_optin_bytes} bytes "
                f"({limits.smem_per_block_optin_bytes / 1024:.0f} KiB) per block "
                "(MaxSharedMemoryPerBlockOptin)")
    if max_threads is not None and threads > max_threads:
        need = f"{threads * regs} registers at {regs} per thread" if regs else "more registers"
        return (f"a block of {threads} threads needs {need}; the device has "
                f"{limits.regs_per_block} per block (MaxRegistersPerBlock), so this kernel "
                f"runs at most {max_threads} threads per block")
    return None

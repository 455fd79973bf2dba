"""What the Code view shows of a ``build`` event, free of Qt: the side-by-side diff rows,
the main loop's instructions, the occupancy sentences and the instruction mix per level.

The view only lays these out, so tests can check the numbers here and read the same rows
back from the widgets.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from ...kernels import toolchain as occ
from ...kernels.protocol import Build
from ...kernels.toolchain import CLASSES, MMA, SassLine, in_span, parse

RESOURCE_TEXT = {"registers": "registers", "shared_memory": "shared memory",
                 "threads": "warp slots (threads)", "blocks": "the 32-block limit",
                 "barriers": "named barriers"}


def no_build_text(level_id: str, coming: bool = False) -> str:
    """Why a level shows no code: the replay has not reached its build event yet
    (``coming``: the recording has one), or the recording has none."""
    if coming:
        return (f"{level_id}: not replayed yet (the recording has its build: the source, "
                "SASS and occupancy show when the replay reaches it)")
    return (f"this recording has no build event for {level_id} "
            "(recorded before build events existed)")


def main_source(event: Build) -> str | None:
    """The path of the level's own .cu among the event's sources (the first one)."""
    sources = event.sources or {}
    return next((k for k in sources if k.endswith(".cu")), next(iter(sources), None))


def source_text(event: Build | None) -> str | None:
    if event is None:
        return None
    path = main_source(event)
    return (event.sources or {}).get(path) if path else None


# ------------------------------------------------------------------ diff

@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of a side-by-side diff; a side without a line has number None."""

    tag: str  # equal, replace (changed), delete (only left), insert (only right)
    left_no: int | None
    left: str
    right_no: int | None
    right: str


def diff_rows(before: str, after: str) -> list[DiffRow]:
    """The two texts aligned line by line (difflib), ``after`` on the right."""
    a, b = before.splitlines(), after.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            left = (i + 1, a[i]) if i < i2 else (None, "")
            right = (j + 1, b[j]) if j < j2 else (None, "")
            row_tag = tag
            if tag == "replace":  # the longer side's extra lines are plain adds/removes
                row_tag = "replace" if i < i2 and j < j2 else ("delete" if i < i2
                                                               else "insert")
            rows.append(DiffRow(row_tag, left[0], left[1], right[0], right[1]))
    return rows


# ------------------------------------------------------------------ SASS

def main_loop_lines(event: Build, kernel: list[SassLine] | None = None) -> list[SassLine]:
    """The main loop's instructions (the whole kernel where no loop was found); none
    where the event has no SASS. ``kernel``: the event's SASS parsed already."""
    if event.sass is None:
        return []
    if kernel is None:
        kernel = parse(event.sass)
    return in_span(kernel, event.main_loop)


def lines_at(lines: list[SassLine], path: str, line_no: int) -> list[int]:
    """Indexes of the instructions compiled from that line: those whose innermost location
    in that file is it (a call site of an inlined function counts only where the function
    is in another file, so a loop's opening line does not select the whole loop)."""
    return [i for i, ln in enumerate(lines) if in_file(ln, path) == (path, line_no)]


def in_file(line: SassLine, path: str) -> tuple[str, int] | None:
    """The instruction's innermost location in the file ``path``."""
    return next((w for w in line.where if w[0] == path), None)


# ------------------------------------------------------------------ occupancy

def _blocks(n: int | None) -> str:
    return "n/a" if n is None else f"{n} block" + ("" if n == 1 else "s")


def occupancy_lines(event: Build) -> list[str]:
    """The occupancy panel's sentences: blocks and warps per SM, what limits them, and
    what one register or 1 KB of shared memory more or less would change."""
    o = event.occupancy
    if o is None:
        return ["the build event has no occupancy"]
    limited = [RESOURCE_TEXT.get(r, r) for r in o.get("limited_by") or []]
    out = [f"{_blocks(o.get('blocks_per_sm'))} per SM, {o.get('warps_per_sm')} warps "
           f"({o.get('occupancy_pct')}% of the SM's warps)",
           "limited by " + (" and ".join(limited) if limited else "nothing recorded")]
    limits = o.get("limits") or {}
    if limits:
        out.append("each alone allows: " + ", ".join(
            f"{RESOURCE_TEXT.get(r, r)} {n}" for r, n in limits.items()))
    out.append(f"{event.regs} registers per thread, "
               f"{event.threads_per_block} threads per block, shared memory "
               f"{event.smem_static_bytes} B static + "
               f"{event.smem_dynamic_bytes} B dynamic, "
               f"local {event.local_bytes} B")
    w = what_if(event)
    if w:
        now = o.get("blocks_per_sm")

        def change(key: str) -> str:
            n = w.get(key)
            if n is None:
                return "impossible"
            return f"{_blocks(n)} (unchanged)" if n == now else _blocks(n)
        out.append(f"one register more: {change('regs+1')}; one less: {change('regs-1')}")
        out.append(f"1 KB shared memory more: {change('smem+1KB')}; "
                   f"less: {change('smem-1KB')}")
        if w.get("regs_max_for_one_more_block") is not None:
            out.append(f"one block more at ≤ {w['regs_max_for_one_more_block']} "
                       "registers per thread")
    return out


def what_if(event: Build) -> dict[str, Any] | None:
    """The event's ``occupancy.what_if``, else recomputed by the calculator."""
    o = event.occupancy or {}
    if isinstance(o.get("what_if"), dict):
        return dict(o["what_if"])
    if event.regs is None or event.threads_per_block is None:
        return None
    try:
        return occ.what_if(event.regs, event.threads_per_block,
                           event.smem_static_bytes or 0, event.smem_dynamic_bytes or 0,
                           barriers=event.barriers or 0)
    except ValueError:
        return None


# ------------------------------------------------------------------ instruction mix

# one loop iteration does unlike amounts of work (one k of naive, a BK=16 tile of cp_async,
# 8 HGMMA of wgmma_tma): the mix is counted per unit of work, the multiply-adds of C += A·B
MIX_PER_FMAS = 1000
MIX_UNIT = f"instructions per {MIX_PER_FMAS} FMAs"
MIX_NOTE = ("FMA: one multiply-add of C += A·B, per thread; a Tensor Core instruction "
            "does many (HMMA.16816: 64 per thread, HGMMA.64x256x16: 2048)")
# multiply-adds of a warp MMA (m·n·k of its mnemonic's shape), shared by a warp's 32 lanes
HMMA_SHAPES = {"16816": 16 * 8 * 16, "1688": 16 * 8 * 8, "1684": 16 * 8 * 4,
               "884": 8 * 8 * 4, "16832": 16 * 8 * 32, "8816": 8 * 8 * 16, "8832": 8 * 8 * 32}
_GMMA_SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+)$")
_fmas_cache: dict[int, tuple[Build, float | None]] = {}


def instruction_fmas(mnemonic: str) -> float:
    """The multiply-adds one thread's share of the instruction does (0: none, or a shape
    not known here). Warpgroup MMAs (HGMMA, QGMMA) are shared by 128 threads."""
    base, *mods = mnemonic.split(".")
    if base == "FFMA":
        return 1.0
    if base == "HMMA" and mods:
        return HMMA_SHAPES.get(mods[0], 0) / 32
    if base.endswith("GMMA") and mods and (m := _GMMA_SHAPE.match(mods[0])):
        return int(m[1]) * int(m[2]) * int(m[3]) / 128
    return 0.0


def main_loop_fmas(event: Build) -> float | None:
    """The GEMM's multiply-adds per thread in one main-loop iteration: its MMA
    instructions' where it has any (FFMA beside them scale accumulators: FP8's
    promotion), else its FFMAs; None without SASS or work."""
    kept = _fmas_cache.get(id(event))
    if kept is not None and kept[0] is event:
        return kept[1]
    lines = [ln for ln in main_loop_lines(event) if ln.counted]
    mma = sum(instruction_fmas(ln.mnemonic) for ln in lines if ln.op_class in MMA)
    fmas = mma or sum(instruction_fmas(ln.mnemonic) for ln in lines
                      if ln.op_class == "FFMA")
    found = float(fmas) if fmas > 0 else None
    if len(_fmas_cache) > 512:
        _fmas_cache.clear()
    _fmas_cache[id(event)] = (event, found)
    return found


def mix_rows(builds: list[tuple[str, Build]]) -> list[tuple[str, dict[str, float]]]:
    """(level, main-loop instructions by class per MIX_PER_FMAS multiply-adds) for each
    level with a mix and a known amount of work, in order."""
    rows = []
    for level_id, event in builds:
        mix = (event.instruction_mix or {}).get("main_loop")
        fmas = main_loop_fmas(event) if mix is not None else None
        if mix is not None and fmas:
            rows.append((level_id, {c: mix.get(c, 0) * MIX_PER_FMAS / fmas
                                    for c in CLASSES}))
    return rows

"""A profiler's SASS of a kernel (ncu's source page, an ``.ncu-rep`` read by ncu_report) as
the compact text of a ``build`` event (kernels/toolchain/sass.py), so that the Code view
reads a library's kernel, or a report's, as it reads a level's.

A profiler lists each instruction at the address it was loaded at, with branch targets as
addresses (``@!P0 BRA 0x7fca677ad490``); the compact text counts byte offsets from the
kernel's first instruction and names branch targets by labels (``.L_x_3``), which is what
finds the main loop. Source locations, where the profiler has them, become ``//## File``
lines. Nothing here runs a tool.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..toolchain import sass
from ..toolchain.build_event import sass_fields

MAX_SASS_LINES = 20000  # instructions kept of one kernel (the largest level has ~6000)
MAX_TEXT_CHARS = 160  # of one instruction's text
_TARGET = re.compile(r"^((?:@!?U?P\w+\s+)?(?:BRA|BRX|JMP|CALL|BSSY|BREAK|SSY|PBK)\b[\w.]*\s+"
                     r"(?:[\w.]+,\s*)*)`?\(?0x([0-9a-fA-F]+)\)?`?")

# an instruction: its byte offset, its text, where it is from (innermost first), or None
Line = tuple[int, str, tuple[tuple[str, int], ...] | None]


def _one_line(text: str) -> str:
    out = " ".join(text.replace("\x00", " ").split())
    return out[:MAX_TEXT_CHARS]


def compact(lines: Iterable[Line], base: int = 0) -> str:
    """The compact SASS of a kernel's instructions (any order; sorted by offset here).
    ``base``: the address of the kernel's first instruction, to turn absolute branch
    targets into offsets (targets outside the kernel stay as they are)."""
    rows = sorted(((int(off), _one_line(text), where) for off, text, where in lines
                   if off >= 0), key=lambda r: r[0])[:MAX_SASS_LINES]
    offsets = {off for off, _, _ in rows}
    targets: dict[int, str] = {}
    texts = []
    for _off, text, _ in rows:
        m = _TARGET.match(text)
        if m is not None:
            target = int(m.group(2), 16) - base
            if target in offsets:
                label = targets.setdefault(target, f".L_x_{len(targets)}")
                text = m.group(1) + "`(" + label + ")" + text[m.end():]
        texts.append(text)
    out: list[str] = []
    shown: tuple[tuple[str, int], ...] | None = None
    for (off, _, where), text in zip(rows, texts, strict=True):
        if off in targets:
            out.append(f"{targets[off]}:")
        if where and where != shown:
            out.append("//## File " + " inlined at ".join(
                f'"{_path(f)}", line {n}' for f, n in where))
            shown = where
        out.append(f"/*{off:04x}*/ {text.rstrip(';').rstrip()} ;")
    return "\n".join(out) + ("\n" if out else "")


def _path(name: str) -> str:
    return name.replace('"', "'").replace("\n", " ")[:300]


def fields(text: str) -> dict[str, Any]:
    """``sass``, ``main_loop`` and ``instruction_mix`` of the compact text, as a build
    event has them."""
    return sass_fields(text)


def executed_mix(counts: Mapping[int, float | int | None], text: str) -> dict[str, float] | None:
    """Warp instructions executed per instruction class (``sass.CLASSES``), from per-offset
    counts (a profiler's ``inst_executed``); None where no instruction has a count."""
    lines = sass.parse(text)
    out = dict.fromkeys(sass.CLASSES, 0.0)
    seen = False
    for ln in lines:
        n = counts.get(ln.offset)
        if n is not None and ln.counted:
            out[ln.op_class] += float(n)
            seen = True
    return out if seen else None

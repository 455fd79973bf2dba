"""The SASS of a compiled level: disassembly, instruction classes, main loop, source lines.

A cubin (NVRTC's, see :func:`nvrtc.compile_offline`) is disassembled by nvdisasm (the
``nvidia-cuda-nvdisasm`` wheel of the ``nvrtc`` extra, or a toolkit's, found by
:func:`sass_check.nvdisasm_path`) with ``-gi``: the levels are compiled with
``-lineinfo``, so each run of instructions is preceded by a line such as::

    //## File "kernels/cuda/common.cuh", line 25 inlined at "kernels/cuda/cp_async.cu", line 61

(innermost location first). The text kept per kernel is compact: labels, those location
lines and one instruction per line (``/*0a40*/ @P0 LDS.128 R4, [R2] ;``), with file names
made repository-relative; section directives and padding indentation are dropped. It is the
``sass`` field of a ``build`` event, and :func:`parse` reads it back.

Instruction classes (``CLASSES``) are what the Code view colours and counts: FFMA; HMMA
(warp MMA, mma.sync / WMMA); HGMMA (warpgroup MMA: HGMMA, and QGMMA for FP8); LDS (32- and
64-bit shared loads), LDS.128, LDSM (ldmatrix); STS (any width); STSM (stmatrix: an
epilogue staging C); LDG (global loads); LDGSTS (cp.async); UTMALDG and UTMASTG (TMA loads
and stores); BAR (named barriers: __syncthreads, bar.sync);
LDL and STL (local memory: spills); other. Never-executed (``@!PT``) instructions and NOP
padding are not counted.
"""

from __future__ import annotations

import collections
import functools
import re
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import sass_check

CLASSES = ("FFMA", "HMMA", "HGMMA", "LDS", "LDS.128", "LDSM", "STS", "STSM", "LDG", "LDGSTS",
           "UTMALDG", "UTMASTG", "BAR", "LDL", "STL", "other")
SHARED_LOADS = ("LDS", "LDS.128", "LDSM")
MMA = ("HMMA", "HGMMA")

_DIRECT = {"FFMA": "FFMA", "HMMA": "HMMA", "LDSM": "LDSM", "STS": "STS", "STSM": "STSM",
           "LDG": "LDG", "LDGSTS": "LDGSTS", "UTMALDG": "UTMALDG", "UTMASTG": "UTMASTG",
           "BAR": "BAR", "LDL": "LDL", "STL": "STL"}


def op_class(mnemonic: str) -> str:
    """The class of a full mnemonic (``LDS.U.128`` -> ``LDS.128``, ``QGMMA.64x128x32...``
    -> ``HGMMA``)."""
    base, *mods = mnemonic.split(".")
    if base == "LDS":
        return "LDS.128" if "128" in mods else "LDS"
    if base.endswith("GMMA"):  # HGMMA, QGMMA (FP8), IGMMA: warpgroup MMA
        return "HGMMA"
    return _DIRECT.get(base, "other")


# ------------------------------------------------------------------ disassembly

def nvdisasm_missing() -> str | None:
    """Why nvdisasm cannot be run here (None when it can)."""
    if sass_check.nvdisasm_path() is None:
        return "nvdisasm is not installed (pip install nvidia-cuda-nvdisasm, or the nvrtc extra)"
    return None


_SECTION = re.compile(r"^//-+ \.text\.(\S+) +-+$")  # a short name is padded with spaces
_LOCATION = re.compile(r'^\s*//## File "([^"]*)", line (\d+)(.*)$')
_INLINED = re.compile(r' inlined at "([^"]*)", line (\d+)')
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*$")
_LABEL_LINE = re.compile(r"^(\.L_x_\d+):\s*$")


def disassemble(cubin: bytes, files: Iterable[str] = ()) -> dict[str, str]:
    """Compact SASS of every kernel in a cubin, by mangled name. ``files``: repository
    paths of the sources, so that the paths in line info become those."""
    tool = sass_check.nvdisasm_path()
    if tool is None:
        raise RuntimeError(nvdisasm_missing())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "level.cubin"
        path.write_bytes(cubin)
        out = subprocess.run([tool, "-c", "-gi", str(path)], capture_output=True, text=True,
                             check=True, timeout=120).stdout
    return compact(out, files)


def compact(nvdisasm_text: str, files: Iterable[str] = ()) -> dict[str, str]:
    """nvdisasm ``-c -gi`` output -> {mangled name: compact text} (see the module doc)."""
    keys = list(files)
    kernels: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in nvdisasm_text.splitlines():
        m = _SECTION.match(raw)
        if m:
            current = kernels.setdefault(m.group(1), [])
            continue
        if current is None:
            continue
        if (m := _INSTRUCTION.match(raw)) is not None:
            current.append(f"/*{m.group(1)}*/ {m.group(2)}")
        elif _LABEL_LINE.match(raw):
            current.append(raw.strip())
        elif (m := _LOCATION.match(raw)) is not None:
            where = [(m.group(1), m.group(2)), *_INLINED.findall(m.group(3))]
            current.append("//## File " + " inlined at ".join(
                f'"{repo_path(f, keys)}", line {n}' for f, n in where))
    return {name: "\n".join(lines) + "\n" for name, lines in kernels.items()}


def repo_path(path: str, keys: list[str]) -> str:
    """A path from line info as a source key: the key it ends with (NVRTC puts its working
    folder before a relative #line name), else the part after ``include/`` (a CUDA header),
    else the file name; never a path of the machine that compiled it."""
    for key in keys:
        if path == key or path.endswith("/" + key):
            return key
    if "/include/" in path:
        return path.rsplit("/include/", 1)[1]
    return path.rsplit("/", 1)[-1]


# ------------------------------------------------------------------ reading it back

@dataclass(frozen=True, slots=True)
class SassLine:
    offset: int  # byte offset of the instruction in the kernel
    text: str  # "@P0 LDS.128 R4, [R2] ;"
    mnemonic: str  # "LDS.128"
    op_class: str  # one of CLASSES
    # source locations, innermost first: ((file, line), (file it is inlined at, line), ...)
    where: tuple[tuple[str, int], ...]
    counted: bool  # False for never-executed (@!PT) instructions and NOP padding

    @property
    def source(self) -> tuple[str, int] | None:
        """The innermost source location (None without line info)."""
        return self.where[0] if self.where else None


_OP = re.compile(r"^(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")


def parse(text: str) -> list[SassLine]:
    """The instructions of one kernel's compact SASS, in order. Parsed once per text (the
    app asks again for the shown build's SASS at each level switch, from several views,
    and a large kernel's costs ~30 ms): the lines are frozen, the list is a new one."""
    return list(_parse(text))


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> tuple[SassLine, ...]:
    out: list[SassLine] = []
    where: tuple[tuple[str, int], ...] = ()
    for raw in text.splitlines():
        if raw.startswith("//## File "):
            where = location(raw)
            continue
        m = _INSTRUCTION.match(raw)
        if m is None:
            continue
        body = m.group(2)
        op = _OP.match(body)
        mnemonic = op.group(2) if op else body.split(" ", 1)[0]
        predicate = (op.group(1) or "").strip() if op else ""
        counted = predicate != "@!PT" and mnemonic != "NOP"
        out.append(SassLine(int(m.group(1), 16), body, mnemonic, op_class(mnemonic), where,
                            counted))
    return tuple(out)


_WHERE = re.compile(r'"([^"]*)", line (\d+)')


def location(comment: str) -> tuple[tuple[str, int], ...]:
    """The source locations of a ``//## File`` line, innermost first."""
    return tuple((f, int(n)) for f, n in _WHERE.findall(comment))


def instruction_mix(lines: Iterable[SassLine]) -> dict[str, int]:
    """Counts by class, every class present (zeros included), in ``CLASSES`` order."""
    counts = collections.Counter(ln.op_class for ln in lines if ln.counted)
    return {c: counts.get(c, 0) for c in CLASSES}


# ------------------------------------------------------------------ the main loop

_LABEL = re.compile(r"^(\.L_x_\d+):", re.M)
_BRANCH = re.compile(r"BRA(?:\.[A-Z.]+)?\s+`?\(?(\.L_x_\d+)\)?")
_OFFSET = re.compile(r"^/\*([0-9a-f]+)\*/", re.M)


def main_loop(text: str) -> tuple[int, int] | None:
    """Byte offsets (first, last instruction) of the kernel's main loop, or None when it
    has no loop. The K loop of a level that stages tiles in shared memory is the loop
    with the most shared loads, as the models' SASS check finds it
    (``sass_check.main_loop``). Where no loop loads from shared memory (the wgmma
    levels: the MMA reads shared memory itself), it is the innermost loop with the most MMA
    (then FFMA) instructions: a persistent kernel's tile loop holds the K loop, and more MMA
    than it where the compiler peeled a K step, but is not the main loop."""
    body = sass_check.main_loop(text)
    if body is not text and _count(body, SHARED_LOADS):
        return _span(body)
    scored = {span: (_count(text[span[0]:span[1]], MMA),
                     _count(text[span[0]:span[1]], ("FFMA",))) for span in loops(text)}
    candidates = [sp for sp, score in scored.items() if score > (0, 0)]
    innermost = [sp for sp in candidates
                 if not any(o != sp and sp[0] <= o[0] and o[1] <= sp[1] for o in candidates)]
    if not innermost:
        return None
    return _span(text[slice(*max(innermost, key=lambda sp: scored[sp]))])


def loops(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the loops: from a label to a branch back to it.
    Branches after the kernel's last unpredicated EXIT are left out: that is where the
    compiler puts cold blocks (an mbarrier wait's retry) that jump back into the kernel,
    which would make a span of almost the whole text look like a loop."""
    exits = [m.start() for m in _EXIT.finditer(text)]
    cut = exits[-1] if exits else len(text)
    labels = {m.group(1): m.start() for m in _LABEL.finditer(text)}
    spans = []
    for m in _BRANCH.finditer(text, 0, cut):
        start = labels.get(m.group(1))
        if start is not None and start < m.start():
            end = text.find("\n", m.end())
            spans.append((start, len(text) if end < 0 else end))
    return spans


_EXIT = re.compile(r"^/\*[0-9a-f]+\*/ EXIT ;", re.M)


def _count(body: str, classes: tuple[str, ...]) -> int:
    return sum(1 for ln in parse(body) if ln.counted and ln.op_class in classes)


def _span(body: str) -> tuple[int, int] | None:
    offsets = [int(o, 16) for o in _OFFSET.findall(body)]
    return (offsets[0], offsets[-1]) if offsets else None


def in_span(lines: list[SassLine], span: tuple[int, int] | None) -> list[SassLine]:
    """The instructions from ``span[0]`` to ``span[1]`` (all of them for None)."""
    if span is None:
        return list(lines)
    return [ln for ln in lines if span[0] <= ln.offset <= span[1]]

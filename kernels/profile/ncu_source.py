"""Nsight Compute's source page, read: the counters of each SASS line of one kernel.

``ncu -i REPORT --page source --csv --print-source sass`` prints (ncu 2025 and 2026, CUDA
13; tests/fixtures/ncu_source/ holds trimmed pages of the H200)::

    "Kernel Name","void sgemm_register_2d<(int)128, ...>(int, int, int, ...)",
    "Address","Source","Warp Stall Sampling (All Samples)",...,"stall_barrier",...
    "0x7fca677acd00","      LDC R1, c[0x0][0x28]","9","9","9","512",...

one row per instruction of the kernel, in address order, at the address the kernel was
loaded at: the offset of a row is its address minus the kernel's first, the unit of the
``/*0a40*/`` offsets of a ``build`` event's SASS (``kernels/toolchain/sass.py``). Cells are numbers
(ncu may print thousands separators), ``-`` where a metric does not apply, or words
(``Shared``, ``Load``) in the access columns, which are not read.

``--print-source cuda,sass`` prints the source lines of each file with the SASS rows
compiled from them under each::

    "File Path","/home/me/gemmscope/kernels/cuda/register_2d.cu"
    "Function Name","void sgemm_register_2d<...>(...)"
    "Line No","Source","Address","Source",...
    "9","sgemm_register_2d(int M, ...","-","-","9",...
    "","","0x7fca677acd00","      LDC R1, c[0x0][0x28]","9",...

:func:`parse_cuda_sass_page` reads from it only which source line each SASS row sits under.
Nothing here runs ncu (``kernels/profile/ncu_source_step.py`` does); a page in another layout is a
:class:`SourcePageError` saying what was missing, never a guess.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..models.ncu_compare import parse_number
from ..toolchain.sass import repo_path

# field of the source_counters event -> the column of ncu's source page it is read from
COLUMNS = {
    "inst_executed": "Instructions Executed",
    "stall_samples": "Warp Stall Sampling (All Samples)",
    "stall_samples_not_issued": "Warp Stall Sampling (Not-issued Samples)",
    "smem_wavefronts": "L1 Wavefronts Shared",
    "smem_wavefronts_ideal": "L1 Wavefronts Shared Ideal",
    "smem_excess_wavefronts": "L1 Wavefronts Shared Excessive",
    "smem_conflicts_n_way": "L1 Conflicts Shared N-Way",
}
STALL_PREFIX = "stall_"  # "stall_long_sb": samples of warps stalled for that reason
NOT_ISSUED = "(Not Issued)"  # "stall_long_sb (Not Issued)": the not-issued ones, not read
ADDRESS, SOURCE, KERNEL, FILE_PATH, LINE_NO = ("Address", "Source", "Kernel Name",
                                               "File Path", "Line No")


class SourcePageError(ValueError):
    """The text is not a source page this reader knows (the message says why)."""


@dataclass(frozen=True, slots=True)
class PageLine:
    """One SASS row of the page."""

    offset: int  # bytes from the kernel's first instruction
    sass: str  # the instruction as ncu printed it ("LDS.128 R24, [R11]")
    values: dict[str, int | float | None]  # by field of COLUMNS; None for "-" or absent
    stalls: dict[str, int | float]  # stall reason ("long_sb") -> samples, zeros left out


@dataclass(frozen=True, slots=True)
class SourcePage:
    kernel: str | None  # as ncu names it (demangled)
    columns: dict[str, str]  # field -> ncu column, for the fields the page had
    lines: list[PageLine]
    stall_reasons: list[str] = field(default_factory=list)  # the page's stall columns
    kernels: int = 1  # kernels on the page; the first one is read
    base: int = 0  # the address of the kernel's first instruction (offsets count from it)


def number(cell: str) -> int | float | None:
    """A cell as a number: integers as int; ``-``, n/a, words and non-finite as None."""
    value = parse_number(cell)
    if value is None or not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2 ** 63 else value


def _rows(text: str) -> list[list[str]]:
    """The CSV records of the text; ncu's own ``==PROF==``/``==WARNING==`` lines (which
    may precede the page) left out."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("==")]
    return list(csv.reader(io.StringIO("\n".join(lines))))


def _address(cell: str) -> int | None:
    try:
        return int(cell, 16) if cell.strip().lower().startswith("0x") else None
    except ValueError:
        return None


def parse_sass_page(text: str) -> SourcePage:
    """The first kernel of a ``--print-source sass`` page."""
    rows = _rows(text)
    header_at = next((i for i, r in enumerate(rows) if r[:2] == [ADDRESS, SOURCE]), None)
    if header_at is None:
        raise SourcePageError('no "Address","Source" header row: not a SASS source page'
                              + (f" (it begins {text.strip()[:80]!r})" if text.strip()
                                 else " (the page is empty)"))
    kernel = next((r[1] for r in rows[:header_at] if len(r) > 1 and r[0] == KERNEL), None)
    header = rows[header_at]
    body: list[list[str]] = []
    for r in rows[header_at + 1:]:
        if r and r[0] == KERNEL:  # a second kernel's page begins
            break
        body.append(r)
    kernels = max(1, sum(1 for r in rows if r and r[0] == KERNEL))
    return _page(kernel, header, body, kernels)


def parse_sass_pages(text: str) -> list[SourcePage]:
    """Every kernel of a ``--print-source sass`` page of several (a library call's), in
    the order printed; a kernel whose part has no lines this reader takes is left out.
    SourcePageError where none reads."""
    rows = _rows(text)
    starts = [i for i, r in enumerate(rows) if r and r[0] == KERNEL] or [0]
    pages, why = [], None
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(rows)
        part = rows[start:end]
        header_at = next((i for i, r in enumerate(part) if r[:2] == [ADDRESS, SOURCE]), None)
        if header_at is None:
            why = 'no "Address","Source" header row: not a SASS source page'
            continue
        kernel = part[0][1] if part[0] and part[0][0] == KERNEL and len(part[0]) > 1 else None
        try:
            pages.append(_page(kernel, part[header_at], part[header_at + 1:], len(starts)))
        except SourcePageError as exc:
            why = str(exc)
    if not pages:
        raise SourcePageError(why or "the source page is empty")
    return pages


def _page(kernel: str | None, header: list[str], body: list[list[str]], kernels: int
          ) -> SourcePage:
    where = {name: i for i, name in enumerate(header)}
    columns = {f: c for f, c in COLUMNS.items() if c in where}
    if not columns:
        raise SourcePageError("the source page has none of the columns read here ("
                              + ", ".join(COLUMNS.values()) + ")")
    stalls = [(name[len(STALL_PREFIX):], i) for i, name in enumerate(header)
              if name.startswith(STALL_PREFIX) and not name.endswith(NOT_ISSUED)]
    parsed = [(a, r) for r in body if len(r) == len(header)
              and (a := _address(r[0])) is not None]
    if not parsed:
        raise SourcePageError("the source page lists no SASS line with an address")
    base = min(a for a, _ in parsed)
    lines = []
    for address, r in sorted(parsed, key=lambda ar: ar[0]):
        values = {f: number(r[where[c]]) for f, c in columns.items()}
        samples = {name: n for name, i in stalls if (n := number(r[i]))}
        lines.append(PageLine(address - base, r[1].strip(), values, samples))
    return SourcePage(kernel, columns, lines, [name for name, _ in stalls], kernels,
                      base)


def parse_cuda_sass_page(text: str, files: Iterable[str] = ()
                         ) -> dict[int, tuple[str, int]]:
    """From a ``--print-source cuda,sass`` page of one kernel: offset -> (file, line) of the
    source line each SASS row is listed under. ``files``: the repository paths of the
    level's sources; ncu's absolute paths become those (``sass.repo_path``)."""
    keys = list(files)
    rows = _rows(text)
    if not any(r[:4] == [LINE_NO, SOURCE, ADDRESS, SOURCE] for r in rows):
        raise SourcePageError('no "Line No","Source","Address","Source" header row: not a '
                              "CUDA and SASS source page")
    path: str | None = None
    line: int | None = None
    # a kernel's page has one section per source file it has lines of (a Triton kernel:
    # its .py file and Triton's own, e.g. language/standard.py), each naming the file and
    # the function; a section of another function, or of a file already read, is the
    # next kernel's
    function: str | None = None
    sections: set[str] = set()  # the files read (their paths as the page gives them)
    found: dict[int, tuple[str, int]] = {}
    addresses: list[int] = []
    for r in rows:
        if not r:
            continue
        if r[0] == FILE_PATH and len(r) > 1:
            if r[1] in sections and found:
                break  # the first file again: a second kernel of the same function
            sections.add(r[1])
            path, line = repo_path(r[1], keys), None
        elif r[0] == "Function Name":
            name = r[1] if len(r) > 1 else ""
            if function is None:
                function = name
            elif name != function and found:
                break  # a second kernel
        elif r[0].strip().isdigit():
            line = int(r[0])
        elif r[0] == "" and len(r) > 3 and (a := _address(r[2])) is not None:
            addresses.append(a)
            if path is not None and line is not None:
                found[a] = (path, line)
    if not found:
        return {}
    base = min(addresses)  # the kernel's first instruction
    return {a - base: where for a, where in found.items()}

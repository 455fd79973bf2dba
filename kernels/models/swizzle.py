"""XOR swizzles of a shared-memory tile and the bank pictures of access patterns on it.

``Swizzle(B, M, S)`` is CuTe's ``Swizzle<B, M, S>``: on an offset, the B bits starting
at bit M + S are XORed into the B bits starting at bit M::

    offset ^ ((offset & (((1 << B) - 1) << (M + S))) >> S)

It acts on element offsets (CuTe's layouts) or on byte addresses (``SwizzleUnit``), so
Swizzle<3, 4, 3> on byte addresses of 128-byte rows permutes the eight 16-byte chunks of a
row by the row index mod 8, the "128B swizzle" that makes 8x8 ldmatrix loads
conflict-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from .banks import WARP_SIZE, BankReport, analyze_shared


@dataclass(frozen=True, slots=True)
class Swizzle:
    bits: int  # B: how many bits are XORed
    base: int  # M: the lowest bit that changes (2**M units stay together)
    shift: int  # S: how far the source bits sit above the target bits

    def __post_init__(self) -> None:
        if self.bits < 0 or self.base < 0 or self.shift < self.bits:
            raise ValueError(f"Swizzle<{self.bits},{self.base},{self.shift}> needs "
                             "B >= 0, M >= 0 and S >= B (source and target bits apart)")

    @property
    def mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base + self.shift)

    def __call__(self, offset: np.ndarray | int) -> np.ndarray | int:
        return offset ^ ((offset & self.mask) >> self.shift)

    def __str__(self) -> str:
        return f"Swizzle<{self.bits},{self.base},{self.shift}>"


IDENTITY = Swizzle(0, 0, 0)


class SwizzleUnit(StrEnum):
    ELEMENT = "element"  # the swizzle permutes element offsets (CuTe layouts)
    BYTE = "byte"  # the swizzle permutes byte addresses


class Pattern(StrEnum):
    ROW = "row"  # lanes walk along one row, one access each
    COLUMN = "column"  # lane i reads row i, same column
    LDMATRIX = "ldmatrix"  # 8x8 ldmatrix.x4: lane i gives row i%16, 16-byte chunk i//16


# a column mapping: (row, col) element coordinates -> physical column in the row
ColumnMap = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True, slots=True)
class TileLayout:
    """A row-major shared tile of ``row_elems`` elements per row (plus ``pad_elems``),
    optionally swizzled. ``column_map`` (a typed expression) overrides the swizzle."""

    row_elems: int = 32
    elem_bytes: int = 4
    pad_elems: int = 0
    swizzle: Swizzle = IDENTITY
    unit: SwizzleUnit = SwizzleUnit.ELEMENT
    column_map: ColumnMap | None = None

    @property
    def pitch_bytes(self) -> int:
        return (self.row_elems + self.pad_elems) * self.elem_bytes

    def address(self, row: np.ndarray | int, col: np.ndarray | int) -> np.ndarray:
        """Byte address of element (row, col) after padding and swizzle."""
        r = np.asarray(row, np.int64)
        c = np.asarray(col, np.int64)
        if self.column_map is not None:
            pc = np.asarray(self.column_map(r, c), np.int64)
            return r * self.pitch_bytes + pc * self.elem_bytes
        logical = r * self.pitch_bytes + c * self.elem_bytes
        if self.unit is SwizzleUnit.BYTE:
            return np.asarray(self.swizzle(logical), np.int64)
        sub = logical % self.elem_bytes
        return np.asarray(self.swizzle(logical // self.elem_bytes), np.int64) \
            * self.elem_bytes + sub

    def bank(self, row: np.ndarray | int, col: np.ndarray | int) -> np.ndarray:
        return (self.address(row, col) // 4) % 32

    def permutation_problem(self, rows: int = 8) -> str | None:
        """None when every row keeps its elements in distinct slots inside the tile."""
        r, c = np.meshgrid(np.arange(rows), np.arange(self.row_elems), indexing="ij")
        a = self.address(r, c)
        if np.unique(a).size != a.size:
            return "two elements map to the same address"
        if a.min() < 0 or a.max() >= rows * self.pitch_bytes:
            return "an element maps outside the tile"
        return None


@dataclass(frozen=True, slots=True)
class PatternAccess:
    pattern: Pattern
    access_bytes: int
    rows: np.ndarray  # (32,) element row each lane starts at
    cols: np.ndarray  # (32,) element column each lane starts at
    report: BankReport


def pattern_coords(pattern: Pattern, layout: TileLayout, access_bytes: int = 4,
                   row0: int = 0, col0: int = 0) -> tuple[np.ndarray, np.ndarray]:
    lane = np.arange(WARP_SIZE)
    per_lane = max(1, access_bytes // layout.elem_bytes)
    if pattern is Pattern.ROW:
        flat = col0 + lane * per_lane
        return row0 + flat // layout.row_elems, flat % layout.row_elems
    if pattern is Pattern.COLUMN:
        return row0 + lane, np.full(WARP_SIZE, col0)
    # ldmatrix.x4: four 8x8 matrices of 16-byte rows, lanes 8j..8j+7 address matrix j
    chunk = 16 // layout.elem_bytes
    return row0 + lane % 16, col0 + (lane // 16) * chunk


def analyze_pattern(pattern: Pattern, layout: TileLayout, access_bytes: int = 4,
                    row0: int = 0, col0: int = 0) -> PatternAccess:
    if pattern is Pattern.LDMATRIX:
        access_bytes = 16
    rows, cols = pattern_coords(pattern, layout, access_bytes, row0, col0)
    addr = layout.address(rows, cols)
    if access_bytes > layout.elem_bytes:
        # a vector access must stay contiguous: it is placed at its first element's address
        addr = addr - addr % access_bytes
    return PatternAccess(pattern, access_bytes, rows, cols,
                         analyze_shared(addr, access_bytes))


def is_conflict_free(pattern: Pattern, layout: TileLayout, access_bytes: int = 4) -> bool:
    return analyze_pattern(pattern, layout, access_bytes).report.conflicts == 0

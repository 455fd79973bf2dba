"""What the swizzle explorer offers by name: layout presets (the TMA swizzle modes, padding,
none, the level's own) and the warp pattern a level's shared reads follow. No Qt.

The TMA modes are byte-address swizzles of 16-byte chunks (CuTe's ``Swizzle<B, 4, 3>`` on
bytes): SWIZZLE_128B XORs the chunk index with the row's three bits above 128 bytes, the
layout the Hopper levels' TMA writes and their wgmma reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...kernels.models import IDENTITY, LevelModel, Op, Pattern, Swizzle, SwizzleUnit


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    swizzle: Swizzle
    unit: SwizzleUnit
    pad_words: int  # padding after each row, in 4-byte words (converted per element)

    def pad_elems(self, elem_bytes: int) -> int:
        return self.pad_words * max(1, 4 // max(1, elem_bytes))


LEVEL_PRESET = "the level's own layout"
CUSTOM = "custom (as set in the boxes)"
PRESETS: tuple[Preset, ...] = (
    Preset("none: row-major, no swizzle", IDENTITY, SwizzleUnit.BYTE, 0),
    Preset("padding: one word per row (BK+1)", IDENTITY, SwizzleUnit.BYTE, 1),
    Preset("XOR 32-byte (TMA SWIZZLE_32B, Swizzle<1,4,3>)", Swizzle(1, 4, 3),
           SwizzleUnit.BYTE, 0),
    Preset("XOR 64-byte (TMA SWIZZLE_64B, Swizzle<2,4,3>)", Swizzle(2, 4, 3),
           SwizzleUnit.BYTE, 0),
    Preset("XOR 128-byte (TMA SWIZZLE_128B, Swizzle<3,4,3>)", Swizzle(3, 4, 3),
           SwizzleUnit.BYTE, 0),
)
BY_NAME = {p.name: p for p in PRESETS}


def preset_named(swizzle: Swizzle, unit: SwizzleUnit, pad_elems: int, elem_bytes: int
                 ) -> str | None:
    """The name of the preset a layout is, or None."""
    for p in PRESETS:
        if p.swizzle == swizzle and p.pad_elems(elem_bytes) == pad_elems and \
                (p.unit == unit or p.swizzle == IDENTITY):
            return p.name
    return None


def mapping_text(swizzle: Swizzle, unit: SwizzleUnit, pad_elems: int, elem_bytes: int
                 ) -> str:
    """The layout in words: its preset's name where it is one, else CuTe's notation."""
    name = preset_named(swizzle, unit, pad_elems, elem_bytes)
    if name is not None:
        return name
    text = "no swizzle" if swizzle == IDENTITY else f"{swizzle} on {unit.value} offsets"
    return text + (f", rows padded by {pad_elems}" if pad_elems else "")


@dataclass(frozen=True, slots=True)
class LevelPattern:
    pattern: Pattern
    access_bytes: int
    text: str  # how the header names it


def level_pattern(model: LevelModel, elem_bytes: int) -> LevelPattern:
    """The warp pattern the level's shared reads follow: ldmatrix where it loads
    fragments by ldmatrix; the 8-row × 16-byte core matrices where a 16- or 8-bit tile
    is read by the MMA itself (wgmma, no load instruction); else rows, as wide as its
    first shared load that is no broadcast (an FP32 level reads rows of words; it has no
    ldmatrix to claim)."""
    loads = [acc for w in range(model.warps) for acc in model.shared_accesses(w, 0)
             if acc.op is Op.LOAD]
    if any(acc.label.startswith("ldmatrix") for acc in loads):
        return LevelPattern(Pattern.LDMATRIX, 16, "ldmatrix.x4 (8 rows of 16 B a phase)")
    if elem_bytes < 4:
        return LevelPattern(Pattern.LDMATRIX, 16,
                            "wgmma core matrices (8 rows of 16 B, read by the MMA)")
    for acc in loads:
        addr = acc.addr if acc.active is None else acc.addr[acc.active]
        if len(addr) > 1 and not (addr == addr[0]).all():
            return LevelPattern(Pattern.ROW, acc.width_bytes,
                                f"row reads, {acc.width_bytes} B per lane")
    return LevelPattern(Pattern.ROW, 4, "row reads, 4 B per lane")


def pattern_text(pattern: Pattern, access_bytes: int) -> str:
    """A pattern chosen in the box, in words."""
    return {Pattern.ROW: f"row reads, {access_bytes} B per lane",
            Pattern.COLUMN: f"column reads (lane i: row i), {access_bytes} B per lane",
            Pattern.LDMATRIX: "8×8 ldmatrix.x4 (8 rows of 16 B a phase)"}[pattern]

"""Re-placing a level's shared accesses in another layout (extra padding, an XOR swizzle),
so a view can show what padding or swizzling would change, from the model's numbers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .level_model import SmemArray, WarpAccess
from .swizzle import IDENTITY, Swizzle, TileLayout


class RelayoutError(ValueError):
    """The new layout cannot hold the access (the message says why)."""


def relayout(acc: WarpAccess, arrays: list[SmemArray], extra_pad_elems: int = 0,
             swizzle: Swizzle = IDENTITY) -> WarpAccess:
    """``acc`` with each lane's element moved to where a layout with ``extra_pad_elems``
    more elements per row and ``swizzle`` (on element offsets within a stage) puts it.
    With neither, the access stays as the kernel has it."""
    if extra_pad_elems == 0 and swizzle == IDENTITY:
        return acc
    arr = next((a for a in arrays if a.name == acc.array), None)
    if arr is None:
        raise RelayoutError(f"{acc.array} is not a shared array of this level")
    eb = arr.elem_bytes
    stage, row, col = arr.logical(acc.addr)
    # a tile the kernel already swizzles is re-laid out from its logical coordinates:
    # the toggles then replace its layout (an XOR swizzle with B = 0 shows it plain)
    pad = arr.pitch - arr.cols + extra_pad_elems
    layout = TileLayout(row_elems=arr.cols, elem_bytes=eb, pad_elems=pad, swizzle=swizzle)
    stage_bytes = arr.rows * layout.pitch_bytes
    placed = layout.address(row, col)
    addr = arr.base_bytes + stage * stage_bytes + placed
    width = acc.width_bytes
    if width > eb:
        # a vector access must stay in one piece: its elements must move together
        last = layout.address(row, col + width // eb - 1)
        if np.any(last - placed != width - eb) or np.any(addr % width):
            units = width // eb
            raise RelayoutError(f"this layout splits or misaligns the {width}-byte access; "
                                f"keep rows a multiple of {width} bytes and swizzle units "
                                f"of {units} elements (M >= {units.bit_length() - 1})")
    return replace(acc, addr=np.asarray(addr, np.int64))

"""What the persistent levels' models share: the walk of output tiles (groups of tile
rows; the stream-K pieces of hopper.cuh's gs_work) and the TMA boxes that fill a stage.
Pure numpy, no Qt."""

from __future__ import annotations

from dataclasses import dataclass

from .banks import WARP_SIZE
from .level_model import LANES, Op, Tile, WarpAccess, global_access


def grouped_tile(t: int, gm: int, gn: int, group_rows: int) -> tuple[int, int]:
    """(row, col) of tile t in a gm x gn grid walked ``group_rows`` tile rows at a time,
    column by column inside a group (``gs_group_coords``)."""
    per_group = group_rows * gn
    first = t // per_group * group_rows
    rows = min(gm - first, group_rows)
    inside = t % per_group
    return first + inside % rows, inside // rows


@dataclass(frozen=True, slots=True)
class WorkPiece:
    """K steps [k0, k1) of one output tile: whole (k0 = 0, k1 = all steps) or a cut."""

    index: int  # the tile's walk index t
    tile: tuple[int, int]  # (row, col) in tiles
    k0: int
    k1: int


def stream_k_pieces(block: int, grid: int, tiles: int, ksteps: int, stream_k: int
                    ) -> list[tuple[int, int, int]]:
    """(t, k0, k1) of block ``block``'s work, as hopper.cuh's gs_work: whole tiles round
    robin; with stream-K (1), all but the last full round so, and the K steps of the tiles
    left cut into ``grid`` equal contiguous ranges (K step i of tile t is t * ksteps + i);
    with 2, all full rounds whole and only the remainder cut."""
    whole_rounds = tiles // grid - (stream_k == 1)
    dp = tiles if not stream_k or tiles % grid == 0 else max(whole_rounds, 0) * grid
    out = [(t, 0, ksteps) for t in range(block, dp, grid)]
    base, total = dp * ksteps, (tiles - dp) * ksteps
    i, end = base + total * block // grid, base + total * (block + 1) // grid
    while i < end:
        t, k0 = divmod(i, ksteps)
        k1 = min(ksteps, k0 + end - i)
        out.append((t, k0, k1))
        i += k1 - k0
    return out


@dataclass(frozen=True, slots=True)
class TmaBox:
    """One TMA copy: a box of ``rows`` x ``cols`` elements of a row-major matrix of
    ``matrix_rows`` x ``matrix_cols``, starting at element (row, col). Rows or columns past
    the matrix are zero-filled on a load (and still counted in the barrier's byte count)
    and clipped on a store; they move no global bytes."""

    label: str
    matrix: str
    op: Op
    row: int
    col: int
    rows: int
    cols: int
    elem_bytes: int
    matrix_rows: int
    matrix_cols: int
    smem_offset: int  # byte offset of the box in shared memory
    stage: int  # ring stage (loads) or staging half (stores)

    @property
    def box_bytes(self) -> int:
        """Bytes written to (or read from) shared memory, zero fill included."""
        return self.rows * self.cols * self.elem_bytes

    @property
    def valid_rows(self) -> int:
        return max(0, min(self.rows, self.matrix_rows - self.row))

    @property
    def valid_cols(self) -> int:
        return max(0, min(self.cols, self.matrix_cols - self.col))

    @property
    def global_bytes(self) -> int:
        return self.valid_rows * self.valid_cols * self.elem_bytes

    def tile(self) -> Tile:
        return Tile(self.row, self.col, self.rows, self.cols)

    def warp_accesses(self) -> list[WarpAccess]:
        """The box as WarpAccess records of 32 rows each (row i of a slice in "lane" i,
        one access of the row's in-bounds bytes), so the sector math and the coalescing
        view apply: each row of 128 bytes is 4 sectors, one line."""
        out: list[WarpAccess] = []
        width = self.valid_cols * self.elem_bytes
        if width == 0:
            return out
        for first in range(0, self.valid_rows, WARP_SIZE):
            r = self.row + first + LANES
            out.append(global_access(
                f"TMA {self.label} box {self.rows}x{self.cols} rows {first}-{first + 31} "
                "(row i as lane i)", self.matrix, r * self.matrix_cols + self.col, width,
                self.elem_bytes, r < self.matrix_rows, self.op))
        return out

    def sectors(self) -> int:
        return sum(a.sectors().n_sectors for a in self.warp_accesses())


class TmaStageLoads:
    """What the models of TMA-fed levels share (wgmma_tma's family, mma_tma): per K step,
    warp 0's thread 0 copies the A box (BM x BK) and the Bt box (BN x BK) into one ring
    stage, A at its start and Bt ``a_bytes`` after it; the other warps read no global
    memory for the operands. Mixed in before a LevelModel that sets these attributes."""

    bm: int
    bn: int
    bk: int
    stages: int
    elem_bytes: int
    stage_bytes: int
    a_bytes: int

    def tma_loads(self, k_step: int, M: int, N: int, K: int,
                  block: tuple[int, int] = (0, 0), iteration: int | None = None
                  ) -> list[TmaBox]:
        """The producer's two copies of a K step, into stage (iteration or k_step) %
        STAGES."""
        s = (k_step if iteration is None else iteration) % self.stages
        k0, eb = k_step * self.bk, self.elem_bytes
        return [TmaBox("A", "A", Op.LOAD, block[0] * self.bm, k0, self.bm, self.bk, eb, M, K,
                       s * self.stage_bytes, s),
                TmaBox("Bt", "Bt", Op.LOAD, block[1] * self.bn, k0, self.bn, self.bk, eb, N,
                       K, s * self.stage_bytes + self.a_bytes, s)]

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """Warp 0 (whose thread 0 issues the copies): the K step's TMA boxes, 32 rows at a
        time."""
        if warp != 0:
            return []
        return [a for box in self.tma_loads(k_step, M, N, K, block)
                for a in box.warp_accesses()]

"""wgmma_cluster and fp8_cluster: the Hopper pipeline in clusters of CL CTAs.

What ``kernels/cuda/wgmma_cluster.cu`` and ``fp8_cluster.cu`` change over the models of
``hopper.py``, modelled here:

- The grid is whole clusters of CL consecutive blocks, at most SMs / CL of them. Cluster
  c walks units (pairs when CL = 2) u = c, c + clusters, ...; unit u is a tile column bn
  and CL adjacent tile rows (``gs_cluster_tile``: units grouped GM / CL unit rows at a
  time), and the block of rank r in its cluster computes row CL * pm + r. Where the tile
  rows do not divide by CL, the last unit's extra block computes a tile past M (zero-filled
  loads, nothing stored); it is left out of the tile lists here.
- Each block's producer copies its own A box and a BN / CL-row slice of the Bt box; TMA
  multicasts the slice into the same stage of every block of the cluster, so a block's
  stage still holds the whole Bt tile, but each block moves only its slice from L2.
"""

from __future__ import annotations

import numpy as np

from .hopper import H200_SMS, Fp8BlockScaled, TmaBox, WgmmaTma, grouped_tile
from .level_model import Op, ceil_div


class ClusterPairs:
    """Mixin over a WarpSpecialized model: the cluster walk and the sliced Bt copy."""

    cluster = 1

    def setup(self, p: dict[str, int]) -> None:
        super().setup(p)  # type: ignore[misc]
        self.cluster = p.get("CL", 1)

    def unit_coords(self, u: int, gm: int, gn: int) -> tuple[int, int]:
        """(first tile row, tile column) of unit u (``gs_cluster_tile`` before the rank)."""
        cl = self.cluster
        pm, bn = grouped_tile(u, ceil_div(gm, cl), gn, max(1, self.group_rows // cl))
        return pm * cl, bn

    def tile_coords(self, t: int, gm: int, gn: int) -> tuple[int, int]:
        """Tile t = CL * unit + rank (may lie past the last tile row; see block_order)."""
        row, col = self.unit_coords(t // self.cluster, gm, gn)
        return row + t % self.cluster, col

    def block_order(self, gm: int, gn: int) -> np.ndarray:
        """The walk index t = CL * unit + rank of each tile (the extra block of a last
        unit, past the tile rows, has no tile)."""
        order = np.full((gm, gn), -1, np.int64)
        for t in range(ceil_div(gm, self.cluster) * gn * self.cluster):
            r, c = self.tile_coords(t, gm, gn)
            if r < gm:
                order[r, c] = t
        return order

    def persistent_grid(self, M: int, N: int, sms: int = H200_SMS) -> int:
        gm, gn = self.grid(M, N)  # type: ignore[attr-defined]
        units = ceil_div(gm, self.cluster) * gn
        return min(units, sms // self.cluster) * self.cluster

    def block_tiles(self, block: int, M: int, N: int, sms: int = H200_SMS
                    ) -> list[tuple[int, int]]:
        gm, gn = self.grid(M, N)  # type: ignore[attr-defined]
        cl = self.cluster
        clusters = self.persistent_grid(M, N, sms) // cl
        out = []
        for u in range(block // cl, ceil_div(gm, cl) * gn, clusters):
            row, col = self.unit_coords(u, gm, gn)
            if row + block % cl < gm:
                out.append((row + block % cl, col))
        return out

    def tma_loads(self, k_step: int, M: int, N: int, K: int,
                  block: tuple[int, int] = (0, 0), iteration: int | None = None
                  ) -> list[TmaBox]:
        """The A box, and this block's slice of the Bt box (rank = tile row % CL), which
        TMA also writes into the other blocks of the cluster."""
        a, b = super().tma_loads(k_step, M, N, K, block, iteration)  # type: ignore[misc]
        if self.cluster == 1:
            return [a, b]
        rows = b.rows // self.cluster
        rank = block[0] % self.cluster
        slice_b = TmaBox(f"Bt slice {rank} (multicast)", b.matrix, Op.LOAD, b.row + rank * rows,
                         b.col, rows, b.cols, b.elem_bytes, b.matrix_rows, b.matrix_cols,
                         b.smem_offset + rank * rows * b.cols * b.elem_bytes, b.stage)
        return [a, slice_b]


class WgmmaCluster(ClusterPairs, WgmmaTma):
    level_id = "wgmma_cluster"
    notes = ("wgmma_tma in clusters of two CTAs: vertically adjacent tiles share the Bt "
             "tile, each CTA copies half of it and TMA multicasts it into both; shared "
             "memory is used as in wgmma_tma (no LDS, conflict-free staging stores).")


class Fp8Cluster(ClusterPairs, Fp8BlockScaled):
    """BN = 192 is done in halves of 96 columns (the scale loads are counted as one
    scale_b per half, as fp8_block_scaled's model does; a half straddling two scale
    blocks loads two)."""

    level_id = "fp8_cluster"
    scale_load_sites = 2  # block 0's before the K loop, block ks + 1's inside it

    def setup(self, p: dict[str, int]) -> None:
        super().setup(p)
        self.half_cols = 128 if self.bn % 128 == 0 else self.bn // 2
    notes = ("fp8_block_scaled in clusters of two CTAs sharing the Bt tile through TMA "
             "multicast; promotion and scales as in fp8_block_scaled (the next K block's "
             "scales loaded one block ahead).")

"""The cluster levels' models (wgmma_cluster, fp8_cluster): the persistent walk in whole
clusters covers every tile once, the CTAs of a cluster share a tile column, and each
copies its own slice of the Bt tile."""

from __future__ import annotations

import pytest

from gemmscope.kernels import registry
from gemmscope.kernels.models import model_for

CLUSTER_LEVELS = ["wgmma_cluster", "fp8_cluster"]


@pytest.mark.parametrize("level_id", CLUSTER_LEVELS)
@pytest.mark.parametrize("shape", [(4096, 4096), (4099, 4097), (3 * 128, 300), (100, 7)])
def test_cluster_walk_covers_every_tile_once(level_id: str, shape: tuple[int, int]):
    M, N = shape
    m = model_for(level_id)
    grid = m.persistent_grid(M, N)
    assert grid == registry.get(level_id).grid(M, N, 132)[0]
    assert grid % m.cluster == 0
    seen = [t for b in range(grid) for t in m.block_tiles(b, M, N)]
    gm, gn = m.grid(M, N)
    assert sorted(seen) == [(r, c) for r in range(gm) for c in range(gn)]
    order = m.block_order(gm, gn)
    assert (order >= 0).all() and len(set(order.ravel().tolist())) == gm * gn


@pytest.mark.parametrize("level_id", CLUSTER_LEVELS)
def test_cluster_blocks_share_a_column_and_split_bt(level_id: str):
    m = model_for(level_id)
    assert m.cluster == 2
    M = N = 4096
    for cid in range(3):
        first, second = m.block_tiles(2 * cid, M, N), m.block_tiles(2 * cid + 1, M, N)
        assert [c for _, c in first] == [c for _, c in second]
        pairs = zip(first, second, strict=True)
        assert all(r2 == r1 + 1 and r1 % 2 == 0 for (r1, _), (r2, _) in pairs)
    (r, c) = m.block_tiles(0, M, N)[0]
    slices = []
    for rank in range(2):
        a, bt = m.tma_loads(0, M, N, 4096, (r + rank, c))
        assert a.rows == m.bm and bt.rows == m.bn // 2
        slices.append((bt.row, bt.smem_offset))
    (row0, off0), (row1, off1) = slices
    assert row1 - row0 == m.bn // 2
    assert off1 - off0 == (m.bn // 2) * m.bk * m.elem_bytes


def test_cl_1_walks_like_the_single_cta_level():
    one = model_for("wgmma_cluster", {"CL": 1})
    base = model_for("wgmma_tma")
    for b in (0, 5, 131):
        assert one.block_tiles(b, 4099, 4097) == base.block_tiles(b, 4099, 4097)


def test_fp8_cluster_bn_192_is_done_in_halves_of_96():
    m = model_for("fp8_cluster", {"BN": 192})
    assert m.half_cols == 96 and m.wgmma_n == 96
    assert model_for("fp8_cluster").half_cols == 128

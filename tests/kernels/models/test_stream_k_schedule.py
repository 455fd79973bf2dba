"""The stream-K schedule of the persistent Hopper levels (kernels/models/persistent.py mirrors
hopper.cuh's gs_work): every K step of every tile done exactly once, the SMs' shares of
the last wave equal to a K step, each block contributing at most one partial tile."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gemmscope.kernels.models import model_for
from gemmscope.kernels.models.persistent import stream_k_pieces


@given(tiles=st.integers(1, 3000), ksteps=st.integers(1, 200), grid=st.integers(1, 140),
       stream_k=st.sampled_from([0, 1, 2]))
def test_schedule_covers_every_k_step_of_every_tile_once(tiles, ksteps, grid, stream_k):
    seen: set[tuple[int, int]] = set()
    for b in range(grid):
        for t, k0, k1 in stream_k_pieces(b, grid, tiles, ksteps, stream_k):
            assert 0 <= t < tiles and 0 <= k0 < k1 <= ksteps
            steps = {(t, k) for k in range(k0, k1)}
            assert not steps & seen
            seen |= steps
    assert len(seen) == tiles * ksteps


@given(tiles=st.integers(1, 3000), ksteps=st.integers(1, 200), grid=st.integers(1, 140),
       mode=st.sampled_from([1, 2]))
def test_a_block_leaves_partial_sums_at_most_once_and_first(tiles, ksteps, grid, mode):
    """The kernel keeps one workspace slot per block: only a block's first stream-K piece
    may start inside a tile (a contributor); its others start at K step 0."""
    for b in range(grid):
        pieces = stream_k_pieces(b, grid, tiles, ksteps, mode)
        cut = [i for i, (_, k0, _) in enumerate(pieces) if k0 != 0]
        whole_rounds = sum(1 for _, k0, k1 in pieces if k0 == 0 and k1 == ksteps)
        assert len(cut) <= 1
        assert not cut or cut[0] <= whole_rounds  # after the whole tiles, the first cut


def test_stream_k_evens_out_the_last_wave_at_8192():
    """128x256 tiles at 8192^3: 2048 tiles over 132 SMs. Round robin gives some SMs 16
    tiles (2048 K steps); stream-K gives each at most 1986 (2048 * 128 / 132 rounded up)."""
    def busiest(level_id):
        m = model_for(level_id)
        return max(sum(w.k1 - w.k0 for w in m.block_work(b, 8192, 8192, 8192))
                   for b in range(m.persistent_grid(8192, 8192)))

    assert busiest("wgmma_tma") == 16 * 128
    assert busiest("wgmma_stream_k") == -(-2048 * 128 // 132)


def test_every_cut_tile_has_one_owner_who_stores_it():
    m = model_for("fp8_stream_k")
    owners = m.tile_owners(4096, 2112, 7168)
    assert owners.shape == m.grid(4096, 2112)
    assert (owners >= 0).all() and (owners < 132).all()

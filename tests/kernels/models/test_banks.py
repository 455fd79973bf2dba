from __future__ import annotations

import numpy as np
import pytest

from gemmscope.kernels.models.banks import analyze_shared, lanes_per_phase, strided_addresses
from gemmscope.kernels.models.coalescing import analyze_global


def test_stride_32_floats_is_32_way():
    rep = analyze_shared(strided_addresses(32))
    assert rep.n_way == 32
    assert rep.wavefronts == 32
    assert rep.conflicts == 31
    assert set(rep.lane_bank) == {0}
    assert sorted(rep.lane_wavefront) == list(range(32))


@pytest.mark.parametrize("stride", [1, 33])
def test_stride_1_and_padded_stride_33_are_conflict_free(stride):
    rep = analyze_shared(strided_addresses(stride))
    assert (rep.wavefronts, rep.conflicts, rep.n_way) == (1, 0, 1)


def test_stride_2_is_2_way():
    rep = analyze_shared(strided_addresses(2))
    assert (rep.wavefronts, rep.conflicts, rep.n_way) == (2, 1, 2)


def test_same_word_broadcasts():
    rep = analyze_shared(np.zeros(32, np.int64))
    assert (rep.wavefronts, rep.conflicts) == (1, 0)


def test_float4_loads_need_four_wavefronts_at_best():
    rep = analyze_shared(strided_addresses(4, 16), 16)
    assert lanes_per_phase(16) == 8
    assert (rep.wavefronts, rep.ideal, rep.conflicts) == (4, 4, 0)
    # stride of 8 words: lanes c and c+4 of a phase share banks -> 2 wavefronts per phase
    rep = analyze_shared(strided_addresses(8, 16), 16)
    assert (rep.wavefronts, rep.conflicts, rep.n_way) == (8, 4, 2)


def test_float2_loads_use_two_phases():
    rep = analyze_shared(strided_addresses(2, 8), 8)
    assert (rep.wavefronts, rep.ideal, rep.conflicts) == (2, 2, 0)
    rep = analyze_shared(strided_addresses(4, 8), 8)  # 16 lanes x 2 words over 64 words
    assert (rep.wavefronts, rep.conflicts) == (4, 2)


def test_inactive_lanes_and_phases_cost_nothing():
    active = np.zeros(32, bool)
    active[:8] = True
    rep = analyze_shared(strided_addresses(4, 16), 16, active)
    assert (rep.wavefronts, rep.ideal) == (1, 1)


def test_misaligned_vector_access_is_refused():
    with pytest.raises(ValueError, match="aligned"):
        analyze_shared(strided_addresses(1, 16), 16)


def test_sectors_of_coalesced_and_strided_loads():
    assert analyze_global(np.arange(32) * 4).n_sectors == 4
    rep = analyze_global(np.arange(32) * 4096)
    assert rep.n_sectors == 32 and rep.ideal_sectors == 4
    assert rep.efficiency == pytest.approx(4 / 32)
    assert analyze_global(np.arange(32) * 16, 16).n_sectors == 16
    assert analyze_global(np.zeros(32, np.int64)).n_sectors == 1


def test_uniform_pairs_of_128_bit_reads_take_two_phases():
    # measured on an H100 (forum report): lanes 0-15 on one float4, 16-31 on another
    addr = np.where(np.arange(32) < 16, 0, 32)
    rep = analyze_shared(addr, 16)
    assert (rep.phase_lanes, rep.wavefronts, rep.conflicts) == (16, 2, 0)
    # ... while lanes n and n+16 sharing 32-byte-strided float4 stay 4 phases, 2-way each
    addr = (np.arange(32) % 16) * 32
    rep = analyze_shared(addr, 16)
    assert (rep.phase_lanes, rep.wavefronts, rep.conflicts, rep.n_way) == (8, 8, 4, 2)
    # the plain phase model, without the refinement
    from gemmscope.kernels.models.banks import PHASES_ONLY

    rep = analyze_shared(np.where(np.arange(32) < 16, 0, 32), 16, rules=PHASES_ONLY)
    assert (rep.phase_lanes, rep.wavefronts) == (8, 4)


def test_uniform_pair_rule_is_for_loads_only():
    from gemmscope.kernels.models.level_model import Op, Space, WarpAccess

    addr = np.where(np.arange(32) < 16, 0, 32)
    load = WarpAccess("ld", "X", Space.SHARED, Op.LOAD, 16, addr)
    store = WarpAccess("st", "X", Space.SHARED, Op.STORE, 16, addr)
    assert load.banks().wavefronts == 2
    assert store.banks().wavefronts == 4

from __future__ import annotations

import time

import numpy as np
import pytest

from gemmscope.kernels.models import MODELS, SIMT_LEVELS, model_for, totals
from gemmscope.kernels.models.level_model import NCU_METRICS, Op
from gemmscope.kernels.registry import get, ladder


def test_every_ladder_level_has_a_model_with_its_geometry():
    assert set(MODELS) == {lv.id for lv in ladder()}
    for lv in ladder():
        m = model_for(lv.id)
        assert (m.bm, m.bn) == lv.tile, lv.id
        assert m.threads == lv.threads[0] * lv.threads[1], lv.id
        if "BK" in lv.params:
            assert m.bk == lv.params["BK"]
        if "STAGES" in lv.params:
            assert m.stages == lv.params["STAGES"]
    assert "wmma" not in SIMT_LEVELS


@pytest.mark.parametrize("level_id", sorted(MODELS))
def test_threads_cover_the_block_tile_exactly_once(level_id):
    m = model_for(level_id)
    if not m.exact:
        masks = sum(m.warp_mask(w).astype(int) for w in range(m.warps))
        assert (masks == 1).all()
        return
    count = np.zeros((m.bm, m.bn), int)
    for tid in range(m.threads):
        rc = m.thread_outputs(tid)
        np.add.at(count, (rc[:, 0], rc[:, 1]), 1)
    assert (count == 1).all()


def test_unknown_level_says_which_exist():
    with pytest.raises(KeyError, match="naive"):
        model_for("nope")


def _by_label(accesses, start):
    return [a for a in accesses if a.label.startswith(start)]


def test_smem_tiled_as_read_is_a_broadcast_and_bs_read_is_conflict_free():
    m = model_for("smem_tiled")
    acc = m.shared_accesses(5, 0)
    a = _by_label(acc, "As[ty][k]")[3].banks()
    assert len(set(a.addr.tolist())) == 1 and a.wavefronts == 1
    b = _by_label(acc, "Bs[k][tx]")[3].banks()
    assert (b.wavefronts, b.n_way) == (1, 1)


def test_padding_changes_nothing_for_the_32x32_levels():
    t = totals("smem_tiled", 1024, 1024, 1024)
    p = totals("smem_padded", 1024, 1024, 1024)
    assert t.ld == p.ld and t.st == p.st
    assert t.ld.conflicts == 0 and t.st.conflicts == 0
    # 1024 blocks x 32 K steps x 32 warps x (32 As + 32 Bs reads)
    assert t.ld.wavefronts == 1024 * 32 * 32 * 64


def test_register_2d_conflicts_match_the_hand_count():
    m = model_for("register_2d")
    acc = m.shared_accesses(0, 0)
    # As[(threadRow*8+i)*8 + k]: lanes 0-15 threadRow 0, lanes 16-31 threadRow 1,
    # 64 words apart -> the same bank, two words: 2-way
    a = _by_label(acc, "As[(threadRow")[0].banks()
    assert (a.wavefronts, a.conflicts, a.n_way) == (2, 1, 2)
    assert a.lane_bank[0] == a.lane_bank[16]
    # Bs LDS.128 at threadCol*8 words: in a phase, c and c+4 share banks 0-3 etc.
    b = _by_label(acc, "Bs[k*BN")[0].banks()
    assert b.width_bytes == 16
    assert (b.wavefronts, b.conflicts, b.n_way) == (8, 4, 2)
    t = totals("register_2d", 1024, 1024, 1024)
    per_warp_step = 8 * (8 * 1 + 2 * 4)  # per k: 8 As (1 each) + 2 Bs (4 each)
    assert t.ld.conflicts == 64 * 128 * 8 * per_warp_step
    assert t.st.conflicts == 0


def test_vectorized_transposed_store_is_2_way_and_a_reads_broadcast():
    acc = model_for("vectorized").shared_accesses(3, 0)
    st = [a.banks() for a in acc if a.op is Op.STORE]
    assert [r.n_way for r in st] == [2, 2, 2, 2, 1]
    a = _by_label(acc, "As[k*BM")[0].banks()
    assert (a.wavefronts, a.conflicts) == (4, 0)


@pytest.mark.parametrize("level_id", ["warp_tiling", "cp_async"])
def test_warp_tiling_is_conflict_free(level_id):
    t = totals(level_id, 1024, 1024, 1024)
    assert t.ld.conflicts == 0 and t.st.conflicts == 0 and t.cp_async.conflicts == 0
    # every read is an LDS.128 at 4 wavefronts
    assert t.ld.wavefronts == 4 * t.ld.instructions


def test_stages_rotate():
    m = model_for("cp_async")
    assert [m.stage(k) for k in range(6)] == [0, 1, 2, 3, 0, 1]
    s0 = m.shared_accesses(0, 0)[0].addr
    s1 = m.shared_accesses(0, 1)[0].addr
    assert (s1 - s0 == m.smem_arrays()[0].stage_bytes).all()


def test_totals_scale_with_blocks_and_steps_and_are_fast():
    t0 = time.perf_counter()
    for lid in MODELS:
        big = totals(lid, 1024, 1024, 1024)
        half = totals(lid, 1024, 512, 1024)
        assert big.ld.wavefronts == 2 * half.ld.wavefronts
        assert set(big.metrics()) == set(NCU_METRICS.values())
    assert time.perf_counter() - t0 < 10


def test_odd_k_counts_partial_steps():
    t = totals("double_buffer", 64, 64, 33)
    assert t.k_steps == 2 and t.blocks == 4


def test_global_coalescing_naive_vs_coalesced():
    naive = model_for("naive").global_accesses(0, 0, 1024, 1024, 1024)
    coal = model_for("coalesced").global_accesses(0, 0, 1024, 1024, 1024)
    assert [a.sectors().n_sectors for a in naive] == [32, 1]
    assert [a.sectors().n_sectors for a in coal] == [1, 4]
    assert model_for("naive").store_accesses(0, 1024, 1024)[0].sectors().n_sectors == 32


def test_vectorized_global_loads_are_float4():
    acc = model_for("vectorized").global_accesses(0, 0, 1024, 1024, 1024)
    b = acc[1].sectors()
    assert b.width_bytes == 16 and b.n_sectors == 16 and b.efficiency == 1.0


def test_edge_lanes_are_masked():
    acc = model_for("coalesced").global_accesses(0, 0, 1, 7, 1)
    assert acc[1].active.sum() == 7


def test_models_match_the_registry_titles():
    for lid in MODELS:
        assert get(lid).id == lid


def test_models_import_no_qt_and_no_cupy():
    import subprocess
    import sys

    code = ("import sys, gemmscope.kernels.models as m; m.totals('vectorized', 256, 256, 64);"
            "bad = [n for n in ('PySide6', 'pyqtgraph', 'cupy', 'gemmscope.app') "
            "if n in sys.modules]; print(bad); sys.exit(bool(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_register_2d_with_merged_a_reads():
    m = model_for("register_2d")
    m.a_read_bytes = 16
    acc = _by_label(m.shared_accesses(0, 0), "As[(threadRow")
    assert len(acc) == 2 * 8
    rep = acc[0].banks()
    assert (rep.wavefronts, rep.conflicts) == (4, 0)

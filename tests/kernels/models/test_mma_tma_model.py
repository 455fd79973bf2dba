"""mma_tma's access model: a producer warpgroup that owns nothing and issues no shared
instruction, math warps that read only by ldmatrix in the K loop, conflict-free, and stage
their FP16 C once a tile by stmatrix, conflict-free, for two TMA stores each."""

from __future__ import annotations

import numpy as np

from gemmscope.kernels.models import model_for
from gemmscope.kernels.models.level_model import Op

M = N = K = 1024


def test_the_producer_warps_own_no_output_and_issue_no_shared_instruction():
    m = model_for("mma_tma")
    assert m.threads == 128 + 8 * 32
    for w in range(4):
        assert not m.warp_mask(w).any()
        assert m.shared_accesses(w, 0) == []
    covered = sum(m.warp_mask(w).astype(int) for w in range(m.warps))
    assert (covered == 1).all()  # the math warps cover the tile once


def test_the_math_warps_only_read_by_ldmatrix_in_the_k_loop_without_bank_conflicts():
    m = model_for("mma_tma")
    for w in range(4, m.warps):
        accesses = m.main_loop_accesses(w, 1)
        assert {a.op for a in accesses} == {Op.LOAD}
        assert all(a.label.startswith("ldmatrix.x4") for a in accesses)
        assert all(a.banks().conflicts == 0 for a in accesses)
        # what the Banks view lists: the K step's loads, then the tile's staging stores
        listed = [(a.label, a.addr.tolist()) for a in m.shared_accesses(w, 1)]
        assert listed == [(a.label, a.addr.tolist())
                          for a in accesses + m.epilogue_accesses(w)]
    counts = m.step_counts(0)
    assert counts[Op.CP_ASYNC].instructions == 0 and counts[Op.STORE].instructions == 0


def test_each_math_warp_stages_its_tile_once_by_stmatrix_in_its_own_buffer():
    m = model_for("mma_tma")
    cs = m.smem_arrays()[2]
    assert (cs.rows, cs.cols, cs.elem_bytes, cs.stages, cs.xor_chunks) == (64, 64, 2, 8, True)
    assert cs.base_bytes == m.stages * m.stage_bytes and cs.stage_bytes == 8192
    for w in range(4, m.warps):
        stores = m.epilogue_accesses(w)
        assert len(stores) == 16  # 16 stmatrix.x4: 64 x 64 halves, 512 bytes each
        assert all(a.op is Op.STORE and a.width_bytes == 16 and a.array == "Cs"
                   and a.label.startswith("stmatrix.x4") for a in stores)
        # four phases of 8 rows, one 8 x 8 matrix each, in 8 bank groups: the ideal
        assert all((a.banks().wavefronts, a.banks().conflicts) == (4, 0) for a in stores)
        addr = np.concatenate([a.addr for a in stores])
        lo = cs.base_bytes + (w - 4) * cs.stage_bytes
        assert addr.min() >= lo and addr.max() + 16 <= lo + cs.stage_bytes  # its own 8 KB
        # every 16-byte row piece of the tile once: rows 0-63, 8 chunks of 8 halves
        _, rows, cols = cs.logical(addr)
        assert len({(r, c) for r, c in zip(rows, cols, strict=True)}) == 64 * 8
        assert set(cols) == set(range(0, 64, 8))
    assert m.epilogue_accesses(0) == []  # the producer stores nothing


def test_the_staging_fits_the_levels_shared_memory_after_three_stages():
    from gemmscope.kernels.ladder import registry

    m = model_for("mma_tma")
    cs = m.smem_arrays()[2]
    assert m.stages == 3
    end = cs.base_bytes + cs.size_bytes
    assert end + 1024 == registry.get("mma_tma").dyn_smem_bytes() == 214_016


def test_c_goes_by_two_tma_boxes_a_warp_where_a_c_map_exists():
    m = model_for("mma_tma")
    boxes = m.tma_stores(5, 1024, 1024, (1, 2))  # math warp 1: rows 0-63, columns 64-127
    assert [(b.matrix, b.op, b.row, b.col, b.rows, b.cols, b.elem_bytes) for b in boxes] == [
        ("C", Op.STORE, 128, 576, 32, 64, 2), ("C", Op.STORE, 160, 576, 32, 64, 2)]
    cs = m.smem_arrays()[2]
    assert [b.smem_offset for b in boxes] == [cs.base_bytes + 8192, cs.base_bytes + 8192 + 4096]
    assert m.tma_stores(0, 1024, 1024) == [] and m.tma_stores(5, 1024, 1020) == []
    stores = m.store_accesses(5, 1024, 1024, (1, 2))
    assert len(stores) == 2 and {a.width_bytes for a in stores} == {128}  # a row of a box


def test_bt_fragments_read_the_rows_of_the_warps_columns():
    """Bt row n is column n of C: a warp's B loads stay in its WN columns."""
    m = model_for("mma_tma")
    bs = m.smem_arrays()[1]
    for w in range(4, m.warps):
        _, wn0 = m.warp_origin(w - 4)
        for a in m.shared_accesses(w, 0):
            if a.array == "Bs":
                _, rows, _ = bs.logical(a.addr)
                assert rows.min() >= wn0 and rows.max() < wn0 + m.wn


def test_only_warp_0_reads_global_memory_the_two_tma_boxes():
    m = model_for("mma_tma")
    assert all(m.global_accesses(w, 0, M, N, K) == [] for w in range(1, m.warps))
    boxes = m.tma_loads(3, M, N, K, (1, 2))
    assert [(b.matrix, b.row, b.col, b.rows, b.cols) for b in boxes] == [
        ("A", 128, 192, 128, 64), ("Bt", 512, 192, 256, 64)]
    assert boxes[1].smem_offset - boxes[0].smem_offset == 128 * 128  # A then Bt in a stage


def test_without_a_c_map_each_lane_stores_fp16_pairs_or_single_halves():
    m = model_for("mma_tma")
    even, odd = m.store_accesses(4, 1000, 998), m.store_accesses(4, 1000, 999)
    assert {a.width_bytes for a in even} == {4} and {a.width_bytes for a in odd} == {2}
    assert len(even) == 64 and len(odd) == 2 * len(even)
    assert np.all(np.concatenate([a.addr for a in even]) % 4 == 0)
    assert all(a.label.startswith("half2 C") for a in even)
    assert all(a.label.startswith("half C") for a in odd)
    # mma_persistent's FP32 pairs from the same helper
    fp32 = model_for("mma_persistent").store_accesses(0, 1000, 1000)
    assert {a.width_bytes for a in fp32} == {8} and fp32[0].label.startswith("float2 C")


def test_totals_count_the_staging_stores_once_a_tile_where_a_c_map_exists():
    m = model_for("mma_tma")
    with_map, without = m.totals(4096, 4096, 4096), m.totals(4096, 4100, 4096)
    tiles = 16 * 32
    assert with_map.blocks == tiles and with_map.caveat == ""
    assert (with_map.st.instructions, with_map.st.wavefronts, with_map.st.conflicts) == (
        tiles * 8 * 16, tiles * 8 * 16 * 4, 0)
    assert without.st.instructions == 0 and "N % 8 != 0" in without.caveat
    assert with_map.ld.conflicts == 0 and with_map.ld.instructions == tiles * 64 * 8 * 32

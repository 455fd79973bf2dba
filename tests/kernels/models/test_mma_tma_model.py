"""mma_tma's access model: a producer warpgroup that owns nothing and issues no shared
instruction, math warps that only read by ldmatrix, conflict-free."""

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


def test_the_math_warps_only_read_by_ldmatrix_without_bank_conflicts():
    m = model_for("mma_tma")
    for w in range(4, m.warps):
        accesses = m.shared_accesses(w, 1)
        assert {a.op for a in accesses} == {Op.LOAD}
        assert all(a.label.startswith("ldmatrix.x4") for a in accesses)
        assert all(a.banks().conflicts == 0 for a in accesses)
    counts = m.step_counts(0)
    assert counts[Op.CP_ASYNC].instructions == 0 and counts[Op.STORE].instructions == 0


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


def test_odd_n_stores_single_floats():
    m = model_for("mma_tma")
    even, odd = m.store_accesses(4, 1000, 1000), m.store_accesses(4, 1000, 999)
    assert {a.width_bytes for a in even} == {8} and {a.width_bytes for a in odd} == {4}
    assert len(odd) == 2 * len(even)
    assert np.all(np.concatenate([a.addr for a in even]) % 8 == 0)

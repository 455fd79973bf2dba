from __future__ import annotations

import level_checks
import numpy as np
import pytest

from gemmscope.kernels.ladder.registry import get, ladder
from gemmscope.kernels.models import MODELS, SIMT_LEVELS, model_for, totals
from gemmscope.kernels.models.level_model import NCU_METRICS, Op, Tile


def test_every_ladder_level_has_a_model_with_its_geometry():
    assert set(MODELS) == {lv.id for lv in ladder()}
    for lv in ladder():
        level_checks.model_has_the_registry_geometry(lv)
    assert "wmma" not in SIMT_LEVELS


def test_the_models_come_in_the_registrys_order():
    """No list of models is kept by hand: the ladder's order is the registry's."""
    assert list(MODELS) == [lv.id for lv in ladder()]


@pytest.mark.parametrize("level_id", sorted(MODELS))
def test_threads_cover_the_block_tile_exactly_once(level_id):
    level_checks.threads_cover_the_block_tile_once(level_id)


@pytest.mark.parametrize("level_id", sorted(MODELS))
def test_model_parameters_come_from_the_registry_alone(level_id):
    level_checks.model_parameters_come_from_the_registry(level_id)


@pytest.mark.parametrize(("level_id", "override"), [
    ("wmma", {"STAGES": 2}), ("warp_tiling", {"GM": 4}), ("cp_async", {"GM": 4}),
    ("mma_sync", {"GM": 2})])
def test_a_partial_override_keeps_the_registered_tile_and_stages(level_id, override):
    registered = get(level_id).params
    m = model_for(level_id, override)
    assert (m.bm, m.bn, m.bk) == (registered["BM"], registered["BN"], registered["BK"])
    assert m.stages == override.get("STAGES", registered.get("STAGES", m.stages))
    assert m.threads == get(level_id).threads[0]
    # the registry's geometry of the same parameters says what the model derived
    geo = get(level_id).with_params(override).launch_geometry()
    assert (geo.tile, geo.k_tile, geo.block) == ((m.bm, m.bn), m.bk, (m.threads, 1))


@pytest.mark.parametrize("level_id", sorted(MODELS))
def test_shared_layout_places_elements_as_the_model_does(level_id):
    level_checks.shared_layout_places_elements_as_the_model_does(level_id)


def test_which_levels_swizzle_and_which_pad():
    from gemmscope.kernels.models import first_swizzled_level
    from gemmscope.kernels.models.swizzle import IDENTITY, Swizzle

    assert first_swizzled_level() == "mma_sync"
    mma, wmma = model_for("mma_sync").smem_arrays(), model_for("wmma").shared_layout()
    # chunk c of row r at c ^ (r % 8): Swizzle<3,4,3> on 128-byte rows of A, <3,4,5> on
    # the 512-byte rows of B
    assert [a.tile_layout().swizzle for a in mma] == [Swizzle(3, 4, 3), Swizzle(3, 4, 5)]
    assert wmma is not None and (wmma.swizzle, wmma.pad_elems) == (IDENTITY, 8)
    assert model_for("naive").shared_layout() is None
    assert model_for("smem_padded").shared_layout().pad_elems == 1


def test_unknown_level_says_which_exist():
    with pytest.raises(KeyError, match="naive"):
        model_for("nope")


def _by_label(accesses, start):
    return [a for a in accesses if a.label.startswith(start)]


BRIEF_128 = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}  # siboehm kernels 5 and 6
# warp tiling with 128x128 block tiles of 8 warps (32x64 each), as cp_async was first tuned
WARP_128 = {"BM": 128, "BN": 128, "WM": 32, "WN": 64, "WMITER": 2, "WNITER": 2, "TM": 4,
            "TN": 4}


def test_smem_tiled_as_read_is_a_broadcast_and_bs_read_is_conflict_free():
    m = model_for("smem_tiled", {"TILE": 32})
    acc = m.shared_accesses(5, 0)
    a = _by_label(acc, "As[ty][k..k+3]")
    assert len(a) == 8 and a[0].width_bytes == 16  # four k per LDS.128, as in the SASS
    rep = a[1].banks()
    assert len(set(rep.addr.tolist())) == 1  # one address for the whole warp
    assert (rep.wavefronts, rep.conflicts) == (2, 0)  # uniform pairs: two 16-lane phases
    b = _by_label(acc, "Bs[k][tx]")[3].banks()
    assert (b.wavefronts, b.n_way) == (1, 1)


def test_padding_removes_no_conflict_for_the_32x32_levels():
    t = model_for("smem_tiled", {"TILE": 32}).totals(1024, 1024, 1024)
    p = model_for("smem_padded", {"TILE": 32}).totals(1024, 1024, 1024)
    assert t.ld.conflicts == p.ld.conflicts == 0 and t.st.conflicts == p.st.conflicts == 0
    blocks_steps_warps = 1024 * 32 * 32
    assert p.ld.wavefronts == blocks_steps_warps * 64  # 64 LDS.32, one wavefront each
    assert t.ld.wavefronts == blocks_steps_warps * (8 * 2 + 32)  # 8 LDS.128 + 32 LDS.32
    # padding breaks the 16-byte alignment: 32 LDS.32 for As instead of 8 LDS.128
    assert (t.ld.instructions, p.ld.instructions) == (1024 * 32 * 32 * 40,
                                                      1024 * 32 * 32 * 64)
    assert [m.a_read_bytes for m in (model_for("smem_tiled"), model_for("smem_padded"),
                                     model_for("double_buffer"))] == [16, 4, 16]


def test_register_2d_conflicts_match_the_hand_count():
    m = model_for("register_2d", BRIEF_128)
    acc = m.shared_accesses(0, 0)
    # As[(trow*8+i)*8 + k..k+3]: lanes 0-15 share trow, 16-31 the next: 2 wavefronts
    a = _by_label(acc, "LDS.128 As[(trow")
    assert len(a) == 2 * 8  # per K step: 2 groups of four k x 8 rows
    assert (a[0].banks().wavefronts, a[0].banks().conflicts) == (2, 0)
    # Bs LDS.128 at tcol*8 words: in a phase, tcol c and c+4 share banks 0-3 etc.
    b = _by_label(acc, "LDS.128 Bs[k*BN")[0].banks()
    assert b.width_bytes == 16
    assert (b.wavefronts, b.conflicts, b.n_way) == (8, 4, 2)
    assert b.lane_bank[0] == b.lane_bank[4] == 0
    t = m.totals(1024, 1024, 1024)
    per_warp_step = 8 * 2 * 4  # per k: 2 Bs LDS.128 with 4 conflicts each
    assert t.ld.conflicts == 64 * 128 * 8 * per_warp_step
    assert t.st.conflicts == 0


def test_register_2d_read_literally_would_be_2_way_on_a():
    m = model_for("register_2d", BRIEF_128)
    m.a_read_bytes = 4  # LDS.32 As[(trow*8+i)*8 + k]: two thread rows 64 words apart
    a = _by_label(m.shared_accesses(0, 0), "LDS As[(trow")
    assert len(a) == 8 * 8
    rep = a[0].banks()
    assert (rep.wavefronts, rep.conflicts, rep.n_way) == (2, 1, 2)
    assert rep.lane_bank[0] == rep.lane_bank[16]


def test_vectorized_transposed_store_is_2_way_and_a_reads_broadcast():
    acc = model_for("vectorized", BRIEF_128).shared_accesses(3, 0)
    st = [a.banks() for a in acc if a.op is Op.STORE]
    assert [r.n_way for r in st] == [2, 2, 2, 2, 1]
    a = _by_label(acc, "LDS.128 As[k*BM")[0].banks()
    assert (a.wavefronts, a.conflicts) == (2, 0)


@pytest.mark.parametrize("level_id", ["warp_tiling", "cp_async"])
def test_warp_tiling_is_conflict_free(level_id):
    t = totals(level_id, 1024, 1024, 1024)
    assert t.ld.conflicts == 0 and t.st.conflicts == 0 and t.cp_async.conflicts == 0
    # every read is an LDS.128: B reads 4 wavefronts, A reads (uniform pairs) 2
    m = model_for(level_id)
    a_reads = m.wmiter * m.tm // 4
    b_reads = m.wniter * m.tn // 4
    per_instr = (2 * a_reads + 4 * b_reads) / (a_reads + b_reads)
    assert t.ld.wavefronts == per_instr * t.ld.instructions


def test_stages_rotate():
    m = model_for("cp_async", {"STAGES": 4})
    assert [m.stage(k) for k in range(6)] == [0, 1, 2, 3, 0, 1]
    s0 = m.shared_accesses(0, 0)[0].addr
    s1 = m.shared_accesses(0, 1)[0].addr
    assert (s1 - s0 == m.smem_arrays()[0].stage_bytes).all()


def test_totals_scale_with_blocks_and_steps():
    # (how long the totals take is a speed goal, not a test's: a clock in a test failed
    # on the loaded 2-core machine)
    for lid in MODELS:
        big = totals(lid, 1024, 1024, 1024)
        half = totals(lid, 1024, 512, 1024)
        assert big.ld.wavefronts == 2 * half.ld.wavefronts
        assert set(big.metrics()) == set(NCU_METRICS.values())


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


def test_edge_path_of_cp_async_copies_b_element_by_element():
    m = model_for("cp_async", {**WARP_128, "BK": 8, "STAGES": 4})
    assert m.warps == 8
    vec = m.totals(1024, 1024, 1024)
    edge = m.totals(1024, 1022, 1024)  # N % 4 != 0: the VEC=false instantiation
    assert vec.vector_path and not edge.vector_path
    per_step_blocks = 8 * 64 * 128  # warps x blocks x K steps
    assert vec.cp_async.instructions == per_step_blocks * (4 + 1)
    assert edge.cp_async.instructions == per_step_blocks * (4 + 4)
    assert edge.ld == vec.ld
    assert m.vector_path  # totals leave the model as they found it


def test_wmma_says_what_it_does_not_model():
    m = model_for("wmma")
    assert m.totals(256, 256, 256).caveat == ""
    assert "element-wise" in m.totals(256, 250, 256).caveat


def test_tiles_of_a_block():
    m = model_for("register_2d", {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8})
    assert m.c_tile((2, 3)) == Tile(256, 384, 128, 128)
    assert m.a_tile((2, 3), 5) == Tile(256, 40, 128, 8)
    assert m.b_tile((2, 3), 5) == Tile(40, 384, 8, 128)
    assert m.warp_tile(1) == Tile(16, 0, 16, 128)  # threads 32-63: thread rows 2 and 3
    w = model_for("warp_tiling", {"BM": 128, "BN": 128, "BK": 8, "WM": 32, "WN": 64,
                                  "WMITER": 2, "WNITER": 2, "TM": 4, "TN": 4})
    assert w.warp_tile(3) == Tile(32, 64, 32, 64)
    assert w.warp_mask(3).sum() == 32 * 64


def test_block_launch_order():
    assert model_for("register_2d").block_order(3, 4)[1, 0] == 4  # row-major
    assert model_for("naive").block_order(3, 4)[1, 0] == 1  # blockIdx.x walks M
    grouped = model_for("cp_async", {"GM": 4}).block_order(6, 3)
    # the first 4 block rows are walked column by column, then the remaining 2
    assert grouped[:, 0].tolist() == [0, 1, 2, 3, 12, 13]
    assert grouped[0, 1] == 4 and grouped[4, 1] == 14
    assert sorted(grouped.ravel().tolist()) == list(range(18))


def test_cp_async_a_copies_follow_the_source_mapping():
    m = model_for("cp_async", {**WARP_128, "BK": 16, "STAGES": 3})
    assert m.threads == 256  # ROWS = 32 rows of A per pass, BM / ROWS = 4 passes per 8 k
    copies = m.a_tile_elements(1)  # warp 1: threads 32..63
    assert len(copies) == 128 * 16 // 256
    _, r, c = copies[0]
    assert r.tolist() == [4 + lane // 8 for lane in range(32)]  # rows tid / 8
    assert c.tolist() == [lane % 8 for lane in range(32)]
    _, r, c = copies[4]  # p = 4 = BM / ROWS: the next 8 k, back at the first rows
    assert r[0] == 4 and c[0] == 8
    rep = m.shared_accesses(1, 0)[0].banks()
    assert (rep.wavefronts, rep.conflicts) == (1, 0)  # 4 rows x 8 k: 32 distinct banks


def test_command_line_table(capsys):
    from gemmscope.kernels.models.__main__ import main

    assert main(["256", "256", "256", "--levels", "smem_tiled,wmma"]) == 0
    out = capsys.readouterr().out
    assert "smem_tiled" in out and "wmma" in out and "ld wavefr" in out


def test_mma_sync_swizzle_makes_ldmatrix_and_copies_conflict_free():
    from gemmscope.kernels.models.relayout import relayout
    from gemmscope.kernels.models.swizzle import Swizzle

    m = model_for("mma_sync", {"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64,
                               "STAGES": 3})
    t = m.totals(1024, 1024, 1024)
    assert t.ld.conflicts == 0 and t.cp_async.conflicts == 0
    # per warp per K step: 4 k16 steps x (4 A + 4 B) ldmatrix.x4, 4 wavefronts each
    assert t.ld.wavefronts == 4 * t.ld.instructions
    assert t.ld.instructions == 32 * 8 * 16 * 4 * 8  # blocks x warps x K steps x ...
    plain = Swizzle(0, 4, 3)  # no bit swapped: the tile re-laid out row-major
    for label in ("ldmatrix.x4 A", "ldmatrix.x4.trans B"):
        acc = _by_label(m.shared_accesses(0, 0), label)[0]
        assert acc.banks().n_way == 1
        # without the swizzle, the 8 rows of a phase start at the same bank: 8-way
        assert relayout(acc, m.smem_arrays(), 0, plain).banks().n_way == 8
    # the kernel's layout: chunk c of row r at c ^ (r % 8)
    a_s = m.smem_arrays()[0]
    assert int(a_s.address(0, 3, 8)) == 3 * 128 + ((1 ^ 3) * 16)
    stage, row, col = a_s.logical(a_s.address(1, np.arange(8), 8 * np.arange(8)))
    assert stage.tolist() == [1] * 8 and row.tolist() == list(range(8))
    assert col.tolist() == [8 * c for c in range(8)]


def test_sectors_of_accesses_wider_than_a_sector():
    from gemmscope.kernels.models.coalescing import analyze_global

    rows = np.arange(32) * 4096  # 32 rows of 128 bytes, a matrix row apart (a TMA box)
    rep = analyze_global(rows, 128)
    assert rep.n_sectors == 32 * 4 and rep.n_lines == 32 and rep.efficiency == 1.0
    assert analyze_global(rows + 16, 128).n_sectors == 32 * 5  # misaligned: one more each


def test_interleaved_stages_address_and_read_back():
    from gemmscope.kernels.models.level_model import SmemArray

    a = SmemArray("As", 4, 8, 8, 4, 3, 0, "A", stride_bytes=1000)
    addr = a.address(2, 3, 5)
    assert int(addr) == 2 * 1000 + 3 * 32 + 5 * 4
    assert [int(x) for x in a.logical(addr)] == [2, 3, 5]

"""The access models of the sm_90a levels (wgmma_tma, fp8_block_scaled) on known cases:
the wgmma accumulator layout, the warpgroup roles, the persistent tile walk, the TMA
boxes, the epilogue's staging stores and the producer/consumer timeline."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import model_for
from gemmscope.kernels.models.hopper import (
    H200_SMS,
    WARPS_PER_GROUP,
    PromoteOp,
    Role,
    WgmmaOp,
    grouped_tile,
)
from gemmscope.kernels.models.level_model import Op, SmemArray
from gemmscope.kernels.models.pipeline import StageState, Work
from gemmscope.kernels.models.relayout import relayout
from gemmscope.kernels.models.swizzle import Swizzle

HOPPER = ["wgmma_tma", "fp8_block_scaled"]


@pytest.mark.parametrize("level_id", HOPPER)
def test_geometry_comes_from_the_registry(level_id):
    lv = registry.get(level_id)
    m = model_for(lv.id)
    assert m.params == lv.params
    assert m.threads == (lv.params["CONSUMERS"] + 1) * 128 == lv.threads[0]
    # the shared layout the model assumes is the one the launch reserves
    staging = m.smem_arrays()[2]
    reserved = lv.dyn_smem_bytes() - 1024  # the kernel's 1 KB of alignment slack
    # the stages, the C staging buffers and (FP8 with SCL) the scale buffers, back to back
    extra = m.smem_arrays()[3:]
    assert m.stages * m.stage_bytes + staging.size_bytes + sum(a.size_bytes for a in extra) \
        == reserved
    after_staging = m.stages * m.stage_bytes + staging.size_bytes
    assert [a.base_bytes for a in extra] == [after_staging][:len(extra)]
    assert m.smem_arrays()[0].stage_stride == m.smem_arrays()[1].stage_stride == m.stage_bytes


def test_fragment_layout_of_the_first_consumer_thread():
    m = model_for("wgmma_tma")
    out = m.thread_outputs(128)  # consumer 0, warp 4, lane 0
    assert out[:8].tolist() == [[0, 0], [0, 1], [8, 0], [8, 1], [0, 8], [0, 9], [8, 8], [8, 9]]
    assert len(out) == m.bn // 2  # 128 FP32 accumulators of an m64n256 tile
    assert set(out[:, 0].tolist()) == {0, 8}
    assert out[:, 1].tolist()[::4] == list(range(0, m.bn, 8))


@pytest.mark.parametrize("level_id", HOPPER)
def test_fragment_layout_by_warp_and_lane(level_id):
    m = model_for(level_id)
    # consumer 1 (warpgroup 2), its warp 1 (block warp 9), lane 5: rows 64 + 16 + 1 (+8),
    # columns 8j + 2 * (5 % 4) + {0, 1}
    out = m.thread_outputs(256 + 32 + 5)
    assert out[:4].tolist() == [[81, 2], [81, 3], [89, 2], [89, 3]]
    assert out[-1].tolist() == [89, m.bn - 8 + 3]
    rows = m.consumer_rows(1)
    for tid in range(256, 384):
        rc = m.thread_outputs(tid)
        assert rows.row <= rc[:, 0].min() and rc[:, 0].max() < rows.row + rows.rows


@pytest.mark.parametrize("level_id", HOPPER)
def test_the_producer_warpgroup_owns_no_outputs(level_id):
    m = model_for(level_id)
    for tid in (0, 1, 31, 64, 127):
        assert m.thread_outputs(tid).shape == (0, 2)
    for w in range(m.warps):
        role = m.role(w)
        assert role is (Role.PRODUCER if w < WARPS_PER_GROUP else Role.CONSUMER)
        assert m.warp_mask(w).any() == (role is Role.CONSUMER)
        if role is Role.CONSUMER:
            c = m.consumer_of(w)
            assert m.warp_tile(w).row == 64 * c + 16 * (w % WARPS_PER_GROUP)
        else:
            assert m.consumer_of(w) is None and m.warp_tile(w).rows == 0


def test_grouped_walk_known_cases():
    # a grid of 20 x 3 tiles, groups of 16 rows: the first group is walked down each
    # column (48 tiles), then the last 4 rows
    assert [grouped_tile(t, 20, 3, 16) for t in (0, 1, 15, 16, 47)] == [
        (0, 0), (1, 0), (15, 0), (0, 1), (15, 2)]
    assert [grouped_tile(t, 20, 3, 16) for t in (48, 51, 52, 59)] == [
        (16, 0), (19, 0), (16, 1), (19, 2)]


@pytest.mark.parametrize("level_id", HOPPER)
@pytest.mark.parametrize(("M", "N", "sms"), [(4096, 4096, H200_SMS), (1000, 3000, 7),
                                             (128, 256, H200_SMS), (8192, 512, 132)])
def test_persistent_blocks_visit_every_tile_once(level_id, M, N, sms):
    m = model_for(level_id)
    gm, gn = m.grid(M, N)
    grid = m.persistent_grid(M, N, sms)
    assert grid == registry.get(level_id).grid(M, N, sms)[0]
    seen = [tile for b in range(grid) for tile in m.block_tiles(b, M, N, sms)]
    assert sorted(seen) == [(r, c) for r in range(gm) for c in range(gn)]
    order = m.block_order(gm, gn)
    for b in range(grid):
        walk = [int(order[t]) for t in m.block_tiles(b, M, N, sms)]
        assert walk == list(range(b, gm * gn, grid))  # t, t + grid, ...


def test_the_bundled_recordings_sm_count_is_the_default():
    from importlib import resources

    path = resources.files("gemmscope.resources") / "sessions" / "h200-ladder.jsonl.gz"
    with path.open("rb") as raw, gzip.open(raw) as f:
        header = json.loads(f.readline())
    assert header["device"]["sm_count"] == H200_SMS


@pytest.mark.parametrize("level_id", HOPPER)
def test_the_main_loop_has_no_shared_access_but_the_fp8_scales(level_id):
    m = model_for(level_id)
    scl = getattr(m, "scl", 0)
    for w in range(m.warps):
        for k in range(m.stages + 1):
            accs = m.main_loop_accesses(w, k)
            assert all(a.array == "Ss" for a in accs)
            assert bool(accs) == bool(scl and m.consumer_of(w) is not None)
    t = m.totals(4096, 4096, 4096)
    gm, gn = m.grid(4096, 4096)
    steps = gm * gn * m.k_steps(4096)
    if scl:  # per K step each consumer thread reads 2 A scales and the B scales of two
        # halves at once, and 64 + halves threads of a consumer copy the next ones (3
        # warps of 4 have such)
        warps = m.consumers * WARPS_PER_GROUP
        assert t.ld.instructions == steps * warps * (2 + (m.halves + 1) // 2)
        assert t.ld.conflicts == 0  # broadcasts: 8 rows of 4 lanes, one address
        assert t.cp_async.instructions == steps * m.consumers * 3
    else:
        assert t.ld.instructions == t.cp_async.instructions == 0
    # the epilogue: each consumer thread stores its BN/2 accumulators as bf16 pairs
    gm, gn = m.grid(4096, 4096)
    per_thread = m.accumulators_per_thread() // 2
    assert t.st.instructions == gm * gn * m.consumers * WARPS_PER_GROUP * per_thread
    assert t.st.wavefronts == t.st.instructions and t.st.conflicts == 0
    assert t.caveat == ""
    wider = m.totals(4096, 8192, 4096)
    assert wider.st.instructions == 2 * t.st.instructions


def test_c_rows_not_16_byte_multiples_skip_the_staging():
    m = model_for("wgmma_tma")
    t = m.totals(1000, 1002, 1000)
    assert t.st.instructions == 0 and "N % 8" in t.caveat
    assert m.tma_stores(0, 1000, 1002) == []
    direct = m.store_accesses(5, 1000, 1002)
    assert len(direct) == m.bn // 8 * 2 and direct[0].width_bytes == 4
    odd = m.store_accesses(5, 1000, 1001)
    assert len(odd) == 2 * len(direct) and odd[0].width_bytes == 2
    assert "K % 128" in model_for("fp8_block_scaled").totals(256, 256, 200).caveat


@pytest.mark.parametrize("level_id", HOPPER)
def test_staging_stores_are_conflict_free_and_would_be_8_way_unswizzled(level_id):
    m = model_for(level_id)
    arrays = m.smem_arrays()
    cs = arrays[2]
    stores = m.epilogue_accesses(4)
    assert len(stores) == m.accumulators_per_thread() // 2
    assert all(a.op is Op.STORE and a.width_bytes == 4 for a in stores)
    plain = SmemArray("plain", cs.rows, cs.cols, cs.pitch, cs.elem_bytes, cs.stages,
                      cs.base_bytes, "C", xor_chunks=False)
    for acc in stores:
        rep = acc.banks()
        assert (rep.n_way, rep.wavefronts, rep.conflicts) == (1, 1, 0)
        assert len(set(rep.lane_bank.tolist())) == 32
        # the same lanes at the same logical elements of a plain 128-byte-row buffer
        stage, row, col = cs.logical(acc.addr)
        unswizzled = plain.address(stage, row, col)
        from gemmscope.kernels.models.banks import analyze_shared
        assert analyze_shared(unswizzled, 4).n_way == 8
        # ... which is what the banks view shows with an XOR swizzle of B = 0
        assert relayout(acc, arrays, 0, Swizzle(0, 4, 3)).banks().n_way == 8


@pytest.mark.parametrize("level_id", HOPPER)
def test_staging_stores_put_each_accumulator_where_the_tma_box_expects_it(level_id):
    """The epilogue writes register pair (4g + 2h, +1) at (row, 8g + 2 (lane % 4)) of the
    consumer's tile, chunk g // 8: the logical element of every lane's store, read back
    through the swizzle, must be the output the fragment layout gives that register."""
    m = model_for(level_id)
    cs = m.smem_arrays()[2]
    for warp in (4, 7, 9):
        c = m.consumer_of(warp)
        stores = m.epilogue_accesses(warp)
        for i, acc in enumerate(stores):
            ch, h = i // 16, i % 2
            g = i // 2  # 8 column groups per chunk, two rows each
            stage, row, col = cs.logical(acc.addr)
            assert (stage == 2 * c + ch % 2).all()
            for lane in (0, 6, 31):
                want = m.thread_outputs(warp * 32 + lane)[4 * g + 2 * h]
                assert [int(row[lane]) + 64 * c, int(col[lane]) + 64 * ch] == want.tolist()


@pytest.mark.parametrize("level_id", HOPPER)
def test_tma_boxes_of_a_k_step(level_id):
    m = model_for(level_id)
    a, b = m.tma_loads(5, 4096, 4096, 4096, block=(2, 3))
    assert (a.row, a.col, a.rows, a.cols) == (256, 5 * m.bk, m.bm, m.bk)
    assert (b.matrix, b.row, b.rows) == ("Bt", 3 * m.bn, m.bn)
    assert a.box_bytes + b.box_bytes == m.stage_bytes  # the full barrier's expect_tx
    assert b.smem_offset - a.smem_offset == m.a_bytes and a.stage == 5 % m.stages
    # every row is one 128-byte line: 4 sectors, fully used
    assert a.sectors() == 4 * m.bm and b.sectors() == 4 * m.bn
    acc = m.global_accesses(0, 5, 4096, 4096, 4096)
    assert len(acc) == (m.bm + m.bn) // 32
    assert all(x.sectors().efficiency == 1.0 for x in acc)
    assert m.global_accesses(1, 5, 4096, 4096, 4096) == []  # other producer warps: none


def test_tma_boxes_at_the_edges_move_only_bytes_inside():
    m = model_for("wgmma_tma")
    a, b = m.tma_loads(1, 200, 300, 72, block=(1, 1))
    assert a.valid_rows == 200 - 128 and a.valid_cols == 72 - 64
    assert a.box_bytes == m.bm * 128  # zero fill still lands in shared memory
    assert a.global_bytes == 72 * 8 * 2
    assert a.sectors() == 72  # 16 bytes per row: one sector
    assert b.valid_rows == 300 - 256 and b.sectors() == 44


def test_tma_stores_are_64x64_boxes_per_consumer():
    m = model_for("wgmma_tma")
    boxes = m.tma_stores(1, 4096, 4096, block=(1, 2))
    assert [(x.row, x.col, x.rows, x.cols) for x in boxes] == [
        (128 + 64, 512 + 64 * ch, 64, 64) for ch in range(4)]
    assert [x.stage for x in boxes] == [0, 1, 0, 1]  # the two staging halves alternate
    assert len(m.store_accesses(8, 4096, 4096)) == 4 * 2  # thread 0 of consumer 1
    assert m.store_accesses(9, 4096, 4096) == [] and m.store_accesses(0, 4096, 4096) == []


def test_wgmma_steps_along_k_read_the_stage_through_descriptors():
    m = model_for("wgmma_tma")
    ops = m.wgmma_ops(1, 6)
    assert [o.shape for o in ops] == ["m64n256k16"] * (m.bk // 16)
    stage = 6 % m.stages
    for kk, o in enumerate(ops):
        assert isinstance(o, WgmmaOp)
        assert o.a.row == 64 and o.a.col == 16 * kk and o.c.rows == 64 and o.c.cols == m.bn
        # stage + c * 64 rows of 128 bytes, + 32 bytes per k16 (da + 2 * kk in 16-byte units)
        assert o.desc_a == stage * m.stage_bytes + 64 * 128 + 32 * kk
        assert o.desc_b == stage * m.stage_bytes + m.a_bytes + 32 * kk


def test_fp8_does_each_k_block_in_halves_and_promotes():
    m = model_for("fp8_block_scaled")
    ops = m.wgmma_ops(0, 0)
    kinds = ["P" if isinstance(o, PromoteOp) else o.shape for o in ops]
    assert kinds == ["m64n128k32"] * 4 + ["P"] + ["m64n128k32"] * 4 + ["P"]
    assert ops[5].b.row == 128 and ops[5].c.col == 128
    assert ops[5].desc_b == m.a_bytes + 128 * 128  # the second half's 128 rows of Bt
    # SCL = 0: each consumer warp loads, per half, scale_b and its rows' scale_a itself
    own = type(m)({"SCL": 0})
    loads = own.global_accesses(6, 0, 1024, 1024, 1024)
    assert len(loads) == 2 * 3 and own.main_loop_accesses(6, 0) == []
    scale_b, a0 = loads[0].sectors(), loads[1].sectors()
    assert scale_b.n_sectors == 1 and scale_b.bytes_used == 4  # one address for the warp
    assert a0.n_sectors == 1 and a0.bytes_used == 32  # 8 rows, 4 lanes each


def test_fp8_scales_are_copied_ahead_into_shared_buffers():
    m = model_for("fp8_block_scaled")
    assert m.scl == 1 and m.scale_slots == 64 + 2
    rows = m.global_accesses(4, 0, 1024, 1024, 1024)  # consumer 0, rows 0..31
    assert [a.op for a in rows] == [Op.CP_ASYNC]
    assert rows[0].sectors().bytes_used == 32 * 4 and rows[0].sectors().n_sectors == 4
    b = m.global_accesses(6, 0, 1024, 1024, 1024)  # lanes 0 and 1: the two halves' scale_b
    assert b[0].active.sum() == 2 and b[0].sectors().bytes_used == 8
    assert m.global_accesses(7, 0, 1024, 1024, 1024) == []
    # K step k reads buffer k % 2 and fills the other; consumer 1 has its own pair
    reads = [a for a in m.main_loop_accesses(4, 3) if a.op is Op.LOAD]
    copy = [a for a in m.main_loop_accesses(4, 3) if a.op is Op.CP_ASYNC]
    assert {a.stage for a in reads} == {1} and [a.stage for a in copy] == [0]
    assert {a.stage for a in m.main_loop_accesses(8, 3)} == {2 + 1, 2 + 0}
    assert all(a.banks().conflicts == 0 for a in reads + copy)


def test_fp8_tiles_half_past_n_have_their_own_k_loop_with_one_half():
    m = model_for("fp8_block_scaled")
    whole, edge = m.k_loop_copies()
    assert whole is m and whole.issued_halves == 2 and edge.issued_halves == 1
    kinds = ["P" if isinstance(o, PromoteOp) else o.shape for o in edge.wgmma_ops(0, 0)]
    assert kinds == ["m64n128k32"] * 4 + ["P"]
    # the edge copy reads one B scale (LDS), the whole one both with one LDS.64; both
    # copy the next block's scales for every half (the next tile may be whole)
    assert [a.width_bytes for a in whole.main_loop_accesses(4, 0) if a.op is Op.LOAD] == [4, 4, 8]
    assert [a.width_bytes for a in edge.main_loop_accesses(4, 0) if a.op is Op.LOAD] == [4, 4, 4]
    assert [a.op for a in edge.main_loop_accesses(6, 0)][-1] is Op.CP_ASYNC
    assert len(type(m)({**m.params, "SKIP": 0}).k_loop_copies()) == 1


def test_stages_continue_across_a_blocks_tiles():
    m = model_for("wgmma_tma")
    sched = m.schedule(k_steps=6, tiles=2)
    # the second tile's first K step is the block's iteration 6: stage 6 % 4
    t = sched.slot(6) + 0.9
    assert sched.consumer_at(t).stage == m.stage_of(6) == 2
    assert sched.stage_at(2, t).state is StageState.CONSUMING


@pytest.mark.parametrize("level_id", HOPPER)
def test_pipeline_timeline_keeps_the_barrier_rules(level_id):
    m = model_for(level_id)
    sched = m.schedule(k_steps=5, tiles=3)
    assert sched.ops_per_step == len(m.wgmma_ops(0, 0))
    S = m.stages
    for it in range(S, sched.iterations):
        # a stage is refilled only after the consumers released its previous iteration
        assert sched.issue(it) >= sched.released(it - S)
    for it in range(sched.iterations):
        assert sched.consume_start(it) >= sched.landed(it)  # waits on full[s]
    for step in np.arange(0, sched.n_slots, 0.05):
        views = [sched.stage_at(s, step) for s in range(S)]
        consuming = [v for v in views if v.state is StageState.CONSUMING]
        work = sched.consumer_at(step)
        if work.work is Work.MMA:
            assert [v.stage for v in consuming] == [work.stage]
            assert views[work.stage].iteration == work.iteration
        else:
            assert consuming == []
        held = [v.iteration for v in views if v.state is not StageState.EMPTY]
        if held and work.iteration is not None:
            assert max(held) - work.iteration < S  # at most a ring ahead
    # while the consumers store a tile, the producer has already filled the next one's
    epi = sched.epilogue_slot(0) + 0.9
    assert sched.consumer_at(epi).work is Work.EPILOGUE
    ahead = [sched.stage_at(s, epi) for s in range(S)]
    assert all(v.tile == 1 and v.state is StageState.FULL for v in ahead)


def test_fp8_192_wide_tile_is_one_part_whose_columns_span_two_scale_blocks():
    m = model_for("fp8_block_scaled", {"BN": 192})
    kinds = ["P" if isinstance(o, PromoteOp) else o.shape for o in m.wgmma_ops(0, 0)]
    assert kinds == ["m64n192k32"] * 4 + ["P"]
    assert m.k_loop_copies() == [m]  # no half to skip
    assert m.scale_slots == 64 + 2  # both blocks' scales are staged and read
    assert [a.width_bytes for a in m.main_loop_accesses(4, 0) if a.op is Op.LOAD] == [4, 4, 8]
    # tile column 1 starts at column 192, in scale block 1: lanes 0, 1 copy blocks 1, 2
    b = m.global_accesses(6, 0, 1024, 1024, 1024, block=(0, 1))
    assert b[0].active.sum() == 2
    assert list(b[0].addr[:2] // 4) == [1 * 8, 2 * 8]  # block nb: nb * 8 K blocks + kb 0

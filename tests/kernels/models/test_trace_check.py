"""Issue 46 item 5 over synthetic traces: a trace made from a level's model schedule passes
the checks, and one that departs from it (a block on a shared SM, a tile run by another
block, a fix-up finished elsewhere) fails them, naming what departs."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import trace_check, trace_schedule
from gemmscope.kernels.protocol import decoding
from gemmscope.kernels.protocol.trace_records import Trace, TraceKind

SMS = 132


@pytest.fixture(scope="module")
def stream_k() -> tuple[trace_schedule.TraceSchedule, Trace]:
    model = trace_schedule.schedule(registry.get("wgmma_stream_k"), 2048, 2048, 1024, SMS)
    return model, decoding.of(trace_schedule.synthetic_trace(model, SMS, seed=3))


def test_stream_k_schedule_covers_every_k_step_of_every_tile_once(stream_k):
    model, _ = stream_k
    steps = Counter()
    for pieces in model.pieces:
        for t, k0, k1 in pieces:
            for ks in range(k0, k1):
                steps[(t, ks)] += 1
    assert set(steps.values()) == {1} and len(steps) == model.tiles * model.ksteps
    # 16 x 8 tiles of 128 x 256 on 132 SMs: fewer tiles than SMs, shared out by K steps
    # (SK = 2): 2048 steps over 132 blocks, so most tiles are cut between two blocks
    assert model.grid == SMS and model.tiles == 128
    cut = model.cut_pieces()
    cut_tiles = {t for _, t, _ in cut}
    assert len(cut_tiles) > 100 and set(model.finishers()) == cut_tiles
    for t in cut_tiles:  # one finisher (K step 0), at least one contributor
        assert sorted(k0 for _, tt, k0 in cut if tt == t)[0] == 0
        assert len([1 for _, tt, _ in cut if tt == t]) >= 2


def test_persistent_trace_made_from_the_model_passes_and_a_moved_tile_fails():
    model = trace_schedule.schedule(registry.get("wgmma_tma"), 2048, 4096, 512, SMS)
    trace = decoding.of(trace_schedule.synthetic_trace(model, SMS, seed=1))
    assert trace_check.check_persistent(trace, model) == []
    assert set(trace_check.blocks_per_sm(trace).values()) == {1}

    moved = copy.deepcopy(trace)
    ev = moved.events
    begin = [i for i in range(len(ev)) if moved.kind_of(ev.kind[i]) is TraceKind.TILE_BEGIN
             and ev.block[i] == 5 and ev.lane[i] == 1]
    ev.tile[begin[0]] = 999
    problems = trace_check.check_persistent(moved, model)
    assert len(problems) == 1 and problems[0].startswith("block 5 lane 1: ran [999")


def test_two_blocks_on_one_sm_fail_the_persistent_check():
    model = trace_schedule.schedule(registry.get("mma_tma"), 1024, 1024, 256, SMS)
    trace = decoding.of(trace_schedule.synthetic_trace(model, SMS, seed=2))
    crowded = copy.deepcopy(trace)
    crowded.block_sm[1] = crowded.block_sm[0]
    problems = trace_check.check_persistent(crowded, model)
    assert problems == [f"SMs running more than one block: {{{trace.block_sm[0]}: 2}}"]


def test_stream_k_trace_made_from_the_model_passes_and_a_moved_finisher_fails(stream_k):
    model, trace = stream_k
    assert trace_check.check_stream_k(trace, model) == []
    assert trace_check.check_persistent(trace, model) == []
    moved = copy.deepcopy(trace)
    ev = moved.events
    i = next(i for i in range(len(ev)) if moved.kind_of(ev.kind[i]) is TraceKind.FIXUP_DONE
             and ev.lane[i] == 2)
    tile, was = ev.tile[i], ev.block[i]
    ev.block[i] = was + 1
    assert trace_check.check_stream_k(moved, model) == [
        f"lane 2: tile {tile} finished by block {was + 1}, the model says {was}"]


def test_the_checks_say_when_a_level_has_nothing_to_check():
    simt = trace_schedule.schedule(registry.get("register_2d"), 256, 256, 64, SMS)
    trace = decoding.of(trace_schedule.synthetic_trace(simt, SMS, trace_schedule.Pace(
        blocks_per_sm=2)))
    assert "not persistent" in trace_check.check_persistent(trace, simt)[0]
    assert "no stream-K" in trace_check.check_stream_k(trace, simt)[0]
    # the SIMT level's tiles are one per block, its walk index the block's
    assert trace_check.tiles_by_block(trace, 0) == {b: [(b, 0)] for b in range(simt.grid)}


def test_fp8_deep_schedule_uses_its_shrunk_grid_round_robin():
    model = trace_schedule.schedule(registry.get("fp8_deep"), 4096, 4096, 4096, SMS)
    assert model.grid == 128 and model.tiles == 16 * 32  # 256 x 128 tiles, 4 whole waves
    assert all(len(p) == 4 for p in model.pieces) and model.stream_k == 0
    assert model.tiles_of(3) == [(3, 0), (131, 0), (259, 0), (387, 0)]

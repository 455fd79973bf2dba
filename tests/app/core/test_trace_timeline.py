"""What the Timeline view draws, from a trace (app/core/trace_timeline.py): tile pieces on
SM lanes in the model's order, idle SMs, the tail, each lane's phases between its events,
and Chrome trace JSON that Perfetto reads."""

from __future__ import annotations

import json

import numpy as np

from gemmscope.app.core import trace_timeline as tt
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import trace_schedule
from gemmscope.kernels.protocol import decoding, trace_buffer
from gemmscope.kernels.protocol.trace_records import KIND_NAMES, Trace


def _k(name: str) -> int:
    return KIND_NAMES.index(name)


def _hand_trace(rows: list[tuple[int, int, str, int, int, int, int]], blocks: int,
                lanes: int, sm_count: int) -> Trace:
    """(block, lane, kind, tile, k, sm, t_ns) rows into a trace, through the buffer."""
    cols = list(zip(*rows, strict=True))
    a = [np.array(c) for c in cols]
    kind = np.array([_k(x) for x in cols[2]])
    counts, recs = trace_buffer.encode(a[0], a[1], kind, a[3], a[4], a[5], a[6] + 10**9,
                                       (a[6] + 10**9) * 2, lanes, blocks, 64,
                                       device_like=False)  # exact times, however short
    event = {"type": "trace", "t": 0.0, "level": "wgmma_tma", "M": 256, "N": 256, "K": 128,
             "grid": blocks, "lanes_per_block": lanes, "sm_count": sm_count, "tiles": 3,
             **trace_buffer.decode(counts, recs, lanes_per_block=lanes)}
    trace = decoding.of(event)
    assert isinstance(trace, Trace)
    return trace


def test_a_consumer_lane_phases_run_from_event_to_event():
    rows = [(0, 0, "lane_start", -1, 0, 5, 0), (0, 0, "load_issued", 0, 0, 5, 2),
            (0, 0, "load_issued", 0, 1, 5, 6), (0, 0, "lane_end", -1, 0, 5, 40),
            (0, 1, "tile_begin", 0, 0, 5, 1), (0, 1, "data_ready", 0, 0, 5, 10),
            (0, 1, "mma_done", 0, 0, 5, 30), (0, 1, "data_ready", 0, 1, 5, 35),
            (0, 1, "mma_done", 0, 1, 5, 60), (0, 1, "tile_end", 0, 2, 5, 70)]
    tl = tt.build(_hand_trace(rows, 1, 2, 8))
    got = sorted((s.lane, s.start_ns, s.end_ns, s.phase) for s in tl.phases[5])
    P = tt.Phase
    # the producer: its first copy after its start, then its second; the consumer: waits
    # until each stage is full, multiplies until its products are done, stores
    assert got == [(0, 0, 2, P.STAGE_WAIT), (0, 2, 6, P.STAGE_WAIT), (1, 1, 10, P.WAIT),
                   (1, 10, 30, P.MATH), (1, 30, 35, P.WAIT), (1, 35, 60, P.MATH),
                   (1, 60, 70, P.EPILOGUE)]
    assert tl.lane_names == {0: "producer", 1: "consumer 1"}
    assert tl.idle_sms == [0, 1, 2, 3, 4, 6, 7]
    assert [(p.tile, p.start_ns, p.end_ns) for p in tl.pieces] == [(0, 1, 70)]


def test_a_stream_k_contributor_piece_ends_at_its_next_tile_and_its_handing_on_is_fixup():
    rows = [(0, 0, "load_issued", 1, 0, 2, 0), (0, 0, "load_issued", 2, 0, 2, 1),
            (0, 1, "tile_begin", 1, 3, 2, 0), (0, 1, "data_ready", 1, 3, 2, 5),
            (0, 1, "mma_done", 1, 3, 2, 15), (0, 1, "fixup_begin", 1, 3, 2, 16),
            (0, 1, "tile_begin", 2, 0, 2, 25), (0, 1, "data_ready", 2, 0, 2, 26),
            (0, 1, "mma_done", 2, 0, 2, 40), (0, 1, "fixup_begin", 2, 0, 2, 41),
            (0, 1, "fixup_done", 2, 0, 2, 50), (0, 1, "tile_end", 2, 2, 2, 55)]
    tl = tt.build(_hand_trace(rows, 1, 2, 4))
    assert [(p.tile, p.k0, p.start_ns, p.end_ns, p.wave) for p in tl.pieces] == [
        (1, 3, 0, 25, 0), (2, 0, 25, 55, 1)]
    fix = [(s.start_ns, s.end_ns) for s in tl.phases[2] if s.phase is tt.Phase.FIXUP]
    assert fix == [(16, 25), (41, 50)]


def test_a_persistent_synthetic_trace_puts_the_models_tiles_on_each_sm_in_waves():
    model = trace_schedule.schedule(registry.get("wgmma_tma"), 2048, 4096, 512, 132)
    trace = decoding.of(trace_schedule.synthetic_trace(model, 132, seed=4))
    tl = tt.build(trace)
    by_block: dict[int, list[int]] = {}
    for p in sorted(tl.pieces, key=lambda p: p.start_ns):
        by_block.setdefault(p.block, []).append(p.tile)
        assert p.sm == trace.block_sm[p.block]
    assert by_block == {b: [t for t, _ in model.tiles_of(b)] for b in range(model.grid)}
    assert tl.waves() == max(len(ps) for ps in model.pieces) and tl.idle_sms == []
    ends = {}
    for sm, _start, end in tl.block_spans.values():
        ends[sm] = max(ends.get(sm, 0), end)
    assert tl.tail_start_ns == min(ends.values()) and tl.makespan_ns == max(ends.values())


def test_fewer_tiles_than_sms_leaves_idle_sms_said():
    model = trace_schedule.schedule(registry.get("wgmma_tma"), 512, 512, 256, 132)
    tl = tt.build(decoding.of(trace_schedule.synthetic_trace(model, 132)))
    # 4 tile rows of 128 by 3 columns of 232 (the width bf16_tile_width picks here: one
    # wave either way, and narrower tiles end sooner)
    assert model.params["BN"] == 232 and model.grid == 12 and len(tl.idle_sms) == 132 - 12
    assert set(tl.idle_sms).isdisjoint(sm for sm, _, _ in tl.block_spans.values())


def test_simt_blocks_on_one_sm_are_numbered_by_wave():
    model = trace_schedule.schedule(registry.get("register_2d"), 512, 512, 64, 4)
    tl = tt.build(decoding.of(trace_schedule.synthetic_trace(model, 4)))
    assert len(tl.pieces) == 16 and tl.waves() == 4  # 16 blocks, 4 SMs, one at a time
    for sm in range(4):
        mine = sorted((p for p in tl.pieces if p.sm == sm), key=lambda p: p.start_ns)
        assert [p.wave for p in mine] == list(range(len(mine)))
    assert {s.phase for spans in tl.phases.values() for s in spans} >= {tt.Phase.LOAD,
                                                                       tt.Phase.MATH}


def test_a_level_that_stages_no_k_tiles_shows_each_block_as_one_run_not_an_epilogue():
    model = trace_schedule.schedule(registry.get("naive"), 256, 256, 64, 4)
    assert not model.staged
    trace = decoding.of(trace_schedule.synthetic_trace(model, 4))
    assert isinstance(trace, Trace)
    kinds = {trace.kind_of(k) for k in trace.events.kind}
    assert kinds == {tt.TraceKind.TILE_BEGIN, tt.TraceKind.TILE_END}  # begin and end only
    tl = tt.build(trace)
    spans = [s for spans in tl.phases.values() for s in spans]
    assert len(spans) == model.grid and {s.phase for s in spans} == {tt.Phase.RUN}
    # a staged level's tile still ends in its epilogue
    staged = tt.build(decoding.of(trace_schedule.synthetic_trace(
        trace_schedule.schedule(registry.get("smem_tiled"), 256, 256, 64, 4), 4)))
    phases = {s.phase for spans in staged.phases.values() for s in spans}
    assert tt.Phase.EPILOGUE in phases and tt.Phase.RUN not in phases


def test_chrome_trace_json_names_each_sm_and_holds_an_event_per_piece_and_phase():
    model = trace_schedule.schedule(registry.get("wgmma_stream_k"), 1024, 1024, 512, 16)
    tl = tt.build(decoding.of(trace_schedule.synthetic_trace(model, 16)))
    doc = json.loads(json.dumps(tl.chrome_trace()))
    x = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(x) == len(tl.pieces) + sum(len(s) for s in tl.phases.values())
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in x)
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {sm: f"SM {sm}" for sm in {p.sm for p in tl.pieces}}
    tile0 = next(e for e in x if e["cat"] == "tile")
    piece = next(p for p in tl.pieces if p.sm == tile0["pid"]
                 and p.start_ns / 1000 == tile0["ts"])
    assert tile0["name"] == f"tile {piece.tile}" and tile0["args"]["block"] == piece.block
    assert doc["otherData"]["measured"] is False  # synthetic: said in the file too


def test_describe_names_block_tile_sm_and_times():
    p = tt.Piece(sm=7, block=3, tile=131, k0=16, start_ns=1500, end_ns=4000, wave=1)
    model = trace_schedule.schedule(registry.get("wgmma_tma"), 512, 512, 256, 132)
    tl = tt.build(decoding.of(trace_schedule.synthetic_trace(model, 132)))
    assert tl.describe_piece(p) == ("block 3 · tile 131 from K step 16 · SM 7 · "
                                    "1.50–4.00 µs (2.50 µs) · wave 2")

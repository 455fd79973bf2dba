"""Issue 46 item 4: a trace is one bounded, typed event. The runner decodes the trace
build's buffer once (protocol.trace_buffer); readers decode the event into its record
(protocol.trace_records) and trust it after."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemmscope.kernels.protocol import decoding, events, recording, trace_buffer
from gemmscope.kernels.protocol.events import ProtocolError
from gemmscope.kernels.protocol.trace_kinds import (
    STAGE_EVERY,
    sample_window,
    sampled_steps,
    stage_sampled,
)
from gemmscope.kernels.protocol.trace_records import (
    KIND_NAMES,
    MAX_TRACE_EVENTS,
    STAGE_KINDS,
    Trace,
    TraceKind,
)

DR, MD = (KIND_NAMES.index(k) for k in ("data_ready", "mma_done"))
TB, TE = KIND_NAMES.index("tile_begin"), KIND_NAMES.index("tile_end")


def _events(blocks: int = 4, steps: int = 6, lanes: int = 2, step_ns: int = 3137,
            tiles: int = 1):
    """Each block on SM 10 + block, each lane ``tiles`` tiles of a tile_begin,
    data_ready / mma_done per K step, then a tile_end; times exact, in ns."""
    rows = []
    for b in range(blocks):
        for lane in range(lanes):
            t = 5_000 * b + 37 * lane
            for i in range(tiles):
                tile = b + blocks * i
                rows.append((b, lane, TB, tile, 0, 10 + b, t))
                for ks in range(steps):
                    rows.append((b, lane, DR, tile, ks, 10 + b, t + step_ns * (2 * ks + 1)))
                    rows.append((b, lane, MD, tile, ks, 10 + b, t + step_ns * (2 * ks + 2)))
                rows.append((b, lane, TE, tile, steps, 10 + b, t + step_ns * (2 * steps + 3)))
                t += step_ns * (2 * steps + 4) + (b + 7 * i) * 7919 % 997  # uneven gaps
    return {n: np.array(c, np.int64) for n, c in
            zip(("block", "lane", "kind", "tile", "k", "sm", "t"),
                zip(*rows, strict=True), strict=True)}


def _buffer(ev, timer_step: int = 1, cap: int = 64, lanes: int = 2, blocks: int = 4,
            base: int = 10_000_000):
    ns = ev["t"] + base
    gt = ns // timer_step * timer_step
    clock = (ns * 2) + ev["sm"] * 12_345  # 2 cycles per ns; each SM's clock its own start
    return trace_buffer.encode(ev["block"], ev["lane"], ev["kind"], ev["tile"], ev["k"],
                               ev["sm"], gt, clock, lanes, blocks, cap)


def test_buffer_decodes_to_every_event_with_its_block_lane_tile_step_and_sm():
    ev = _events()
    counts, recs = _buffer(ev)
    out = trace_buffer.decode(counts, recs, lanes_per_block=2)
    got = out["events"]
    assert out["recorded"] == out["wanted"] == len(ev["t"]) and out["full_lanes"] == 0
    want = sorted(zip(ev["t"] - ev["t"].min(), ev["block"], ev["lane"], ev["kind"],
                      ev["tile"], ev["k"], strict=True))
    assert sorted(zip(got["t_ns"], got["block"], got["lane"], got["kind"], got["tile"], got["k"],
                      strict=True)) == [tuple(int(x) for x in w) for w in want]
    assert got["t_ns"] == sorted(got["t_ns"])  # in time order
    assert out["block_sm"] == [10, 11, 12, 13]
    assert out["ns_per_cycle"] == pytest.approx(0.5, rel=1e-6)


# %globaltimer on the H200 counts ns since the Unix epoch: about 1.8e18 in 2026, past 2^60,
# where a float64 holds only every 256th ns
EPOCH_NS = 1_796_000_000_000_000_000


@pytest.mark.parametrize("timer_step", [1, 1000])
def test_times_keep_their_nanoseconds_on_a_globaltimer_counting_from_the_epoch(timer_step):
    """The decoded times are as fine as the clock: not rounded to the 256 ns that a
    float64 keeps of an epoch-sized timer (the bundled recording's traces of 2026-12-03
    had every time a multiple of 256 ns)."""
    ev = _events(blocks=4, steps=5, tiles=8)
    counts, recs = _buffer(ev, timer_step=timer_step, cap=128, base=EPOCH_NS)
    out = trace_buffer.decode(counts, recs, lanes_per_block=2)
    t = np.array(out["events"]["t_ns"])
    assert out["timer"] == "globaltimer+clock64"
    assert np.mean(t % 256 == 0) < 0.1  # the true times are spread over every ns
    if timer_step == 1:  # an exact timer: every event exactly where it was
        want = sorted(int(x) for x in ev["t"] - ev["t"].min())
        assert sorted(t.tolist()) == want


def test_coarse_globaltimer_is_refined_by_the_sm_clock():
    """A 1 us timer step alone misplaces an event by up to 1 us; the clock64 fit places
    every event, the K-stage ones that read no timer on the device included, within a
    small fraction of that (persistent blocks: several tiles each, their begins and ends
    timed)."""
    ev = _events(blocks=4, steps=5, tiles=8)
    counts, recs = _buffer(ev, timer_step=1000, cap=128)
    out = trace_buffer.decode(counts, recs, lanes_per_block=2)
    assert out["timer"] == "globaltimer+clock64"
    got = {(b, lane, tile, k, kind): t for b, lane, tile, k, kind, t in zip(
        out["events"]["block"], out["events"]["lane"], out["events"]["tile"],
        out["events"]["k"], out["events"]["kind"], out["events"]["t_ns"], strict=True)}
    base = min(got.values())
    errors = [abs((got[(int(b), int(lane), int(tile), int(k), int(kind))] - base) - int(t))
              for b, lane, tile, k, kind, t in zip(ev["block"], ev["lane"], ev["tile"],
                                                   ev["k"], ev["kind"], ev["t"], strict=True)]
    coarse = (ev["t"] + 10_000_000) // 1000 * 1000 - (ev["t"] + 10_000_000)
    assert max(abs(coarse)) > 500 and max(errors) < 150


def test_without_a_clock_fit_a_stage_event_takes_its_blocks_last_timer():
    """Events spanning too little for a slope: a K-stage event (no timer on the device)
    is placed at its block's timed event before it, never at 0 or in another block."""
    ev = _events(blocks=2, steps=2, step_ns=100)
    counts, recs = _buffer(ev, blocks=2)
    out = trace_buffer.decode(counts, recs, lanes_per_block=2)
    assert out["timer"] == "globaltimer" and out["ns_per_cycle"] is None
    got = out["events"]
    begin = {(b, lane): t for b, lane, kind, t in zip(got["block"], got["lane"], got["kind"],
                                                      got["t_ns"], strict=True) if kind == TB}
    for b, lane, kind, t in zip(got["block"], got["lane"], got["kind"], got["t_ns"],
                                strict=True):
        if kind in (DR, MD):
            assert min(begin[(b, 0)], begin[(b, 1)]) <= t < begin[(b, lane)] + 1000
    assert out["block_sm"] == [10, 11]  # the stage events' SMs came from their blocks


def test_stage_events_read_no_timer_sm_or_block_on_the_device_and_decode_with_them():
    ev = _events(blocks=2, steps=3)
    counts, recs = _buffer(ev, blocks=2)
    rows = np.concatenate([recs[lane, :n] for lane, n in enumerate(counts)])
    kinds = rows[:, 4] & 0xFF
    stage = np.isin(kinds, [DR, MD])
    assert (rows[stage, 0] == 0).all() and (rows[stage, 4] >> 16 == 0xFFFF).all()
    assert (rows[stage, 7] == trace_buffer.NO_BLOCK).all()  # the block: its slot's
    assert (rows[~stage, 0] != 0).all()
    out = trace_buffer.decode(counts, recs, lanes_per_block=2)
    sms = {out["block_sm"][b] for b in out["events"]["block"]}
    assert sms == {10, 11}
    got = sorted(zip(out["events"]["block"], out["events"]["lane"], out["events"]["kind"],
                     out["events"]["k"], strict=True))
    assert got == sorted(zip(ev["block"].tolist(), ev["lane"].tolist(), ev["kind"].tolist(),
                             ev["k"].tolist(), strict=True))


def test_tile_events_written_with_the_clock_only_decode_to_their_block_sm_and_time():
    """fp8_deep's trace build writes its tiles' begin and end as it writes K-stage events
    (no timer, SM or block: a %globaltimer read per tile cost its launch 1.8 points);
    each lane's start and end still read the timer, and place them."""
    ev = _events(blocks=3, steps=4, tiles=2)
    ls, le = KIND_NAMES.index("lane_start"), KIND_NAMES.index("lane_end")
    extra = {n: [] for n in ev}
    for b in range(3):
        for lane in range(2):
            mine = (ev["block"] == b) & (ev["lane"] == lane)
            for kind, at in ((ls, ev["t"][mine].min() - 50), (le, ev["t"][mine].max() + 50)):
                for n, v in zip(("block", "lane", "kind", "tile", "k", "sm", "t"),
                                (b, lane, kind, -1, 0, 10 + b, at), strict=True):
                    extra[n].append(v)
    ev = {n: np.concatenate([ev[n], np.array(extra[n], np.int64)]) for n in ev}
    order = np.lexsort((ev["t"], ev["lane"], ev["block"]))  # each lane's events in order
    ev = {n: v[order] for n, v in ev.items()}
    counts, recs = _buffer(ev, blocks=3)
    tiles = np.isin(recs[..., 4] & 0xFF, [TB, TE]) & (np.arange(recs.shape[1])[None, :]
                                                      < counts[:, None])
    recs[tiles, 0:2] = 0  # as the device writes them
    recs[tiles, 4] = (recs[tiles, 4] & 0xFFFF) | trace_buffer.NO_SM << 16
    recs[tiles, 7] = trace_buffer.NO_BLOCK
    out = trace_buffer.decode(counts, recs, lanes_per_block=2)
    got = out["events"]
    assert out["block_sm"] == [10, 11, 12]
    want = sorted(zip(ev["t"] - ev["t"].min(), ev["block"], ev["lane"], ev["kind"],
                      ev["tile"], strict=True))
    assert sorted(zip(got["t_ns"], got["block"], got["lane"], got["kind"], got["tile"],
                      strict=True)) == [tuple(int(x) for x in w) for w in want]


def test_a_full_lane_is_said_and_keeps_its_first_events():
    ev = _events(blocks=1, steps=20, lanes=1)
    counts, recs = _buffer(ev, cap=8, lanes=1, blocks=1)
    assert recs.shape == (1, 8, trace_buffer.RECORD_WORDS)  # nothing past the lane's slots
    out = trace_buffer.decode(counts, recs, lanes_per_block=1)
    assert out["full_lanes"] == 1 and out["recorded"] == 8 and out["wanted"] == len(ev["t"])
    assert out["events"]["kind"][:3] == [TB, DR, MD]


def test_over_budget_the_stage_events_of_whole_sms_are_left_out_and_named():
    ev = _events(blocks=4, steps=6)
    counts, recs = _buffer(ev)
    out = trace_buffer.decode(counts, recs, budget=68, lanes_per_block=2)
    kinds, sms = out["events"]["kind"], [out["block_sm"][b] for b in out["events"]["block"]]
    assert len(kinds) <= 68
    assert kinds.count(TB) == 8  # every tile event kept
    stage = {KIND_NAMES.index(k) for k in STAGE_KINDS}
    kept_sms = {sm for kind, sm in zip(kinds, sms, strict=True) if kind in stage}
    assert kept_sms == set(out["stage_sms"]) and out["stage_sms"] == [10, 11]
    for sm in out["stage_sms"]:  # whole SMs: each kept SM has all its 24 stage events
        assert sum(1 for kind, s in zip(kinds, sms, strict=True) if kind in stage and s == sm) == 24


def _line(**over) -> bytes:
    ev = _events(blocks=2, steps=2)
    counts, recs = _buffer(ev, blocks=2)
    event = {"type": "trace", "t": 3.0, "level": "wgmma_tma", "M": 256, "N": 256, "K": 128,
             "grid": 2, "lanes_per_block": 2,
             **trace_buffer.decode(counts, recs, lanes_per_block=2), **over}
    return events.dumps(event).encode()


def test_trace_event_decodes_into_its_record_with_kinds_by_name():
    record = decoding.decode(_line())
    assert isinstance(record, Trace)
    assert len(record.events) == 2 * 2 * 6 and record.block_sm == [10, 11]
    assert record.kind_of(record.events.kind[0]) is TraceKind.TILE_BEGIN
    assert record.kind_of(99) is None


def test_columns_of_unequal_length_keep_the_events_all_describe():
    line = _line()
    import json

    obj = json.loads(line)
    obj["events"]["t_ns"] = obj["events"]["t_ns"][:5]
    record = decoding.decode(json.dumps(obj))
    assert isinstance(record, Trace)
    assert len(record.events) == 5 and len(record.events.block) == 5


def test_a_column_past_the_bound_is_cut_to_it():
    import json

    obj = json.loads(_line())
    obj["events"] = {n: [0] * (MAX_TRACE_EVENTS + 5) for n in obj["events"]}
    record = decoding.decode(json.dumps(obj), lineno=7)
    assert isinstance(record, Trace) and len(record.events) == MAX_TRACE_EVENTS


def test_a_trace_without_its_events_is_refused_naming_them():
    import json

    obj = json.loads(_line())
    obj["events"] = "many"
    with pytest.raises(ProtocolError, match=r"7: trace event.*events"):
        decoding.decode(json.dumps(obj), lineno=7)


def test_a_recording_with_a_trace_reads_back_and_an_old_reader_would_pass_it_by(tmp_path):
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "t": 0.0, "protocol": events.PROTOCOL_VERSION,
              "device": None, "created": "2026-12-02T00:00:00Z",
              "gemmscope": {"version": "0"}, "levels": {}}
    path.write_bytes(events.dumps(header).encode() + b"\n" + _line() + b"\n")
    session = recording.read_session(path)
    (trace,) = [e for e in session.events if isinstance(e, Trace)]
    assert trace.level == "wgmma_tma" and len(trace.events) == 24
    assert not session.skipped


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(STAGE_EVERY), st.integers(0, 5000), st.integers(0, 300))
def test_sampled_steps_counts_the_steps_the_build_records(every, k0, n):
    """The host sizes each lane's slots by this count; the device records by trace.cuh's
    rule, which stage_sampled states: the two agree on every range."""
    assert sampled_steps(k0, k0 + n, every) == sum(stage_sampled(k, every)
                                                   for k in range(k0, k0 + n))


@pytest.mark.parametrize("every", [4, 8, 64])
def test_sampling_keeps_windows_of_three_steps_with_each_pieces_first_and_last(every):
    kept = [k for k in range(4 * every) if stage_sampled(k, every)]
    assert kept[0] == 0 and every - 1 in kept  # the first step, and the last of a piece
    runs = [kept[i:i + 3] for i in range(1, len(kept), 3)]  # after step 0: windows of three
    assert all(r == list(range(r[0], r[0] + 3)) for r in runs if len(r) == 3)
    assert all(len({sample_window(k, every) for k in r}) == 1 for r in runs)
    assert all(stage_sampled(k, 1) for k in range(100))

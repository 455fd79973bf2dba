"""Issue 46 item 4: a trace is one bounded, typed event. The runner decodes the trace
build's buffer once (protocol.trace_buffer); readers decode the event into its record
(protocol.trace_records) and trust it after."""

from __future__ import annotations

import numpy as np
import pytest

from gemmscope.kernels.protocol import decoding, events, recording, trace_buffer
from gemmscope.kernels.protocol.events import ProtocolError
from gemmscope.kernels.protocol.trace_records import (
    KIND_NAMES,
    MAX_TRACE_EVENTS,
    STAGE_KINDS,
    Trace,
    TraceKind,
)

DR, MD = (KIND_NAMES.index(k) for k in ("data_ready", "mma_done"))
TB = KIND_NAMES.index("tile_begin")


def _events(blocks: int = 4, steps: int = 6, lanes: int = 2, step_ns: int = 3137):
    """Each block on SM 10 + block, each lane a tile_begin then data_ready / mma_done
    per K step; times exact, in ns."""
    rows = []
    for b in range(blocks):
        for lane in range(lanes):
            t = 5_000 * b + 37 * lane
            rows.append((b, lane, TB, b, 0, 10 + b, t))
            for ks in range(steps):
                rows.append((b, lane, DR, b, ks, 10 + b, t + step_ns * (2 * ks + 1)))
                rows.append((b, lane, MD, b, ks, 10 + b, t + step_ns * (2 * ks + 2)))
    return {n: np.array(c, np.int64) for n, c in
            zip(("block", "lane", "kind", "tile", "k", "sm", "t"),
                zip(*rows, strict=True), strict=True)}


def _buffer(ev, timer_step: int = 1, cap: int = 64, lanes: int = 2, blocks: int = 4):
    ns = ev["t"] + 10_000_000
    gt = ns // timer_step * timer_step
    clock = (ns * 2) + ev["sm"] * 12_345  # 2 cycles per ns; each SM's clock its own start
    return trace_buffer.encode(ev["block"], ev["lane"], ev["kind"], ev["tile"], ev["k"],
                               ev["sm"], gt, clock, lanes, blocks, cap)


def test_buffer_decodes_to_every_event_with_its_block_lane_tile_step_and_sm():
    ev = _events()
    counts, recs = _buffer(ev)
    out = trace_buffer.decode(counts, recs)
    got = out["events"]
    assert out["recorded"] == out["wanted"] == len(ev["t"]) and out["full_lanes"] == 0
    want = sorted(zip(ev["t"] - ev["t"].min(), ev["block"], ev["lane"], ev["kind"],
                      ev["tile"], ev["k"], strict=True))
    assert sorted(zip(got["t_ns"], got["block"], got["lane"], got["kind"], got["tile"], got["k"],
                      strict=True)) == [tuple(int(x) for x in w) for w in want]
    assert got["t_ns"] == sorted(got["t_ns"])  # in time order
    assert out["block_sm"] == [10, 11, 12, 13]
    assert out["ns_per_cycle"] == pytest.approx(0.5, rel=1e-6)


def test_coarse_globaltimer_is_refined_by_the_sm_clock():
    """A 1 us timer step alone misplaces an event by up to 1 us; the clock64 fit places
    every event within a small fraction of that."""
    ev = _events(blocks=4, steps=30)
    counts, recs = _buffer(ev, timer_step=1000)
    out = trace_buffer.decode(counts, recs)
    assert out["timer"] == "globaltimer+clock64"
    got = {(b, lane, k, kind): t for b, lane, k, kind, t in zip(
        out["events"]["block"], out["events"]["lane"], out["events"]["k"],
        out["events"]["kind"], out["events"]["t_ns"], strict=True)}
    base = min(got.values())
    errors = [abs((got[(int(b), int(lane), int(k), int(kind))] - base) - int(t))
              for b, lane, k, kind, t in zip(ev["block"], ev["lane"], ev["k"], ev["kind"],
                                             ev["t"], strict=True)]
    coarse = (ev["t"] + 10_000_000) // 1000 * 1000 - (ev["t"] + 10_000_000)
    assert max(abs(coarse)) > 500 and max(errors) < 150


def test_a_full_lane_is_said_and_keeps_its_first_events():
    ev = _events(blocks=1, steps=20, lanes=1)
    counts, recs = _buffer(ev, cap=8, lanes=1, blocks=1)
    assert recs.shape == (1, 8, trace_buffer.RECORD_WORDS)  # nothing past the lane's slots
    out = trace_buffer.decode(counts, recs)
    assert out["full_lanes"] == 1 and out["recorded"] == 8 and out["wanted"] == len(ev["t"])
    assert out["events"]["kind"][:3] == [TB, DR, MD]


def test_over_budget_the_stage_events_of_whole_sms_are_left_out_and_named():
    ev = _events(blocks=4, steps=6)
    counts, recs = _buffer(ev)
    out = trace_buffer.decode(counts, recs, budget=60)
    kinds, sms = out["events"]["kind"], [out["block_sm"][b] for b in out["events"]["block"]]
    assert len(kinds) <= 60
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
             "grid": 2, "lanes_per_block": 2, **trace_buffer.decode(counts, recs), **over}
    return events.dumps(event).encode()


def test_trace_event_decodes_into_its_record_with_kinds_by_name():
    record = decoding.decode(_line())
    assert isinstance(record, Trace)
    assert len(record.events) == 2 * 2 * 5 and record.block_sm == [10, 11]
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
    assert trace.level == "wgmma_tma" and len(trace.events) == 20
    assert not session.skipped

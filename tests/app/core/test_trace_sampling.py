"""Issue 46 item 2: a trace build that samples its K steps (3 in every N, trace_kinds)
costs less, and the timeline draws only phases it measured: every phase of a sampled
trace is a phase of the full trace of the same launch, none spans steps left out."""

from __future__ import annotations

import numpy as np
import pytest

from gemmscope.app.core import trace_timeline as tt
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import trace_schedule
from gemmscope.kernels.protocol import decoding, trace_buffer
from gemmscope.kernels.protocol.trace_kinds import STAGE_KINDS, stage_sampled
from gemmscope.kernels.protocol.trace_records import KIND_NAMES, Trace

STAGE = {KIND_NAMES.index(k.value) for k in STAGE_KINDS}


def _trace(rows: list[tuple[int, int, str, int, int, int]], every: int) -> Trace:
    """(block, lane, kind, tile, k, t_ns) rows of one block on SM 3, through the buffer,
    keeping the K-stage events of the steps a build sampling ``every`` records."""
    kept = [r for r in rows if r[2] not in {k.value for k in STAGE_KINDS}
            or stage_sampled(r[4], every)]
    a = [np.array(c) for c in zip(*kept, strict=True)]
    kind = np.array([KIND_NAMES.index(x) for x in a[2]])
    t = a[5] + 10**9
    counts, recs = trace_buffer.encode(a[0], a[1], kind, a[3], a[4], np.full(len(t), 3), t,
                                       t * 2, 2, 1, 1024, device_like=False)
    event = {"type": "trace", "t": 0.0, "level": "mma_tma", "M": 256, "N": 256, "K": 2048,
             "grid": 1, "lanes_per_block": 2, "sm_count": 8, "tiles": 2, "stage_every": every,
             **trace_buffer.decode(counts, recs, lanes_per_block=2)}
    trace = decoding.of(event)
    assert isinstance(trace, Trace)
    return trace


def _pipelined(tiles: int, ksteps: int, wait_begin: bool = True
               ) -> list[tuple[int, int, str, int, int, int]]:
    """mma_tma's order of events: the producer's copies, and a consumer that multiplies
    step k's first fragments, begins its wait for step k + 1's stage (``wait_begin``:
    said by an event), and only then finishes step k's products (so a step's events
    interleave with its neighbours'); each phase a different length."""
    rows: list[tuple[int, int, str, int, int, int]] = [(0, 0, "lane_start", -1, 0, 0)]
    t = 1
    for tile in range(tiles):
        for k in range(ksteps):
            t += 3 + (k % 5)
            rows.append((0, 0, "load_issued", tile, k, t))
    rows.append((0, 0, "lane_end", -1, 0, t + 1))
    t = 2
    rows += [(0, 1, "lane_start", -1, 0, t), (0, 1, "data_ready", 0, 0, t + 5)]
    t += 5
    for tile in range(tiles):
        t += 1
        rows.append((0, 1, "tile_begin", tile, 0, t))
        for k in range(ksteps):
            last = tile == tiles - 1 and k == ksteps - 1
            if not last:  # the next step's wait (perhaps the next tile's step 0)
                nxt = (tile, k + 1) if k + 1 < ksteps else (tile + 1, 0)
                t += 20  # the step's first fragments multiplied
                if wait_begin:
                    rows.append((0, 1, "wait_begin", nxt[0], nxt[1], t))
                t += 2 + (k % 3)
                rows.append((0, 1, "data_ready", nxt[0], nxt[1], t))
            t += 7 + (k % 4)
            rows.append((0, 1, "mma_done", tile, k, t))
        t += 11
        rows.append((0, 1, "tile_end", tile, ksteps, t))
    rows.append((0, 1, "lane_end", -1, 0, t + 1))
    return rows


def _spans(trace: Trace) -> set[tuple[int, int, tt.Phase, int, int]]:
    return {(s.block, s.lane, s.phase, s.start_ns, s.end_ns)
            for spans in tt.build(trace).phases.values() for s in spans}


@pytest.mark.parametrize("wait_begin", [True, False])
@pytest.mark.parametrize("every", [4, 8, 16])
def test_a_pipelined_levels_sampled_phases_are_phases_of_its_full_trace(every, wait_begin):
    rows = _pipelined(tiles=2, ksteps=32, wait_begin=wait_begin)
    full, sampled = _spans(_trace(rows, 1)), _spans(_trace(rows, every))
    assert sampled and sampled <= full
    got = {p for *_, p, _, _ in sampled}
    # each window measures the consumer's wait and math and the producer's wait
    assert {tt.Phase.WAIT, tt.Phase.MATH, tt.Phase.STAGE_WAIT, tt.Phase.EPILOGUE} <= got
    # and fewer: the steps left out have none
    assert len(sampled) < len(full)


def test_where_the_level_says_its_wait_began_the_wait_holds_no_math():
    """mma_tma multiplies a step's first fragments before it waits for the next stage:
    without the wait_begin event that math counts as waiting; with it, every wait is the
    barrier's alone (2 to 4 ns here) and the math is math."""
    for every in (1, 8):
        with_mark = _trace(_pipelined(tiles=1, ksteps=32), every)
        waits = [e - s for _, lane, p, s, e in _spans(with_mark) if p is tt.Phase.WAIT
                 and lane == 1]
        assert waits and max(waits) <= 5
    without = _trace(_pipelined(tiles=1, ksteps=32, wait_begin=False), 1)
    assert max(e - s for _, lane, p, s, e in _spans(without)
               if p is tt.Phase.WAIT and lane == 1) >= 20


def test_without_the_neighbour_rule_a_sampled_trace_would_span_steps_left_out():
    """The rule is what keeps the phases honest: the lane's previous event alone gives
    spans over steps the build did not record."""
    import msgspec

    sampled = _trace(_pipelined(tiles=1, ksteps=32), 8)
    trace = msgspec.structs.replace(sampled, stage_every=1)  # read as if none were left out
    assert not _spans(trace) <= _spans(_trace(_pipelined(tiles=1, ksteps=32), 1))


@pytest.mark.parametrize("level_id", ["register_2d", "wgmma_tma", "fp8_deep"])
def test_a_synthetic_trace_sampled_draws_a_subset_of_the_full_ones_phases(level_id):
    model = trace_schedule.schedule(registry.get(level_id), 1024, 1024, 2048, 132)
    full = trace_schedule.synthetic_trace(model, 132, seed=3, detail_sms=4)
    part = trace_schedule.synthetic_trace(model, 132, seed=3, detail_sms=4, stage_every=8)
    a, b = decoding.of(full), decoding.of(part)
    assert isinstance(a, Trace) and isinstance(b, Trace) and b.stage_every == 8
    ks = [k for kind, k in zip(b.events.kind, b.events.k, strict=True) if kind in STAGE]
    assert ks and all(stage_sampled(k, 8) for k in ks)
    assert len(b.events) < len(a.events)
    assert _spans(b) and _spans(b) <= _spans(a)


def test_the_timeline_view_says_the_steps_were_sampled(qtbot):
    from gemmscope.app.core.store import SessionStore
    from gemmscope.app.views.timeline import TimelineView
    from gemmscope.kernels.ladder.shape import Shape

    shape = Shape(1024, 1024, 2048)
    notes = {}
    for every in (1, 16):
        model = trace_schedule.schedule(registry.get("wgmma_tma"), 1024, 1024, 2048, 132)
        event = trace_schedule.synthetic_trace(model, 132, seed=1, detail_sms=2,
                                               stage_every=every)
        event["synthetic"] = False  # as the trace build's event: measured
        store = SessionStore()
        store.handle(decoding.of(event))
        store.view.set(shape=shape)
        view = TimelineView()
        qtbot.addWidget(view)
        view.bind(store)
        view.set_level("wgmma_tma")
        view.show()
        qtbot.waitExposed(view)
        notes[every] = view.notes.text()
    # said before the lane time it qualifies (a narrow window elides the line's end)
    assert "K steps sampled, 3 in every 16: their phases only; lane time:" in notes[16]
    assert "sampled" not in notes[1]

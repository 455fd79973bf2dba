from __future__ import annotations

import numpy as np
import pytest
import synthetic_session as syn

from gemmscope.app.core.levels import catalog_from_header
from gemmscope.app.core.replay import ReplayClock, Speed, timeline
from gemmscope.app.core.store import Change, SessionStore, Shape
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.recording import read_session
from gemmscope.kernels.protocol.timeline import Timeline


def fed_store(events) -> SessionStore:
    """A store fed as a reader feeds it: every event placed on the session's time axis."""
    store = SessionStore()
    line = Timeline()
    for ev in events:
        store.handle(line.place(of(ev)))
    return store


def test_store_holds_ladder_from_synthetic_session(synthetic_file):
    session = read_session(synthetic_file)
    store = fed_store(session.events)
    assert store.header.synthetic is True
    assert [lv.id for lv in store.ladder_levels()] == list(syn.LADDER_TFLOPS)
    for level, tflops in syn.LADDER_TFLOPS.items():
        r = store.ladder_result(level)
        assert r is not None and r.shape == Shape(*syn.SHAPE)
        assert r.tflops == pytest.approx(tflops)
        ref = "cublas_fp16" if level == "wmma" else "cublas_fp32"
        want = 100 * tflops / syn.REFERENCE_TFLOPS[ref]
        assert store.row(r).pct_of_reference == pytest.approx(want)
        assert store.row(r).pct_of_peak == pytest.approx(100 * tflops / syn.PEAKS[r.precision])
    sweeps = store.sweeps()
    assert list(sweeps) == [syn.SWEEP_LEVEL]
    n, tf = sweeps[syn.SWEEP_LEVEL]
    assert list(n) == sorted(syn.SWEEP) and list(tf) == [syn.SWEEP[k] for k in sorted(syn.SWEEP)]
    errors = [m for m in store.messages if m.is_error]
    assert len(errors) == 1
    assert store.ladder_shape() == Shape(*syn.SHAPE)
    assert store.latest(syn.SWEEP_LEVEL).shape == Shape(8192, 8192, 8192)
    assert errors[0].describe() == "launch (double_buffer at 7×100×1000): synthetic launch failure"


def test_pct_of_reference_computed_when_result_lacks_it():
    events = syn.events()
    for ev in events:
        ev.pop("pct_of_reference", None)
        ev.pop("pct_of_peak", None)
    store = fed_store(events)
    r = store.ladder_result("wmma")
    row = store.row(r)
    assert row.pct_of_reference == pytest.approx(100 * 300.0 / 700.0)
    assert row.pct_of_peak == pytest.approx(100 * 300.0 / 989.0)
    assert row.reference == "cublas_fp16"  # named by the reference result it was taken from


def test_stream_ring_buffer_keeps_latest_in_order():
    store = SessionStore()
    store.stream = type(store.stream)(capacity=4)
    for i in range(10):
        store.handle(of({"type": "repeat", "t": i, "level": "naive", "M": 1, "N": 1, "K": 1,
                      "i": i, "ms": 1.0, "tflops": float(i)}))
    idx, tf = store.stream.arrays()
    assert list(idx) == [6, 7, 8, 9] and list(tf) == [6.0, 7.0, 8.0, 9.0]
    assert Change.STREAM in store.take_changes()
    assert store.take_changes() == set()


def test_catalog_from_recording_wins_over_registry():
    header = {"catalog": [{"id": "future_level", "title": "From the future", "adds": "x",
                           "precision": "fp8", "kind": "level", "order": 0}]}
    levels = catalog_from_header(of({"type": "session", "t": 0.0, "protocol": 4,
                                     "created": "x", "levels": {}, **header}))
    assert [lv.id for lv in levels] == ["future_level"]
    assert catalog_from_header(None)[0].id == "naive"


def test_replay_clock_speeds_pause_and_seek(synthetic_file):
    session = read_session(synthetic_file)
    store = SessionStore()
    clock = ReplayClock(session.events, store.handle)
    clock.speed = Speed.X16
    clock.play()
    clock.advance(0.1)  # 1.6 s of session time
    delivered = clock.next_index
    assert 0 < delivered < len(session.events)
    assert all(t <= 1.6 for t in clock.times[:delivered])
    clock.pause()
    assert clock.advance(10.0) == 0
    clock.seek(clock.duration_s / 2, reset_sink=store.reset)
    mid = store.event_count
    clock.seek(0.0, reset_sink=store.reset)
    assert store.event_count == 1  # only the header at t=0
    clock.seek(clock.duration_s, reset_sink=store.reset)
    assert store.event_count == len(session.events) > mid
    clock2 = ReplayClock(session.events, SessionStore().handle)
    clock2.set_speed(Speed.INSTANT)
    clock2.play()
    assert clock2.finished and not clock2.playing


def test_timeline_joins_runner_restarts_and_play_times_never_go_back():
    header = {"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {}}
    evs = [header, {"type": "ready", "t": 5.0}, header, {"type": "ready", "t": 1.0}]
    line = Timeline()
    placed = [line.place(of(e)) for e in evs]
    assert [e.t for e in placed] == [0.0, 5.0, 5.0, 6.0]
    assert [e.type for e in placed] == ["session", "ready", "restart", "ready"]
    assert placed[2].restarts == 1 and placed[2].runner == of(header)
    ticks = [of({"type": "ready", "t": t}) for t in (1.0, 0.5, 2.0)]
    assert timeline(ticks) == [1.0, 1.0, 2.0]


def test_second_session_header_counts_a_restart_and_keeps_results():
    events = syn.events()
    store = fed_store([*events, dict(events[0], t=0.0)])
    assert store.restarts == 1
    assert store.latest("wmma") is not None


def test_runner_starts_in_a_row_are_one_message_that_counts_them():
    """A recording appended to many times starts a runner per part: one line says how many
    in a row (not a line each, which filled the messages list on a small screen); a start
    after another message begins a line of its own."""
    events = syn.events()
    head = events[0]
    ends = max(e["t"] for e in events)
    starts = [dict(head, t=0.0) for _ in range(3)]
    error = {"type": "error", "t": 1.0, "kind": "build", "message": "bad", "level": "naive",
             "M": 64, "N": 64, "K": 64}
    store = fed_store([*events, *starts])
    assert store.restarts == 3
    restart_lines = [m for m in store.messages if "runner started again" in m.text]
    assert len(restart_lines) == 1
    assert "3 times in a row" in restart_lines[0].text and "3 so far" in restart_lines[0].text
    assert restart_lines[0].t >= ends  # the newest start's time
    store = fed_store([*events, starts[0], error, starts[1]])
    lines = [m.text for m in store.messages]
    assert sum("runner started again" in t for t in lines) == 2
    assert "in a row" not in lines[-1] and "2 so far" in lines[-1]


def test_a_level_a_later_runner_knows_joins_the_ladder_in_its_catalogs_place():
    """``record --append -l NEW`` on a file made before NEW existed: the appended runner's
    header (a restart) names it, and the ladder takes it, where its catalog puts it."""
    first = syn.header()
    first["catalog"] = [e for e in first["catalog"] if e["id"] != "wmma"]
    later = syn.header()  # the same catalog with wmma: a level added since
    store = fed_store([first, {"type": "ready", "t": 1.0}, later])
    assert store.restarts == 1
    ids = [lv.id for lv in store.levels]
    assert store.level("wmma") is not None
    want = [e["id"] for e in later["catalog"]]
    assert ids == sorted(ids, key=want.index)  # in the later catalog's order
    assert len(ids) == len(set(ids)) == len(want)
    again = fed_store([first, {"type": "ready", "t": 1.0}, first])
    assert again.level("wmma") is None  # a later header without it adds nothing


def test_telemetry_buffer_keeps_nulls_as_gaps_and_counts_reasons():
    store = SessionStore()
    store.handle(of({"type": "telemetry", "t": 1.0, "sm_clock_mhz": 1980, "power_w": None,
                  "reasons": ["GpuIdle"]}))
    store.handle(of({"type": "telemetry", "t": 2.0, "sm_clock_mhz": 1755, "power_w": 650.0,
                  "reasons": ["SwPowerCap"]}))
    t, clock = store.telemetry.arrays("sm_clock_mhz")
    assert list(t) == [1.0, 2.0] and list(clock) == [1980, 1755]
    _, power = store.telemetry.arrays("power_w")
    assert np.isnan(power[0]) and power[1] == 650.0
    assert store.telemetry.reasons_seen == {"SwPowerCap": 1}
    assert store.telemetry_status() == (True, "the recording says nothing about telemetry")


def test_store_keeps_counters_events_latest_per_level_and_tool():
    first = syn.counters("register_2d", 1.0)
    again = dict(syn.counters("register_2d", 2.0, (256, 256, 256)))
    other_tool = dict(syn.counters("register_2d", 3.0), tool="rocprof")
    store = fed_store([syn.header(), first, again, other_tool])
    assert Change.COUNTERS in store.take_changes()
    assert len(store.counters) == 3
    got = store.counters_for("register_2d")
    assert got.shape == Shape(256, 256, 256) and got.tool == "ncu" and got.t == 2.0
    assert dict(got.metrics) == again["metrics"]
    assert dict(got.params) == again["params"]
    assert store.counters_for("register_2d", tool="rocprof").t == 3.0
    assert store.counters_for("smem_tiled") is None
    store.reset()
    assert store.counters == [] and store.counters_for("register_2d") is None


def test_replay_delivers_counters_into_the_store(tmp_path):
    path = syn.write(tmp_path / "with_counters.jsonl", syn.with_counters())
    session = read_session(path)
    store = SessionStore()
    clock = ReplayClock(session.events, store.handle)
    clock.set_speed(Speed.INSTANT)
    clock.play()
    assert [c.level for c in store.counters] == list(syn.COUNTERS_LEVELS)
    assert store.counters_for("smem_tiled").shape == Shape(*syn.COUNTERS_SHAPE)
    clock.seek(0.0, reset_sink=store.reset)  # replayed from the start: not kept twice
    clock.seek(clock.duration_s, reset_sink=store.reset)
    assert len(store.counters) == len(syn.COUNTERS_LEVELS)


def test_counters_comparison_is_the_models_totals_at_the_measured_shape_and_params():
    from gemmscope.app.core.counters import Counters, compare_counters
    from gemmscope.kernels.models import model_for

    ev = dict(syn.counters("register_2d", 1.0), params={
        "BM": 128, "BN": 128, "BK": 8, "TM": 4, "TN": 8})  # retuned since, say
    cmp = compare_counters(Counters.from_event(of(ev)))
    want = model_for("register_2d", ev["params"]).totals(*syn.COUNTERS_SHAPE)
    rows = {r.metric: r for r in cmp.rows}
    ld_c = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    assert rows[ld_c].model == want.ld.conflicts
    assert rows[ld_c].measured == ev["metrics"][ld_c]
    assert rows[ld_c].diff_pct == pytest.approx(
        100 * (want.ld.conflicts - ev["metrics"][ld_c]) / ev["metrics"][ld_c])
    assert "TM=4 (now 8)" in cmp.note
    unknown = compare_counters(Counters.from_event(of(dict(ev, level="future_level"))))
    assert unknown.rows == () and "future_level" in unknown.error


def test_build_for_follows_the_parameters_the_latest_result_ran():
    """A level that picks its parameters per shape (the FP8 tile width) has one build per
    parameter set: the Code and banks views show the one its latest result ran."""
    events = syn.events()
    header = events[0]
    own = next(c for c in header["catalog"] if c["id"] == "wmma")["params"]
    wide = {**own, "BN": 192}
    result = next(e for e in events if e["type"] == "result" and e["level"] == "wmma")
    t = result["t"]

    def build(params, t):
        return {"type": "build", "t": t, "level": "wmma", "variant": "vector",
                "params": params, "sass": ""}

    def ran(params, t, M):
        ev = {**result, "t": t, "M": M, "variant": "vector"}
        if params is not None:
            ev["params"] = params
        return ev

    store = fed_store([header, ran(None, t, 4096), build(own, t), ran(wide, t + 1, 2112),
                       build(wide, t + 1)])
    assert store.build_for("wmma").params == wide
    store.handle(of(ran(None, t + 2, 8192)))  # its own parameters again
    assert store.build_for("wmma").params == own


def test_a_result_without_parameters_ran_those_of_the_runner_that_made_it():
    """``record --update`` appends a runner whose catalog gives a level new parameters (a
    switch added to its kernel): its results without parameters ran those, so the Code
    view's build is the newest one, not a build of the file's first parameters."""
    events = syn.events()
    header = events[0]
    own = next(c for c in header["catalog"] if c["id"] == "wmma")["params"]
    grown = {**own, "RING": 0}
    later = {**header, "catalog": [{**c, "params": grown} if c["id"] == "wmma" else c
                                   for c in header["catalog"]]}
    result = next(e for e in events if e["type"] == "result" and e["level"] == "wmma")
    t = result["t"]
    ran = {k: v for k, v in result.items() if k != "params"} | {"variant": "vector"}

    def build(params, t):
        return {"type": "build", "t": t, "level": "wmma", "variant": "vector",
                "params": params, "sass": ""}

    store = fed_store([header, {**ran, "t": t}, build(own, t), later,
                       {**ran, "t": t + 1}, build(grown, t + 1)])
    assert store.restarts == 1
    assert store.level("wmma").params == grown
    assert store.build_for("wmma").params == grown
    # the ladder keeps its order; a later header that changes nothing keeps the same list
    assert [lv.id for lv in store.levels] == [c["id"] for c in header["catalog"]]
    levels = store.levels
    store.handle(of(later))
    assert store.levels is levels


def test_the_size_sweep_takes_square_shapes_only_not_every_n():
    """A level run at DeepGEMM's shapes (M = 4096, N and K varied) has no size sweep:
    plotting 4096 x 2112 x 7168 at "N = 2112" on an M = N = K axis would say what was
    not measured. Its square sizes still make one."""
    clock = syn._Clock()
    odd = [(4096, 2112, 7168), (4096, 24576, 1536), (4096, 7168, 2048)]
    events = [syn.header()]
    for i, shape in enumerate(odd):
        events += syn._run(clock, f"r{i}", "fp8_block_scaled", shape, 1000.0 + i, None, None)
    assert fed_store(events).sweeps() == {}
    for i, n in enumerate((1024, 2048)):
        events += syn._run(clock, f"s{i}", "fp8_block_scaled", (n, n, n), 900.0 + i, None,
                           None)
    n, tf = fed_store(events).sweeps()["fp8_block_scaled"]
    assert list(n) == [1024, 2048] and list(tf) == [900.0, 901.0]


def test_a_compared_runs_repeats_stay_apart_from_its_references():
    """A run command's reference echoes its id (docs/protocol.md, ``repeat``): each run's
    repeats go to its own stream, whatever JSON value the id is."""
    run_id = [7, {"sweep": "a"}]  # any JSON value, a list included
    shape = {"M": 256, "N": 256, "K": 256}
    events: list[dict] = [syn.header()]
    t = 1.0
    for level, tflops in (("cublas_fp32", 40.0), ("cp_async", 20.0)):
        events.append({"type": "run_start", "t": t, "id": run_id, "level": level, **shape,
                       "dtype": "fp32", "precision": "fp32", "mode": "burst", "repeats": 3,
                       "warmup": 1})
        events += [{"type": "repeat", "t": t + 0.1 * (i + 1), "id": run_id, "level": level,
                    **shape, "mode": "burst", "i": i, "ms": 1.0, "tflops": tflops}
                   for i in range(3)]
        t += 1.0
    store = fed_store(events)
    streams = store._state(None).streams
    for level, tflops in (("cublas_fp32", 40.0), ("cp_async", 20.0)):
        stream = streams[(level, Shape(256, 256, 256), "burst")]
        i, got = stream.arrays()
        assert list(i) == [0, 1, 2] and list(got) == [tflops] * 3, level


def test_a_run_stopped_before_its_announced_repeats_expects_only_those_it_had():
    """A paired run announces its most repeats (run_start's ``repeats``) and its precision
    rule may end it sooner: once its result is in, the stream expects the repeats it had,
    so the per-repeat chart spans them and not the bound."""
    shape = {"M": 256, "N": 256, "K": 256}
    events: list[dict] = [syn.header(),
                          {"type": "run_start", "t": 1.0, "id": 1, "level": "cp_async", **shape,
                           "dtype": "fp32", "precision": "fp32", "mode": "burst",
                           "repeats": 200, "warmup": 1}]
    events += [{"type": "repeat", "t": 1.0 + 0.01 * (i + 1), "id": 1, "level": "cp_async",
                **shape, "mode": "burst", "i": i, "ms": 1.0, "tflops": 20.0}
               for i in range(50)]
    running = fed_store(events)
    key = ("cp_async", Shape(256, 256, 256), "burst")
    assert running._state(None).streams[key].expected == 200  # still running: the bound
    events.append({"type": "result", "t": 2.0, "id": 1, "level": "cp_async", **shape,
                   "dtype": "fp32", "precision": "fp32", "mode": "burst", "median_ms": 1.0,
                   "tflops": 20.0, "verified": True, "rel_err": 1e-7, "repeats": 50})
    state = fed_store(events)._state(None)
    assert state.streams[key].expected == 50
    assert state.stream.expected == 50 and state.stream.count == 50


def test_run_form_is_the_results_parameters_else_the_shape_rules():
    """The form the animations draw: a result at the shape names the parameters it ran
    with and wins; without one the level's shape rule picks them for the session's SM
    count; a level this copy lacks, or no shape, has none."""
    from gemmscope.kernels.ladder import registry

    store = fed_store(syn.events())
    big = Shape(8192, 8192, 8192)
    sms = store.device_entry(0).sm_count or 132
    assert store.run_form("fp8_deep", big) == \
        registry.get("fp8_deep").for_shape(8192, 8192, 8192, sms).params
    ran = {**registry.get("fp8_deep").params, "STAGES": 3, "EPC": 0, "GW": 8}
    result = next(e for e in syn.events() if e["type"] == "result")
    store.handle(of({**result, "id": "f8", "level": "fp8_deep", "M": 8192, "N": 8192,
                     "K": 8192, "precision": "fp8", "params": ran}))
    assert store.run_form("fp8_deep", big) == ran
    assert store.run_form("no_such_level", big) is None
    assert SessionStore().run_form("fp8_deep") is None  # no shape shown yet

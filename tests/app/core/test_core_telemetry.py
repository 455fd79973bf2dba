"""The Qt-free side of telemetry: samples, reason intervals, run windows, unavailability."""

from __future__ import annotations

import numpy as np
import pytest
import synthetic_session as syn

from gemmscope.app.core.store import SessionStore, Shape
from gemmscope.app.core.telemetry import RunEnd, RunWindow, runs_span
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.recording import iter_events, read_session
from gemmscope.kernels.protocol.timeline import Timeline


def fed_store(events) -> SessionStore:
    """A store fed as a reader feeds it: every event placed on the session's time axis."""
    store = SessionStore()
    line = Timeline()
    for ev in events:
        store.handle(line.place(of(ev)))
    return store


def test_run_windows_are_the_recorded_run_start_to_result(synthetic_file):
    events = read_session(synthetic_file).events
    store = fed_store(events)
    starts = {e.id: e for e in events if isinstance(e, rec.RunStart)}
    results = {e.id: e for e in events if isinstance(e, rec.Result)}
    windows = store.run_windows()
    assert [w.run_id for w in windows] == list(starts)
    for w in windows:
        assert w.start_s == starts[w.run_id].t and w.end_s == results[w.run_id].t
        assert w.end is RunEnd.RESULT and w.level == starts[w.run_id].level
    wmma = next(w for w in windows if w.level == "wmma")
    assert wmma.throttled == ("SwPowerCap",) and wmma.label() == "wmma 4096×4096×4096"
    assert not next(w for w in windows if w.level == "naive").throttled


def test_the_span_of_a_levels_runs_is_its_newest_run_at_one_shape_and_in_one_mode():
    big, small = Shape(4096, 4096, 4096), Shape(512, 512, 512)
    windows = [RunWindow("a", "fp8", big, 10.0, 12.0, RunEnd.RESULT),
               RunWindow("b", "fp8", small, 20.0, 21.0, RunEnd.RESULT),
               RunWindow("c", "fp8", big, 30.0, 31.0, RunEnd.RESULT),
               RunWindow("d", "fp8", big, 900.0, 930.0, RunEnd.RESULT, mode="sustained")]
    assert runs_span(windows, "fp8", big, "burst") == (30.0, 31.0)  # c, not a to c
    assert runs_span(windows, "fp8", big, "sustained") == (900.0, 930.0)
    assert runs_span(windows, "fp8", Shape(1, 1, 1), "burst") is None
    assert runs_span(windows, "naive", big, "burst") is None


def test_a_run_window_keeps_its_runs_mode(synthetic_file):
    events = read_session(synthetic_file).events
    starts = {e.id: str(e.mode) for e in events if isinstance(e, rec.RunStart)}
    assert {w.mode for w in fed_store(events).run_windows()} == set(starts.values())
    assert all(w.mode == starts[w.run_id] for w in fed_store(events).run_windows())


def test_reason_intervals_cover_the_capped_samples(synthetic_file):
    with open(synthetic_file, "rb") as fh:  # line by line: each sample its own record
        samples = [e for e in iter_events(fh) if isinstance(e, rec.Telemetry)]
    store = fed_store(read_session(synthetic_file).events)  # the samples as columns
    got = store.telemetry.reason_intervals("SwPowerCap")
    t = [s.t for s in samples]
    capped = [i for i, s in enumerate(samples) if "SwPowerCap" in (s.reasons or ())]
    # contiguous stretches of capped samples, each held until the next sample
    want, start = [], capped[0]
    for a, b in zip(capped, [*capped[1:], None], strict=True):
        if b != a + 1:
            want.append((t[start], t[a + 1]))
            start = b
    np.testing.assert_allclose(got, want)
    assert len(want) == 2  # cublas_fp16 and wmma
    assert "GpuIdle" not in store.telemetry.reason_bits  # idle is not a slowdown
    assert store.telemetry.reason_intervals("HwSlowdown").shape == (0, 2)


def test_null_fields_are_gaps_and_known_as_empty():
    store = fed_store(syn.events())
    assert not store.telemetry.has_values(syn.NULL_GPM_FIELD)
    assert store.telemetry.has_values("tensor_util_pct")
    assert store.telemetry.latest("power_limit_w") == syn.POWER_LIMIT_W
    assert store.telemetry.latest(syn.NULL_GPM_FIELD) is None
    assert store.telemetry.power_kind == "instant"
    assert store.sm_clock_max_mhz() == syn.SM_CLOCK_MAX_MHZ
    store.handle(of({"type": "telemetry", "t": 99.0, "reasons": "not a list", "power_w": "x",
                  "sm_clock_mhz": True}))
    t, power = store.telemetry.arrays("power_w")
    assert t[-1] == 99.0 and np.isnan(power[-1])


def test_result_carries_energy_and_throttle(synthetic_file):
    store = fed_store(read_session(synthetic_file).events)
    r = store.ladder_result("wmma")
    ms = 2.0 * 4096**3 / 300e12 * 1e3
    assert r.energy_j == pytest.approx(syn.POWER_LIMIT_W * ms * 1e-3)
    assert r.gflop_per_j == pytest.approx(2 * 4096**3 / 1e9 / r.energy_j)
    assert r.avg_power_w == syn.POWER_LIMIT_W and r.sm_clock_mhz_min == syn.SM_CLOCK_CAPPED_MHZ
    assert r.throttled == ("SwPowerCap",)
    assert store.ladder_result("naive").throttled == ()


def _run(run_id, t0, level="naive", M=64):
    return {"type": "run_start", "t": t0, "id": run_id, "level": level, "M": M, "N": M,
            "K": M, "dtype": "fp32", "precision": "fp32", "repeats": 2, "warmup": 0}


def test_errors_stops_restarts_and_a_run_in_progress():
    header = syn.header()
    events = [header, _run("a", 1.0), {"type": "error", "t": 2.0, "id": "a", "kind": "launch",
                                       "message": "x", "level": "naive", "M": 64, "N": 64,
                                       "K": 64},
              _run("b", 3.0), {"type": "info", "t": 4.0, "id": "b", "message": "stopped",
                               "level": "naive", "M": 64, "N": 64, "K": 64},
              _run("c", 5.0), {"type": "telemetry", "t": 6.0, "power_w": 100.0},
              dict(header, t=0.0),  # the runner restarted: c never answers
              {"type": "telemetry", "t": 1.0, "power_w": 200.0},
              _run("d", 2.0, M=7)]
    events.insert(1, _run("z", 0.5, level="coalesced"))
    events.insert(2, {"type": "result", "t": 0.7, "id": "z", "level": "coalesced", "M": 64,
                      "N": 64, "K": 64, "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0,
                      "verified": False, "rel_err": 0.5, "repeats": 2})
    store = fed_store(events)
    wrong = store.run_windows().pop(0)
    assert wrong.run_id == "z" and wrong.end is RunEnd.RESULT and not wrong.verified
    w = store.run_windows()[1:]
    assert all(x.verified for x in w)
    assert [(x.run_id, x.start_s, x.end_s, x.end) for x in w] == [
        ("a", 1.0, 2.0, RunEnd.ERROR), ("b", 3.0, 4.0, RunEnd.STOPPED),
        ("c", 5.0, 6.0, RunEnd.STOPPED), ("d", 8.0, 8.0, RunEnd.RUNNING)]
    assert w[-1].shape == Shape(7, 7, 7)
    t, power = store.telemetry.arrays("power_w")
    assert list(t) == [6.0, 7.0] and list(power) == [100.0, 200.0]  # timeline joined
    store.handle(of({"type": "telemetry", "t": 10.5}))
    assert store.run_windows()[-1].end_s == 10.5  # the open run reaches the newest time


def test_telemetry_unavailable_from_header_or_info():
    header = dict(syn.header(), telemetry={"available": False, "hz": 0,
                                           "reason": "nvidia-ml-py (pynvml) is not installed"})
    store = fed_store([header])
    assert store.telemetry_status() == (False, "nvidia-ml-py (pynvml) is not installed")
    store = fed_store([syn.header(), {"type": "info", "t": 0.1,
                                      "message": "telemetry unavailable: NVML: Not Supported"}])
    assert store.telemetry_status() == (False, "NVML: Not Supported")
    assert fed_store([syn.header()]).telemetry_status() == (True, "")


def test_buffer_keeps_the_newest_samples_in_order_once_full():
    from gemmscope.app.core.telemetry import TelemetryBuffer

    buf = TelemetryBuffer(max_samples=4)
    for i in range(7):
        buf.append(rec.Telemetry(t=float(i), power_w=10.0 * i,
                                 reasons=["SwPowerCap"] if i in (4, 5) else ["GpuIdle"]))
    t, power = buf.arrays("power_w")
    assert list(t) == [3.0, 4.0, 5.0, 6.0] and list(power) == [30.0, 40.0, 50.0, 60.0]
    assert not t.flags.writeable
    np.testing.assert_array_equal(buf.reason_intervals("SwPowerCap"), [(4.0, 6.0)])
    assert buf.latest("power_w") == 60.0 and buf.count == 7

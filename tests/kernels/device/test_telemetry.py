"""Telemetry without a GPU: reason decoding, null fields, the no-NVML path, windows."""

from __future__ import annotations

import builtins
import threading

from gemmscope.kernels.device import telemetry
from gemmscope.kernels.device.telemetry import Nvml, Sampler, decode_reasons


def test_decode_reasons():
    assert decode_reasons(0) == []
    assert decode_reasons(None) is None
    assert decode_reasons(0x1 | 0x4) == ["GpuIdle", "SwPowerCap"]
    assert decode_reasons(0x40 | 0x1000) == ["HwThermalSlowdown", "0x1000"]


def test_no_nvml_library_is_a_state_not_a_crash(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *a, **k):
        if name == "pynvml":
            raise ImportError("no pynvml")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    nv = Nvml()
    assert not nv.available and "not installed" in (nv.reason or "")
    sample = nv.sample()
    assert set(sample) == set(telemetry.FIELDS) and all(v is None for v in sample.values())
    assert nv.energy_j() is None
    s = Sampler(nv, None, lambda: 0.0)
    s.start()  # does nothing without NVML
    assert s._thread is None


class FakeNvml:
    available = True

    def __init__(self):
        self.clock = iter([1980, 1755, 1980, 1600])

    def sample(self):
        return {**dict.fromkeys(telemetry.FIELDS), "sm_clock_mhz": next(self.clock),
                "power_w": 500.0, "reasons": ["GpuIdle", "SwPowerCap"]}

    def energy_j(self):
        return None


def test_window_summarises_only_its_interval():
    times = iter([1.0, 2.0, 3.0, 9.0])
    s = Sampler(FakeNvml(), None, lambda: next(times))
    for _ in range(4):
        s.sample_now()
    w = s.window(1.5, 3.5)
    assert w.samples == 2
    assert w.sm_clock_mhz_min == 1755 and w.sm_clock_mhz_avg == (1755 + 1980) / 2
    assert w.throttled == ["SwPowerCap"]  # GpuIdle is not a slowdown
    assert s.window(20, 30).sm_clock_mhz_avg is None


def test_sampler_thread_emits_at_its_rate_and_stops():
    got: list[dict] = []
    done = threading.Event()

    class Endless(FakeNvml):
        def sample(self):
            return {**dict.fromkeys(telemetry.FIELDS), "sm_clock_mhz": 1000}

    def emit(ev):
        got.append(ev)
        if len(got) >= 5:
            done.set()

    s = Sampler(Endless(), emit, lambda: 0.0, hz=200)
    s.start()
    assert done.wait(5)
    s.stop()
    assert all(e["type"] == "telemetry" and e["sm_clock_mhz"] == 1000 for e in got)
    assert s._thread is None


def test_rate_can_change_while_a_sample_is_taken():
    """set_rate(0) landing during a sample must not kill the thread (it divided by 0)."""
    import time

    entered, release = threading.Event(), threading.Event()

    class Slow(FakeNvml):
        def sample(self):
            entered.set()
            release.wait(2)
            return dict.fromkeys(telemetry.FIELDS)

    got: list[dict] = []
    s = Sampler(Slow(), got.append, time.monotonic, hz=100)
    s.start()
    assert entered.wait(2)
    s.set_rate(0)
    release.set()
    time.sleep(0.05)
    n = len(got)
    s.set_rate(200)
    deadline = time.monotonic() + 2
    while len(got) < n + 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    s.stop()
    assert len(got) >= n + 3, "sampling did not resume after the rate went to 0 and back"

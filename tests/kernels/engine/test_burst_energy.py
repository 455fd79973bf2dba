"""A burst result's energy: the counter over a window of flush + launch pairs after the
timed repeats (kernels/engine/measure.py), and null with a reason where it cannot be measured."""

from __future__ import annotations

import pytest

from gemmscope.kernels.device.telemetry import RunWindow
from gemmscope.kernels.engine.energy import EnergyReading, MeasuredWindow
from gemmscope.kernels.engine.measure import burst_energy_fields


def _window(launches=100, gpu_s=1.0, energy_j=500.0) -> MeasuredWindow:
    return MeasuredWindow(launches, gpu_s, 10.0, 11.0, 20, 0,
                          EnergyReading(energy_j, gpu_s + 0.03, True, 0.05), None)


def test_burst_energy_is_joules_over_launches_including_the_flush():
    samples = RunWindow(1800.0, 1650.0, None, None, ["SwPowerCap"], 50)
    f = burst_energy_fields(_window(), 0.5, 2.0 * 4096**3, samples, "graph")
    assert f["energy_j"] == pytest.approx(5.0)
    assert f["gflop_per_j"] == pytest.approx(2.0 * 4096**3 / 1e9 / 5.0)
    assert f["avg_power_w"] == pytest.approx(500.0) and f["power_source"] == "energy_counter"
    assert f["energy_reason"] is None and f["flush_j"] == 0.5
    win = f["energy_window"]
    assert win["pattern"] == "flush+launch" and win["method"] == "graph"
    assert win["launches"] == 100 and win["gpu_s"] == 1.0 and win["edge_s"] == pytest.approx(0.03)
    assert win["sm_clock_mhz_min"] == 1650.0 and win["throttled"] == ["SwPowerCap"]


def test_burst_energy_is_null_with_a_reason_when_it_cannot_be_measured():
    f = burst_energy_fields(None, None, 1.0, None, None, "no NVML: not installed")
    assert f["energy_j"] is None and f["gflop_per_j"] is None and f["avg_power_w"] is None
    assert f["energy_reason"] == "no NVML: not installed" and f["power_source"] is None
    flat = burst_energy_fields(_window(energy_j=0.0), None, 1.0, None, "stream")
    assert flat["energy_j"] is None and "did not advance" in flat["energy_reason"]

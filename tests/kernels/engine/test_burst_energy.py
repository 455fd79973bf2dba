"""A burst result's energy: the counter over a window of the level's launches back to back
after the timed repeats, no flush between them (kernels/engine/measure.py), null with a
reason where it cannot be measured; and the clock every burst result states."""

from __future__ import annotations

import pytest

from gemmscope.kernels.device.telemetry import RunWindow
from gemmscope.kernels.engine.energy import EnergyReading, MeasuredWindow
from gemmscope.kernels.engine.measure import burst_energy_fields, clock_fields


def _window(launches=100, gpu_s=1.0, energy_j=500.0) -> MeasuredWindow:
    return MeasuredWindow(launches, gpu_s, 10.0, 11.0, 20, 0,
                          EnergyReading(energy_j, gpu_s + 0.03, True, 0.05), None)


def test_burst_energy_is_joules_over_the_back_to_back_launches():
    samples = RunWindow(1800.0, 1650.0, None, None, ["SwPowerCap"], 50)
    f = burst_energy_fields(_window(), 2.0 * 4096**3, samples, "graph")
    assert f["energy_j"] == pytest.approx(5.0)
    assert f["gflop_per_j"] == pytest.approx(2.0 * 4096**3 / 1e9 / 5.0)
    assert f["avg_power_w"] == pytest.approx(500.0) and f["power_source"] == "energy_counter"
    # the flush of the timed repeats is no part of it (issue 31: its joules, and those of
    # the GEMM's re-reads from HBM after it, made cp_async's J/GEMM 4.3% high)
    assert f["energy_reason"] is None and "flush_j" not in f
    win = f["energy_window"]
    assert win["pattern"] == "launch" and win["method"] == "graph"
    assert win["launches"] == 100 and win["gpu_s"] == 1.0 and win["edge_s"] == pytest.approx(0.03)
    assert win["sm_clock_mhz_min"] == 1650.0 and win["throttled"] == ["SwPowerCap"]


def test_burst_energy_is_null_with_a_reason_when_it_cannot_be_measured():
    f = burst_energy_fields(None, 1.0, None, None, "no NVML: not installed")
    assert f["energy_j"] is None and f["gflop_per_j"] is None and f["avg_power_w"] is None
    assert f["energy_reason"] == "no NVML: not installed" and f["power_source"] is None
    flat = burst_energy_fields(_window(energy_j=0.0), 1.0, None, "stream")
    assert flat["energy_j"] is None and "did not advance" in flat["energy_reason"]


def test_burst_clock_comes_from_the_repeats_else_from_the_energy_window():
    window = {"sm_clock_mhz_avg": 1962.5, "sm_clock_mhz_min": 1935.0}
    # repeats of a few ms: no telemetry sample fell in them, the energy window has some
    assert clock_fields({"sm_clock_mhz_avg": None}, window) == {
        "sm_clock_mhz_avg": 1962.5, "sm_clock_mhz_min": 1935.0,
        "clock_source": "energy_window"}
    assert clock_fields({}, window)["clock_source"] == "energy_window"
    # the repeats' own samples win; nothing at all says so
    assert clock_fields({"sm_clock_mhz_avg": 1980.0}, window) == {"clock_source": "repeats"}
    assert clock_fields({}, {"sm_clock_mhz_avg": None}) == {"clock_source": None}
    assert clock_fields({}, None) == {"clock_source": None}

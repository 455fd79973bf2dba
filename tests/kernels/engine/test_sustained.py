"""Sustained runs without a GPU: the trial loop, the cool-downs, the result's medians and
spread, a refused unverified level, and the runner comparing with cuBLAS within a mode
(kernels/engine/sustained.py, kernels/engine/runner.py), all on a fake clock, counter and GPU."""

from __future__ import annotations

import itertools
import json

import pytest
from fake_benches import SustainedBench as FakeBench
from fake_benches import serve

from gemmscope.kernels.device.telemetry import RunWindow
from gemmscope.kernels.engine.energy import (
    EnergyReading,
    MeasuredWindow,
)
from gemmscope.kernels.engine.idle import HEARTBEAT_S
from gemmscope.kernels.engine.measure import Refused
from gemmscope.kernels.engine.sustained import (
    Probes,
    SustainedConfig,
    Trial,
    measure_trials,
    run_sustained,
    summarize,
)
from gemmscope.kernels.ladder.registry import get
from gemmscope.kernels.protocol import commands

FLOPS = 2.0 * 4096**3


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def window(launches: int, gpu_s: float, joules: float | None, t: float) -> MeasuredWindow:
    energy = None if joules is None else EnergyReading(joules, gpu_s + 0.04, True, 0.05)
    return MeasuredWindow(launches, gpu_s, t, t + gpu_s, 60, 0, energy,
                          None if joules is not None else "no NVML: not installed")


def probes_for(clock: FakeClock, temps=(40.0, 55.0)) -> Probes:
    cycle = itertools.cycle(temps)
    return Probes(clock=clock, sleep=clock.sleep, temperature_c=lambda: next(cycle),
                  samples=lambda t0, t1: RunWindow(1600.0, 1440.0 + t0 % 7, None, None,
                                                   ["SwPowerCap"], 150))


def test_config_defaults_and_command_fields():
    assert SustainedConfig() == SustainedConfig(3.0, 3, 5.0)
    cfg = commands.parse_command(json.dumps({"cmd": "run", "level": "naive", "M": 8, "N": 8,
                                             "K": 8, "mode": "sustained", "window_s": 2,
                                             "trials": 5})).sustained
    assert cfg == SustainedConfig(2.0, 5, 5.0)


def test_each_trial_comes_after_a_cooldown_and_says_its_phases():
    clock = FakeClock()
    phases: list[tuple[str, int, float]] = []
    seen: list[Trial] = []
    windows = iter([window(1000, 3.0, 2100.0, 0), window(990, 3.0, 2080.0, 0),
                    window(1010, 3.0, 2110.0, 0)])

    def run_window() -> MeasuredWindow:
        w = next(windows)
        start = clock.now
        clock.sleep(w.gpu_s)
        return MeasuredWindow(w.launches, w.gpu_s, start, clock.now, w.waits, w.ready_waits,
                              w.energy, w.energy_reason)

    trials = measure_trials(run_window, FLOPS, SustainedConfig(3.0, 3, 5.0),
                            probes_for(clock), lambda *p: phases.append(p), seen.append)
    assert seen == trials and [t.i for t in trials] == [0, 1, 2]
    assert phases == [("cooldown", 0, 5.0), ("window", 0, 3.0), ("cooldown", 1, 5.0),
                      ("window", 1, 3.0), ("cooldown", 2, 5.0), ("window", 2, 3.0)]
    # idle 5 s before each window, the first one included
    assert [t.t_start for t in trials] == pytest.approx([5.0, 13.0, 21.0])
    assert all(t.cooldown_s == pytest.approx(5.0) for t in trials)
    first = trials[0]
    assert first.ms == pytest.approx(3.0) and first.tflops == pytest.approx(FLOPS / 3e-3 / 1e12)
    assert first.energy_j == pytest.approx(2.1) and first.avg_power_w == pytest.approx(700.0)
    assert first.gflop_per_j == pytest.approx(FLOPS / 1e9 / 2.1)
    assert (first.temp_c_start, first.temp_c_end) == (40.0, 55.0)
    assert first.throttled == ["SwPowerCap"] and first.sm_clock_mhz_avg == 1600.0
    assert first.counter_aligned and first.edge_s == pytest.approx(0.04)


def test_a_long_cooldown_says_it_is_still_going():
    clock = FakeClock()
    phases: list[tuple[str, int, float]] = []
    measure_trials(lambda: window(10, 1.0, 500.0, clock.now), FLOPS,
                   SustainedConfig(1.0, 1, 25.0), probes_for(clock),
                   lambda *p: phases.append(p), lambda _t: None)
    cooling = [p for p in phases if p[0] == "cooldown"]
    assert [p[2] for p in cooling] == [25.0, 15.0, 5.0]
    assert 25.0 / len(cooling) <= HEARTBEAT_S


def test_no_cooldown_means_no_idle():
    clock = FakeClock()
    phases: list[tuple[str, int, float]] = []
    trials = measure_trials(lambda: window(10, 1.0, 500.0, clock.now), FLOPS,
                            SustainedConfig(1.0, 2, 0.0), probes_for(clock),
                            lambda *p: phases.append(p), lambda _t: None)
    assert [p[0] for p in phases] == ["window", "window"]
    assert [t.cooldown_s for t in trials] == [0.0, 0.0]


def _trials(energies, launches=(1000, 990, 1010)) -> list[Trial]:
    clock = FakeClock()
    ws = iter([window(n, 3.0, e, 0) for n, e in zip(launches, energies, strict=True)])
    return measure_trials(lambda: next(ws), FLOPS, SustainedConfig(3.0, len(launches), 0.0),
                          probes_for(clock, temps=(40.0, 55.0, 45.0, 61.0, 47.0, 58.0)),
                          lambda *_: None, lambda _t: None)


def test_summary_is_the_median_with_the_spread():
    trials = _trials([2100.0, 2079.0, 2121.0])
    s = summarize(trials, FLOPS, SustainedConfig(3.0, 3, 5.0))
    tflops = sorted(t.tflops for t in trials)
    assert s["mode"] == "sustained" and s["trials"] == 3 and s["window_s"] == 3.0
    assert (s["tflops_min"], s["tflops"], s["tflops_max"]) == pytest.approx(tflops)
    assert s["median_ms"] == pytest.approx(3.0 / 1000 * 1e3)
    energies = sorted(t.energy_j for t in trials)
    assert (s["energy_j_min"], s["energy_j"], s["energy_j_max"]) == pytest.approx(energies)
    assert s["gflop_per_j"] == pytest.approx(FLOPS / 1e9 / s["energy_j"])
    assert s["avg_power_w"] == pytest.approx(700.0) and s["power_source"] == "energy_counter"
    assert s["energy_reason"] is None
    assert s["sm_clock_mhz_min"] == min(t.sm_clock_mhz_min for t in trials)
    assert (s["temp_c_start"], s["temp_c_end"], s["temp_c_max"]) == (40.0, 58.0, 61.0)
    assert s["throttled"] == ["SwPowerCap"] and s["launches"] == 3000
    assert [w["i"] for w in s["trial_windows"]] == [0, 1, 2]
    json.dumps(s)  # an event's fields


def test_summary_without_energy_in_a_trial_has_none_and_says_why():
    s = summarize(_trials([2100.0, None, 2121.0]), FLOPS, SustainedConfig())
    assert s["energy_j"] is None and s["gflop_per_j"] is None and s["avg_power_w"] is None
    assert s["energy_reason"] == "no NVML: not installed" and s["tflops"] > 0


# ---------------------------------------------------------------- a bench stand-in


def test_run_sustained_times_a_verified_level_and_says_how():
    bench = FakeBench()
    trials: list[Trial] = []
    r = run_sustained(bench, get("cp_async"), 4096, 4096, 4096, SustainedConfig(1.0, 2, 3.0),
                      on_trial=trials.append, sleep=bench.gpu.sleep)
    assert r["mode"] == "sustained" and r["trials"] == 2 == len(trials)
    assert r["repeats"] == 2 and r["launch_method"] == "graph" and bench.graph_asked == [True]
    assert r["power_limit_w"] == 700.0 and r["level"] == "cp_async"
    # the fake GPU draws 600 W under load; the counter sees it within an idle step
    assert r["avg_power_w"] == pytest.approx(600.0, rel=0.01)
    assert r["energy_j"] == pytest.approx(600.0 * 0.05 / 50, rel=0.01)
    assert r["tflops"] == pytest.approx(FLOPS / (0.05 / 50) / 1e12, rel=0.01)
    assert trials[1].t_start - trials[0].t_end >= 3.0  # the cool-down
    assert trials[0].sampled_power_w == 640.0 and trials[0].sm_clock_mhz_min == 1500.0


def test_run_sustained_uses_plain_launches_for_references():
    bench = FakeBench()
    run_sustained(bench, get("cublas_fp32"), 64, 64, 64, SustainedConfig(1.0, 1, 0.0))
    assert bench.graph_asked == [False]


def test_an_unverified_level_is_never_timed():
    bench = FakeBench(verified=False)
    with pytest.raises(Refused) as err:
        run_sustained(bench, get("cp_async"), 64, 64, 64, SustainedConfig(1.0, 1, 0.0))
    assert err.value.kind == "verify" and "relative error 0.5" in str(err.value)
    assert bench.graph_asked == [] and bench.gpu.busy == []


# ---------------------------------------------------------------- the runner


def test_runner_compares_with_cublas_in_the_same_mode():
    bench = FakeBench()
    shape = {"level": "cp_async", "M": 64, "N": 64, "K": 64}
    events = serve(bench,
                   {"cmd": "run", "id": "b", **shape},
                   {"cmd": "run", "id": "s", **shape, "mode": "sustained", "window_s": 1,
                    "trials": 2, "cooldown_s": 0},
                   {"cmd": "run", "id": "s2", **shape, "mode": "sustained", "window_s": 1,
                    "trials": 1, "cooldown_s": 0})
    results = [e for e in events if e["type"] == "result"]
    assert [(r["level"], r["mode"]) for r in results] == [
        ("cublas_fp32", "burst"), ("cp_async", "burst"),
        ("cublas_fp32", "sustained"), ("cp_async", "sustained"),  # not the burst reference
        ("cp_async", "sustained")]  # the sustained reference is known by then
    burst, sustained = results[1], results[3]
    assert burst["pct_of_reference"] == pytest.approx(25.0)
    assert sustained["reference"] == "cublas_fp32"
    assert sustained["reference_tflops"] == pytest.approx(results[2]["tflops"])
    assert sustained["pct_of_reference"] == pytest.approx(50.0, rel=0.02)
    assert bench.burst_runs == ["cublas_fp32", "cp_async"]
    starts = [e for e in events if e["type"] == "run_start"]
    assert [s["mode"] for s in starts] == ["burst", "burst", "sustained", "sustained",
                                           "sustained"]
    assert starts[3]["trials"] == 2 and starts[3]["window_s"] == 1
    trials = [e for e in events if e["type"] == "repeat" and e["id"] == "s"]
    assert [(t["level"], t["i"]) for t in trials] == [("cublas_fp32", 0), ("cublas_fp32", 1),
                                                      ("cp_async", 0), ("cp_async", 1)]
    assert all(t["mode"] == "sustained" and t["energy_j"] > 0 for t in trials)
    phases = [(e["level"], e["phase"], e["trial"]) for e in events if e["type"] == "phase"
              and e["phase"] != "compile"]  # cp_async's build, in its burst run
    assert phases[:2] == [("cublas_fp32", "window", 0), ("cublas_fp32", "window", 1)]


def test_runner_reports_an_unverified_sustained_level_as_a_verify_error():
    events = serve(FakeBench(verified=False),
                   {"cmd": "run", "id": 1, "level": "cp_async", "M": 64, "N": 64, "K": 64,
                    "mode": "sustained", "compare": False, "cooldown_s": 0})
    assert not [e for e in events if e["type"] == "result"]
    err = next(e for e in events if e["type"] == "error")
    assert err["kind"] == "verify" and err["level"] == "cp_async"
    assert "times only verified kernels" in err["message"]
    assert events[-1] == {**events[-1], "type": "done", "id": 1}


def test_a_levels_first_run_says_it_compiles_before_it_measures():
    """Issue 40 item 3: the app says "compiling LEVEL" from the ``phase`` event sent before
    the level's build; the result says how long the build took and whether the build
    cache had it. Only the level's first run in the runner builds it; references never."""
    events = serve(FakeBench(),
                   {"cmd": "run", "id": "a", "level": "cp_async", "M": 64, "N": 64, "K": 64},
                   {"cmd": "run", "id": "b", "level": "cp_async", "M": 64, "N": 64, "K": 64},
                   {"cmd": "run", "id": "s", "level": "naive", "M": 64, "N": 64, "K": 64,
                    "mode": "sustained", "window_s": 1, "trials": 1, "cooldown_s": 0})
    kinds = [(e["type"], e.get("level"), e.get("phase")) for e in events
             if e["type"] in ("run_start", "phase", "repeat") and e["id"] == "a"]
    assert kinds == [("run_start", "cublas_fp32", None), ("repeat", "cublas_fp32", None),
                     ("run_start", "cp_async", None), ("phase", "cp_async", "compile"),
                     ("repeat", "cp_async", None)]
    compile_phase = next(e for e in events if e.get("phase") == "compile")
    assert compile_phase["trial"] == 0 and "seconds" not in compile_phase
    results = {(e["id"], e["level"]): e for e in events if e["type"] == "result"}
    assert (results[("a", "cp_async")]["compile_s"],
            results[("a", "cp_async")]["compile_cached"]) == (2.5, False)
    assert "compile_s" not in results[("b", "cp_async")]  # built already
    assert "compile_s" not in results[("a", "cublas_fp32")]
    sustained = [(e["level"], e["phase"]) for e in events
                 if e["type"] == "phase" and e["id"] == "s"]
    assert sustained[:1] == [("cublas_fp32", "window")]
    assert ("naive", "compile") in sustained
    assert sustained.index(("naive", "compile")) < sustained.index(("naive", "window"))

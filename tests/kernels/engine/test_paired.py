"""The paired loop of a level and its reference (kernels/engine/paired.py) on a fake GPU:
the order alternates, every launch is flushed and timed on its own, the loop stops by
ratio_stats' rule, and the runner emits both results and every launch from one loop."""

from __future__ import annotations

import io
import json
import random
from types import SimpleNamespace

import pytest

from gemmscope.kernels.engine import paired
from gemmscope.kernels.engine.runner import Runner
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import commands
from gemmscope.kernels.protocol.decoding import decode
from gemmscope.kernels.results.ratio_stats import MIN_PAIRS, ClockReading


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_loop_alternates_the_order_and_stops_at_repeats():
    clock, order = Clock(), []

    def timer(side, ms):
        def timed():
            order.append(side)
            clock.t += 0.001
            return ms, ClockReading(1980.0, ())
        return timed

    said = []
    pairs, stop = paired.pair_loop(timer("L", 1.25), timer("R", 1.0), clock, 2.0, 4,
                                   lambda side, i, ms: said.append((side, i)))
    # the noise-free ratio is precise only after MIN_PAIRS: 4 pairs end on repeats
    assert stop == "repeats" and len(pairs) == 4
    assert order == ["L", "R", "R", "L", "L", "R", "R", "L"]
    assert [p.level_first for p in pairs] == [True, False, True, False]
    assert said[:4] == [("level", 0), ("reference", 0), ("reference", 1), ("level", 1)]
    assert all(p.ratio == pytest.approx(0.8) for p in pairs)


def test_a_rest_rule_idles_after_slow_clocked_pairs_and_by_its_duty():
    clock, slept = Clock(), []
    mhz = iter([1980.0, 1980.0, 1800.0, 1980.0] + [1980.0] * 100)

    def timer():
        clock.t += 0.002
        return 1.0, ClockReading(next(mhz), ())

    def sleep(s):
        slept.append(round(s, 6))
        clock.t += s

    rest = paired.Rest(band=0.97, recover_s=0.05)
    pairs, _stop = paired.pair_loop(timer, timer, clock, 2.0, 3, rest=rest,
                                    max_clock_mhz=1980.0, sleep=sleep)
    # only the second pair had a launch under 97% of 1980 MHz (1800 MHz)
    assert len(pairs) == 3 and slept == [0.05]
    slept.clear()
    pairs, _stop = paired.pair_loop(timer, timer, clock, 2.0, 3, rest=paired.Rest(duty=1.0),
                                    max_clock_mhz=1980.0, sleep=sleep)
    assert slept == [0.004] * 3  # each pair's own wall time: two launches of 2 ms
    assert "0.05 s after a pair under 97%" in rest.describe()
    assert paired.Rest().describe() == "none"


def test_the_loop_stops_by_precision_or_by_its_budget():
    clock = Clock()

    def steady():
        clock.t += 0.01
        return 1.0, ClockReading()

    pairs, stop = paired.pair_loop(steady, steady, clock, 2.0, 1000)
    assert stop == "precision" and len(pairs) == MIN_PAIRS
    draw = random.Random(41)

    def noisy():  # a ratio scattered by 10% pair to pair gets no 0.5% interval in 2 s
        clock.t += 0.01
        return draw.uniform(0.8, 1.2), ClockReading()

    clock.t = 0.0
    pairs, stop = paired.pair_loop(noisy, steady, clock, 2.0, 10_000)
    assert stop == "budget"
    assert 2.0 <= 0.02 * len(pairs) <= 2.0 + 0.02  # each pair takes 20 ms of the 2 s


class FakeCuda:
    """Events and elapsed times of a fake stream: a launch adds its milliseconds."""

    def __init__(self):
        self.gpu_ms = 0.0
        self.log: list[str] = []  # what the host queued, in order
        outer = self

        class Event:
            def __init__(self):
                self.at = 0.0

            def record(self, stream=None):
                self.at = outer.gpu_ms
                outer.log.append("event")

            def synchronize(self):
                pass

        self.Event = Event
        self.get_elapsed_time = lambda a, b: b.at - a.at


class FakeHold:
    """kernels/engine/hold.py's LaunchHold, logging what it queues."""

    def __init__(self, log: list[str]):
        self.log, self.timeouts = log, 0

    def hold(self):
        self.log.append("hold")

    def release(self):
        self.log.append("release")

    def settled(self):
        self.log.append("settled")


class PairBench:
    """What paired.run_paired uses of measure.Bench, on a fake GPU: a level at 80% of its
    reference, the clock read at 1980 MHz except on the level's launches 3 and 4."""

    def __init__(self, level_ms=1.25, ref_ms=1.0):
        self.cuda = FakeCuda()
        self.pool_freed = 0
        self.cp = SimpleNamespace(cuda=self.cuda, get_default_memory_pool=lambda: SimpleNamespace(
            free_all_blocks=lambda: setattr(self, "pool_freed", self.pool_freed + 1)))
        self.clock = Clock()
        self.stream = SimpleNamespace(__enter__=None, synchronize=lambda: None)
        self.device = SimpleNamespace(sm_clock_max_mhz=1980.0)
        self.nvml = SimpleNamespace(temperature_c=lambda: 40.0, clock_now=self.clock_now)
        self.sampler = None
        self.ms = {"level": level_ms, "reference": ref_ms}
        self.flushes, self.launches, self.prepared = 0, [], []
        self.last = ""
        self.hold = FakeHold(self.cuda.log)

    def clock_now(self):
        self.cuda.log.append("read clock")
        slow = self.last == "level" and self.launches.count("level") in (3, 4)
        return (1200 if slow else 1980), ["SwPowerCap"]

    def launch_hold(self):
        return self.hold, None

    def hold_fields(self):
        return {"launch_hold": "held", "hold_timeouts": self.hold.timeouts}

    def check_memory(self, level, M, N, K):
        pass

    def prepare(self, level, M, N, K, params, warmup, on_compile=None):
        self.prepared.append((level.id, warmup))
        side = level.id if level.id in self.ms else (
            "reference" if level.kind == "reference" else "level")

        def launch():
            self.launches.append(side)
            self.last = side
            self.cuda.log.append("launch")
            self.cuda.gpu_ms += self.ms[side]
            self.clock.t += self.ms[side] / 1000 + 0.001

        return SimpleNamespace(level=level, launch=launch, shape=(M, N, K), verified=True)

    def flush(self):
        self.flushes += 1
        self.cuda.log.append("flush")

    def head(self, prep, tflops):
        M, N, K = prep.shape
        return {"level": prep.level.id, "M": M, "N": N, "K": K, "dtype": "bf16",
                "precision": str(prep.level.precision), "verified": True, "rel_err": 1e-3,
                "tol": 1e-2, "nan": False}

    def burst_energy(self, level, launch, flops, window_s=1.0):
        return {"energy_j": None, "energy_reason": "fake", "energy_window": None}


class Stream(SimpleNamespace):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _bench(**kw) -> PairBench:
    bench = PairBench(**kw)
    bench.stream = Stream(synchronize=lambda: None)
    return bench


def test_run_paired_gives_both_results_from_one_loop():
    bench = _bench()
    level, ref = registry.BY_ID["wgmma_tma"], registry.BY_ID[registry.BY_ID["wgmma_tma"].reference]
    ref_result, result = paired.run_paired(bench, level, ref, 256, 256, 256, MIN_PAIRS + 2, 2,
                                             2.0)
    # both prepared without warm-up, then warmed up alternately, then timed in pairs
    # until the (noise-free) ratio is precise: MIN_PAIRS
    assert bench.prepared == [(level.id, 0), (ref.id, 0)] and bench.pool_freed == 1
    assert bench.launches[:4] == ["level", "reference", "level", "reference"]
    assert len(bench.launches) == 4 + 2 * MIN_PAIRS  # a flush per timed launch:
    assert bench.flushes == 2 * MIN_PAIRS
    assert result["paired"] is True and result["pairs"] == MIN_PAIRS == result["repeats"]
    assert result["stop_reason"] == "precision" and result["max_pairs"] == MIN_PAIRS + 2
    assert result["pct_of_reference"] == pytest.approx(80.0)
    assert result["pct_estimator"] == "hodges-lehmann"
    assert result["pct_ci_low"] <= result["pct_of_reference"] <= result["pct_ci_high"]
    assert result["throttled_pairs"] == 2 and result["pct_of_reference_unthrottled"] == \
        pytest.approx(80.0)
    assert result["median_ms"] == pytest.approx(1.25) and ref_result["median_ms"] == 1.0
    assert result["reference"] == ref.id
    assert result["reference_tflops"] == ref_result["tflops"]
    assert result["tflops"] / ref_result["tflops"] == pytest.approx(0.8)
    assert result["sm_clock_mhz_min"] == 1200.0 and ref_result["sm_clock_mhz_avg"] == 1980.0
    assert result["reference_sm_clock_mhz_avg"] == 1980.0
    assert result["clock_source"] == "launches" and result["throttled"] == ["SwPowerCap"]
    assert ref_result["paired_with"] == level.id and "paired" not in ref_result
    assert result["budget_s_per_pair"] == 2.0 and result["target_half_width_pct"] == 0.5


def test_an_fp8_level_is_paired_with_deepgemm_too_in_a_loop_of_its_own():
    bench = _bench()
    bench.ms["deepgemm_fp8"] = 1.1  # the level at 1.25 ms: 88% of DeepGEMM
    level = registry.BY_ID["fp8_block_scaled"]
    ref, deep = registry.BY_ID[level.reference], registry.BY_ID["deepgemm_fp8"]
    _ref_result, result = paired.run_paired(bench, level, ref, 256, 256, 256, MIN_PAIRS + 2, 1,
                                            2.0, second=deep)
    assert result["pct_of_reference"] == pytest.approx(80.0)
    assert result["deepgemm"] == "deepgemm_fp8" and result["deepgemm_pairs"] == MIN_PAIRS
    assert result["deepgemm_pct"] == pytest.approx(88.0)
    assert result["deepgemm_ci_low"] <= result["deepgemm_pct"] <= result["deepgemm_ci_high"]
    assert result["deepgemm_stop_reason"] == "precision" and result["deepgemm_verified"]
    assert bench.prepared[-1] == ("deepgemm_fp8", 0)
    decode(json.dumps({"type": "result", "t": 1.0, **result}))


def serve_paired(bench, cmd: dict) -> list[dict]:
    out = io.StringIO()
    runner = Runner(out, telemetry_hz=0)
    runner.bench = bench
    runner.device = None  # refusal() of an sm_90a level needs a device: a non-Hopper level
    runner.handle(commands.parse_command(json.dumps(cmd)))
    return [json.loads(x) for x in out.getvalue().splitlines()]


def test_the_runner_emits_the_reference_paired_with_the_level_and_every_launch():
    lines = serve_paired(_bench(), {"cmd": "run", "id": "r", "level": "cp_async_interior",
                                    "M": 256, "N": 256, "K": 256, "repeats": 2 * MIN_PAIRS,
                                    "pair_budget_s": 5})
    kinds = [e["type"] for e in lines]
    assert "error" not in kinds, lines
    ref_id = registry.BY_ID["cp_async_interior"].reference
    starts = [e for e in lines if e["type"] == "run_start"]
    assert [s["level"] for s in starts] == [ref_id, "cp_async_interior"]
    assert starts[0]["paired_with"] == "cp_async_interior" and starts[1]["paired"] is True
    repeats = [e for e in lines if e["type"] == "repeat"]
    assert len(repeats) == 2 * MIN_PAIRS
    of_ref = [e for e in repeats if e.get("of") == "reference"]
    assert len(of_ref) == MIN_PAIRS and all(e["level"] == ref_id for e in of_ref)
    assert sorted(e["pair"] for e in repeats if "of" not in e) == list(range(MIN_PAIRS))
    results = [e for e in lines if e["type"] == "result"]
    assert [r["level"] for r in results] == [ref_id, "cp_async_interior"]
    assert results[0]["paired_with"] == "cp_async_interior"
    level = results[1]
    assert level["paired"] and level["pairs"] == MIN_PAIRS and level["budget_s_per_pair"] == 5.0
    # every event decodes as the app reads it
    for e in lines:
        if e["type"] in ("run_start", "repeat", "result"):
            decode(json.dumps(e))
    decoded = decode(json.dumps(level))
    assert decoded.paired is True and decoded.stop_reason == "precision"
    assert decoded.pct_ci_low <= decoded.pct_of_reference <= decoded.pct_ci_high


def test_a_run_without_compare_or_of_a_reference_is_not_paired():
    bench = _bench()
    runner = Runner(io.StringIO(), telemetry_hz=0)
    runner.bench = bench
    level = registry.BY_ID["cp_async_interior"]
    burst = commands.parse_command(json.dumps({"cmd": "run", "level": level.id, "M": 64,
                                               "N": 64, "K": 64}))
    assert runner._pairable(level, burst) is not None
    for extra in ({"compare": False},):
        cmd = commands.parse_command(json.dumps({"cmd": "run", "level": level.id, "M": 64,
                                                 "N": 64, "K": 64, **extra}))
        assert runner._pairable(level, cmd) is None
    assert runner._pairable(registry.BY_ID[level.reference], burst) is None


@pytest.mark.parametrize("bad", [0.05, 601, "2", None, float("nan")])
def test_the_pair_budget_is_checked(bad):
    with pytest.raises(commands.ProtocolError, match="pair_budget_s"):
        commands.parse_command(json.dumps({"cmd": "run", "level": "naive", "M": 8, "N": 8,
                                           "K": 8, "pair_budget_s": bad}))


def test_the_cli_pair_budget_reaches_the_run_command_and_is_checked():
    from gemmscope.kernels.cli import main as cli

    def plan(*argv):
        return cli.plan(cli.build_parser().parse_args(["bench", "-l", "cp_async", *argv]))

    (run,) = plan("--pair-budget-s", "5")
    assert run.pair_budget_s == 5.0
    assert commands.parse_command(json.dumps(run.command("x"))).pair_budget_s == 5.0
    (plain,) = plan()
    assert "pair_budget_s" not in plain.command("x")
    assert commands.parse_command(json.dumps(plain.command("x"))).pair_budget_s == 2.0
    for argv, said in ((["--pair-budget-s", "0"], "from 0.1 to 600"),
                       (["--pair-budget-s", "3", "--sustained"], "applies to burst runs")):
        err = io.StringIO()
        assert cli.main(["bench", "-l", "naive", *argv], stdout=io.StringIO(),
                        stderr=err) == 2
        assert said in err.getvalue()


def test_deepgemm_is_a_second_reference_of_fp8_levels_only_where_it_runs(monkeypatch):
    from gemmscope.kernels.engine import runner as runner_module

    runner = Runner(io.StringIO(), telemetry_hz=0)
    cmd = commands.parse_command(json.dumps({"cmd": "run", "level": "fp8_block_scaled",
                                             "M": 256, "N": 256, "K": 256}))
    fp8, bf16 = registry.BY_ID["fp8_block_scaled"], registry.BY_ID["wgmma_tma"]
    monkeypatch.setattr(runner_module, "refusal", lambda *a: None)  # as on an H200 with it
    assert runner._second_reference(fp8, cmd).id == "deepgemm_fp8"
    assert runner._second_reference(bf16, cmd) is None
    monkeypatch.setattr(runner_module, "refusal", lambda *a: ValueError("no deep_gemm"))
    assert runner._second_reference(fp8, cmd) is None


def test_an_update_runs_a_paired_result_again_with_its_bound_and_budget():
    from gemmscope.kernels.cli.update_plan import _request

    base = {"type": "result", "t": 1.0, "level": "cp_async", "M": 64, "N": 64, "K": 64,
            "dtype": "fp32", "median_ms": 0.01, "tflops": 0.1, "verified": True,
            "rel_err": 1e-7, "repeats": 37}
    paired_run = _request(decode(json.dumps({**base, "paired": True, "max_pairs": 1000,
                                             "budget_s_per_pair": 3.0})))
    assert (paired_run.max_pairs, paired_run.pair_budget_s) == (1000, 3.0)
    old = _request(decode(json.dumps(base)))  # an unpaired result, as recorded
    assert (old.repeats, old.pair_budget_s) == (37, None)


def test_each_timed_launch_is_held_until_its_end_event_is_queued():
    """The GPU reaches a launch's start event only after the host has queued the launch
    and its end event, so the events time GPU work, not the host's queuing (a cuBLAS call
    at 256³ read 10x slow without it); the clock is read while the launch runs."""
    bench = _bench()
    level, ref = registry.BY_ID["wmma"], registry.BY_ID[registry.BY_ID["wmma"].reference]
    _ref_result, result = paired.run_paired(bench, level, ref, 256, 256, 256, 12, 0, 2.0)
    one = ["flush", "hold", "event", "launch", "event", "release", "read clock", "settled"]
    timed = [x for x in bench.cuda.log]
    assert timed[:len(one)] == one
    assert timed == one * (2 * result["pairs"])
    assert result["launch_hold"] == "held" and result["hold_timeouts"] == 0


def test_a_references_energy_window_is_measured_once_then_taken_again_with_its_age():
    measured = []

    def measure():
        measured.append(1)
        return {"energy_j": 0.5, "energy_window": {"asked_s": 0.5, "gpu_s": 0.5}}

    kept = paired.ReusedEnergy(max_age_s=60.0)
    first = kept.take(10.0, measure)
    again = kept.take(25.0, measure)
    assert len(measured) == 1 and first["energy_window"].get("reused_after_s") is None
    assert again["energy_j"] == 0.5 and again["energy_window"]["reused_after_s"] == 15.0
    assert kept.take(71.0, measure)["energy_window"].get("reused_after_s") is None
    assert len(measured) == 2  # too old: measured again


def test_a_window_without_energy_is_not_kept_for_the_next_level():
    calls = []

    def measure():
        calls.append(1)
        return {"energy_j": None, "energy_window": None, "energy_reason": "no counter"}

    kept = paired.ReusedEnergy()
    kept.take(1.0, measure)
    kept.take(2.0, measure)
    assert len(calls) == 2

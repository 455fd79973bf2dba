"""Stand-ins for the runner's bench shared by tests of several folders: the H200's device
facts (tests/gpu/test_limits_gpu.py checks them on the GPU), a bench that records the runs
asked of it (LimitsBench), one that runs sustained and burst runs on a fake GPU
(SustainedBench), and ``serve``: run commands through a Runner on a bench."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any

from fake_gpu_energy import FakeGPU
from runner_subprocess import wire

from gemmscope.kernels.device.gpu import DeviceInfo, DeviceLimits
from gemmscope.kernels.device.telemetry import RunWindow
from gemmscope.kernels.engine.energy import EnergyCounter, measure_window
from gemmscope.kernels.engine.runner import Runner
from gemmscope.kernels.protocol import commands

# cudaDevAttr values of the H200 (GPU_NOTES.md; tests/gpu/test_limits_gpu.py reads them)
H200_LIMITS = DeviceLimits(max_threads_per_block=1024, max_block_dim_x=1024,
                           max_block_dim_y=1024, max_grid_dim_y=65535,
                           smem_per_block_bytes=48 * 1024, smem_per_block_optin_bytes=232448,
                           regs_per_block=65536)
H200 = DeviceInfo(name="NVIDIA H200", sm_count=132, cc="9.0", arch="sm_90",
                  sm_clock_max_mhz=1980, mem_clock_max_mhz=3201, memory_gib=140,
                  l2_bytes=60 << 20, driver="13.0", cuda_runtime="13.0", cupy="14.2",
                  limits=H200_LIMITS)


class LimitsBench:
    """Stands in for measure.Bench: records the runs asked of it, or raises."""

    def __init__(self, raises: BaseException | None = None):
        self.raises = raises
        self.runs: list[str] = []

    def run(self, level, M, N, K, repeats, warmup, on_repeat, params, settle_s=0.0,
            on_settle=None, on_compile=None, energy_s=1.0) -> dict[str, Any]:
        self.runs.append(level.id)
        if self.raises is not None:
            raise self.raises
        return {"level": level.id, "M": M, "N": N, "K": K, "dtype": "fp32",
                "precision": str(level.precision), "median_ms": 1.0, "tflops": 1.0,
                "verified": True, "rel_err": 0.0, "tol": 1e-4, "nan": False, "repeats": repeats}


def paired_results(bench: Any, level, reference, M, N, K, max_pairs, warmup, budget_s,
                   on_launch, params, settle_s=0.0, on_settle=None, second=None,
                   on_compile=None, energy_s=1.0, ref_energy=None):
    """What paired.run_paired returns, from the fake's two plain runs: the
    reference's result (paired_with the level) and the level's with made-up paired
    fields (three pairs, each launch said through ``on_launch``)."""
    if settle_s:  # one settle for the pair loop
        on_settle(settle_s)
    ref = bench.run(reference, M, N, K, max_pairs, warmup, lambda i, ms: None, None,
                    energy_s=energy_s)
    result = bench.run(level, M, N, K, max_pairs, warmup, lambda i, ms: None, params,
                       on_compile=on_compile, energy_s=energy_s)
    for i in range(3):
        on_launch("level", i, 1.0)
        on_launch("reference", i, 0.5)
    pct = 100.0 * result["tflops"] / ref["tflops"]
    ref.update({"paired_with": level.id, "settle_s": settle_s})
    result.update({"reference": reference.id, "reference_tflops": ref["tflops"],
                   "reference_sm_clock_mhz_avg": None, "paired": True, "pairs": 3,
                   "stop_reason": "repeats", "pct_of_reference": pct, "pct_ci_low": None,
                   "pct_ci_high": None, "throttle_rule": "made up", "throttled_pairs": 0,
                   "pct_of_reference_unthrottled": pct, "budget_s_per_pair": budget_s,
                   "target_half_width_pct": 0.5, "settle_s": settle_s})
    return ref, result


class FakeStream:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class SideOfGPU:
    """The fake GPU running one prepared level's batches (a paired sustained run has two
    at once): its GEMMs per batch set before anything else is asked of it."""

    def __init__(self, gpu: FakeGPU, per_batch: int):
        self._gpu, self._per_batch = gpu, per_batch

    def __getattr__(self, name: str) -> Any:
        self._gpu.per_batch = self._per_batch
        return getattr(self._gpu, name)


class SustainedBench:
    """What run_sustained and the runner use of measure.Bench, on a fake GPU."""

    def __init__(self, verified: bool = True):
        self.gpu = FakeGPU(batch_s=0.05, per_batch=50)
        self.device = H200
        self.cp = SimpleNamespace(get_default_memory_pool=lambda: SimpleNamespace(
            free_all_blocks=lambda: None))
        self.clock = self.gpu.clock
        self.stream = FakeStream()
        self.nvml = SimpleNamespace(temperature_c=lambda: 50.0, power_limit_w=lambda: 700.0)
        self.counter = EnergyCounter(self.gpu.read_j, clock=self.gpu.clock,
                                     sleep=self.gpu.sleep)
        self.verified = verified
        self.graph_asked: list[bool] = []
        self.burst_runs: list[str] = []
        self.energy_asked: list[float] = []  # the energy window each burst run was given
        self.built: set[str] = set()  # levels "compiled" in this process, as nvrtc's cache
        self.per_batch_of: dict[Any, int] = {}  # each prepared launch's GEMMs per batch

    def _build(self, level, on_compile) -> dict[str, Any]:
        """A level's first run builds it (on_compile, then the result's compile fields),
        as measure.level_launcher does; a reference compiles nothing."""
        if level.kind == "reference" or level.id in self.built:
            return {}
        self.built.add(level.id)
        if on_compile is not None:
            on_compile()
        return {"compile_s": 2.5, "compile_cached": False}

    def check_memory(self, level, M, N, K) -> None:
        pass

    def prepare(self, level, M, N, K, params, warmup, settle=None, on_compile=None):
        self._build(level, on_compile)
        # a reference runs twice as many GEMMs per batch as a level: twice the TFLOPS
        self.gpu.per_batch = 100 if level.kind == "reference" else 50

        def launch():
            pass

        self.per_batch_of[launch] = self.gpu.per_batch
        return SimpleNamespace(level=level, shape=(M, N, K), verified=self.verified,
                               launch=launch,
                               why_wrong=lambda: "relative error 0.5 > tolerance 1e-04")

    def batches(self, body, graph):
        self.graph_asked.append(graph)
        return SideOfGPU(self.gpu, self.per_batch_of[body])

    def window(self, batches, window_s):
        return measure_window(batches, self.counter, window_s, self.clock)

    def samples(self, t0, t1):
        return RunWindow(1700.0, 1500.0, None, 640.0, ["SwPowerCap"], 40)

    def head(self, prep, tflops):
        M, N, K = prep.shape
        return {"level": prep.level.id, "M": M, "N": N, "K": K, "dtype": "fp32",
                "precision": str(prep.level.precision), "verified": True, "rel_err": 1e-7}

    def run(self, level, M, N, K, repeats, warmup, on_repeat, params, settle_s=0.0,
            on_settle=None, on_compile=None, energy_s=1.0):
        self.burst_runs.append(level.id)
        self.energy_asked.append(energy_s)
        built = self._build(level, on_compile)
        tflops = 40.0 if level.kind == "reference" else 10.0
        if settle_s:  # the runner's phase callback, as measure.Bench.run calls it
            on_settle(settle_s)
        on_repeat(0, 1.0)
        return {"level": level.id, "M": M, "N": N, "K": K, "dtype": "fp32",
                "precision": "fp32", "mode": "burst", "median_ms": 1.0, "tflops": tflops,
                "verified": True, "rel_err": 1e-7, "nan": False, "repeats": repeats,
                "settle_s": settle_s, **built}


def serve(bench: SustainedBench, *lines: dict) -> list[dict]:
    out = io.StringIO()
    runner = Runner(out, telemetry_hz=0)
    runner.bench = bench
    runner.pair_burst = paired_results
    for cmd in lines:
        runner.handle(commands.parse_command(json.dumps(cmd)))
    return [wire(x) for x in out.getvalue().splitlines()]

"""benchmarks/energy_check.py without a GPU: its counter reads wait for a step, its plain
trial counts every launch between the two reads, and its table shows both figures."""

from __future__ import annotations

import benchmark_script
import pytest
from fake_gpu_energy import FakeGPU


@pytest.fixture(scope="module")
def check():
    return benchmark_script.load("energy_check")


class FakeNvml:
    """pynvml's counter call on a FakeGPU (mJ)."""

    def __init__(self, gpu: FakeGPU):
        self.gpu = gpu

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        return self.gpu.read_j() * 1000.0


def test_plain_trial_reads_after_steps_around_the_launches(check, monkeypatch):
    gpu = FakeGPU(step_s=0.05, idle_w=100.0, load_w=600.0, now=1000.013)
    monkeypatch.setattr(check.time, "perf_counter", gpu.clock)
    monkeypatch.setattr(check.time, "sleep", gpu.sleep)
    launches = []

    def launch():  # one GEMM of 1 ms, queued after the previous one
        launches.append(gpu.now)
        begin = max(gpu.now, gpu.gpu_free_at)
        gpu.busy.append((begin, begin + 0.001))
        gpu.gpu_free_at = begin + 0.001

    class FakeCuPy:
        class cuda:
            class runtime:
                @staticmethod
                def deviceSynchronize():
                    gpu.now = max(gpu.now, gpu.gpu_free_at)

    trial = check.plain_trial(FakeCuPy, launch, 3000, FakeNvml(gpu), None)
    assert len(launches) == 3000
    # 1 ms at 600 W per GEMM, plus at most a step of idle draw spread over the launches
    assert 0.6 <= trial["j_per_gemm"] <= 0.6 + 100 * 0.051 / 3000


def test_table_has_both_figures_and_the_difference(check):
    row = {"level": "wgmma_tma", "size": 4096, "verified": True, "launches": 17000,
           "plain_j": 0.1452, "plain_j_min": 0.1448, "plain_j_max": 0.1460, "plain_w": 688.0,
           "sustained_j": 0.1440, "sustained_j_min": 0.1436, "sustained_j_max": 0.1445,
           "sustained_w": 690.3, "sustained_tflops": 664.2, "sustained_method": "graph",
           "diff_pct": -0.83}
    text = check.table([row])
    head, line = text.splitlines()
    assert head.split()[:3] == ["level", "shape", "N"] and "diff %" in head
    assert "0.1452 [0.1448-0.146]" in line and "0.144 [0.1436-0.1445]" in line
    assert "-0.83" in line and "4096^3" in line and "664.2" in line

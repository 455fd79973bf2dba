"""Energy from a stepping counter around windows of back-to-back launches, with a fake GPU
and a fake clock (kernels/engine/energy.py)."""

from __future__ import annotations

import pytest
from fake_gpu_energy import FakeGPU

from gemmscope.kernels.engine.energy import (
    EnergyCounter,
    batch_size,
    measure_window,
    run_batches,
)


def counter_of(gpu: FakeGPU, **kw) -> EnergyCounter:
    return EnergyCounter(gpu.read_j, clock=gpu.clock, sleep=gpu.sleep, **kw)


def test_reads_come_just_after_a_step_and_measure_the_step():
    gpu = FakeGPU(step_s=0.05, now=1000.012)
    counter = counter_of(gpu)
    opened = counter.open()
    assert opened is not None and opened.aligned
    # just after a step boundary (within a poll), and the interval between two steps seen
    assert opened.t_s % 0.05 < 0.0006 or 0.05 - opened.t_s % 0.05 < 1e-9
    assert opened.step_s == pytest.approx(0.05, abs=0.001)
    assert opened.energy_j == pytest.approx(gpu.energy_exact(opened.t_s), abs=0.06)


def test_a_counter_that_never_steps_gives_an_unaligned_read():
    frozen = FakeGPU()
    counter = EnergyCounter(lambda: 5.0, clock=frozen.clock, sleep=frozen.sleep,
                            max_wait_s=0.2)
    mark = counter.next_step()
    assert mark is not None and not mark.aligned and mark.energy_j == 5.0
    opened = counter.open()
    assert opened is not None and opened.step_s is None


def test_no_counter_says_why():
    counter = EnergyCounter(lambda: None, reason="nvmlDeviceGetTotalEnergyConsumption: Not "
                                                 "Supported")
    assert counter.open() is None and counter.next_step() is None
    assert "Not Supported" in (counter.reason() or "")
    assert EnergyCounter(lambda: 1.0).reason() is None


def test_run_batches_keeps_a_batch_queued_and_stops_after_the_window():
    gpu = FakeGPU(batch_s=0.05, per_batch=10)
    waited_with_queue: list[bool] = []
    real_wait = gpu.wait

    def wait(mark):
        waited_with_queue.append(gpu.gpu_free_at > mark)  # a later batch is queued
        return real_wait(mark)

    gpu.wait = wait
    run = run_batches(gpu, 1.0)
    assert all(waited_with_queue) and waited_with_queue
    assert 1.0 <= run.gpu_s <= 1.0 + 2 * 0.05 + 1e-3
    assert run.launches == 10 * len(gpu.busy)
    # back to back: the GPU never idled between batches
    pairs = zip(gpu.busy, gpu.busy[1:], strict=False)
    assert all(b[0] == pytest.approx(a[1]) for a, b in pairs)


@pytest.mark.parametrize("step_s", [0.02, 0.05, 0.1])
def test_window_energy_is_the_load_energy_within_an_idle_step(step_s):
    gpu = FakeGPU(step_s=step_s, batch_s=0.05, per_batch=50, idle_w=100, load_w=600)
    gpu.now += 0.0371  # anywhere between two steps
    w = measure_window(gpu, counter_of(gpu), 3.0, gpu.clock)
    assert w.energy is not None and w.energy.aligned and w.energy_reason is None
    load_j = 600.0 * sum(b - a for a, b in gpu.busy)
    per_launch = load_j / w.launches
    # what is left: the idle draw at the two ends, less than a step plus polling
    assert 0 <= w.j_per_launch - per_launch <= 100.0 * (step_s + 0.002) / w.launches
    assert w.edge_s is not None and w.edge_s <= step_s + 0.002
    assert w.power_w == pytest.approx(600.0, rel=100 * step_s / 600 / 3 + 1e-3)
    assert not w.host_bound


def test_reading_without_waiting_for_steps_would_be_off_by_up_to_a_step():
    """Why the reads wait for steps: a plain read lags by up to a step at each end."""
    gpu = FakeGPU(step_s=0.1, batch_s=0.05, per_batch=50)
    gpu.now += 0.099
    e0, t0 = gpu.read_j(), gpu.now
    run_batches(gpu, 1.0)
    e1 = gpu.read_j()
    true_j = gpu.energy_exact(gpu.now) - gpu.energy_exact(t0)
    assert abs((e1 - e0) - true_j) / true_j > 0.03  # several percent off over 1 s


def test_window_without_counter_has_a_reason_and_still_times():
    gpu = FakeGPU()
    w = measure_window(gpu, None, 0.5, gpu.clock, no_counter="no NVML: not installed")
    assert w.energy is None and w.j_per_launch is None and w.power_w is None
    assert w.energy_reason == "no NVML: not installed" and w.gpu_s >= 0.5


def test_a_host_that_cannot_keep_up_is_flagged():
    gpu = FakeGPU(batch_s=0.001, enqueue_s=0.002)
    w = measure_window(gpu, counter_of(gpu), 0.2, gpu.clock)
    assert w.host_bound and w.ready_waits == w.waits


def test_a_host_blocked_by_a_full_queue_is_not_host_bound():
    """Blocking inside a launch means the GPU is busy: the host spends as long enqueuing
    as the GPU works, yet the GPU never waits for it."""
    gpu = FakeGPU(batch_s=0.05, full_queue_blocks=True)
    w = measure_window(gpu, counter_of(gpu), 1.0, gpu.clock)
    assert not w.host_bound and w.ready_waits == 0
    assert all(b[0] == pytest.approx(a[1]) for a, b in zip(gpu.busy, gpu.busy[1:],
                                                             strict=False))


def test_batch_size_aims_at_the_target():
    assert batch_size(0.001) == 50
    assert batch_size(1.0) == 1
    assert batch_size(1e-9) == 2000
    assert batch_size(0.0) == 2000

"""GPU side of the limits (run on the H200): the device's limits are the ones the CPU
tests assume, runs over them are refused before the launch and the runner serves on, and
a CUDA error that is not sticky does not end the runner."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gemmscope.kernels.drive.session import RunnerSession, default_runner_command
from gemmscope.kernels.engine import runner
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import decode
from gemmscope.kernels.protocol.plan import RunRequest

pytestmark = pytest.mark.gpu

FAULTY = str(Path(__file__).with_name("faulty_levels.py"))


def test_the_device_limits_are_the_ones_the_cpu_tests_assume():
    from fake_benches import H200_LIMITS

    from gemmscope.kernels.device.gpu import device_info, device_limits

    dev = device_info()
    if "H200" not in dev.name:
        pytest.skip(f"H200 limits, not {dev.name}'s")
    assert device_limits() == H200_LIMITS
    assert dev.limits == H200_LIMITS and dev.as_event()["limits"]["regs_per_block"] == 65536


def test_runs_over_the_limits_are_refused_and_the_runner_serves_on():
    client = RunnerSession(lambda e: None,
                           [*default_runner_command(0), "--levels-from", FAULTY])
    try:
        header = client.wait_ready()
        assert header.device.limits["smem_per_block_optin_bytes"] > 0
        def run(params: dict[str, int], **more) -> RunRequest:
            return RunRequest("cp_async", Shape(256, 256, 256), params=params, **more)

        cases = [({"STAGES": 64}, "MaxSharedMemoryPerBlockOptin"),
                 ({"BM": 7}, "BM=7 is not a multiple of WM=64"),
                 ({"TM": 0}, "TM=0 is out of range")]
        for params, message in cases:
            evs = client.run([run(params)])
            [err] = [e for e in evs if e.type == "error"]
            assert err.kind == "bad_input" and message in err.message, err
            assert not any(e.type in ("run_start", "result") for e in evs)
        # static + dynamic shared memory: known only once compiled, refused before launch
        evs = client.run([RunRequest("test_smem_over", Shape(64, 64, 64), compare=False)])
        [err] = [e for e in evs if e.type == "error"]
        assert err.kind == "unsupported", err
        assert "(190000 dynamic + " in err.message and "static)" in err.message
        # a run within the limits, in the same runner
        evs = client.run([run({"STAGES": 4}, repeats=2)])
        assert [e for e in evs if e.type == "result"][-1].verified
        assert client.restarts == 0
    finally:
        client.close()


def test_a_cuda_error_that_is_not_sticky_does_not_end_the_runner(monkeypatch):
    import cupy

    out = io.StringIO()
    r = runner.Runner(out, telemetry_hz=0)
    r.start()
    try:
        assert r.bench is not None

        def invalid_value(*args, **kwargs):
            raise cupy.cuda.driver.CUDADriverError(1)  # CUDA_ERROR_INVALID_VALUE

        with monkeypatch.context() as m:
            m.setattr(r.bench, "run", invalid_value)
            code = r.serve(['{"cmd": "run", "level": "naive", "M": 64, "N": 64, "K": 64, '
                            '"compare": false, "id": 1}'])
        assert code == 0
        code = r.serve(['{"cmd": "run", "level": "naive", "M": 64, "N": 64, "K": 64, '
                        '"compare": false, "repeats": 2, "id": 2}'])
        assert code == 0
    finally:
        r.stop()
    events = [decode(x) for x in out.getvalue().splitlines()]
    err = next(e for e in events if e.type == "error")
    assert err.kind == "launch" and "CUDA_ERROR_INVALID_VALUE" in err.message
    assert "context is lost" not in err.message
    assert any(e.type == "result" and e.id == 2 and e.verified for e in events)

"""A level's parameters against its rules and the device's limits, and which CUDA errors
end the runner: all before anything is compiled or launched, so tested without a GPU
(the H200's limits are given; tests/gpu/test_limits_gpu.py checks them on the device)."""

from __future__ import annotations

import dataclasses
import io

import msgspec
import pytest
from fake_benches import H200, H200_LIMITS, paired_results
from fake_benches import LimitsBench as FakeBench
from runner_subprocess import wire

from gemmscope.kernels.device import gpu
from gemmscope.kernels.device.gpu import DeviceInfo, DeviceLimits, is_sticky
from gemmscope.kernels.engine import measure, runner
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import model_for
from gemmscope.kernels.protocol.decoding import from_builtins

# an sm_86 part: 99 KiB of shared memory per block at most
RTX = dataclasses.replace(H200, name="NVIDIA GeForce RTX 3090", cc="8.6", arch="sm_86",
                          limits=dataclasses.replace(H200_LIMITS,
                                                     smem_per_block_optin_bytes=101376))


# ------------------------------------------------------------------ the levels' rules

@pytest.mark.parametrize("level_id, params, message", [
    ("register_2d", {"BM": 7}, "BM=7 is not a multiple of TM=8"),
    ("register_2d", {"TM": 0}, "TM=0 is out of range (1 to 4096)"),
    ("register_2d", {"TN": -8}, "TN=-8 is out of range"),
    ("register_2d", {"BK": 10**90}, "out of range"),
    ("vectorized", {"BN": 100}, "BN=100 is not a multiple of TN=8"),
    ("warp_tiling", {"WMITER": 3}, "WM=64 is not a multiple of WMITER=3"),
    ("warp_tiling", {"WM": 48}, "BM=128 is not a multiple of WM=48"),
    ("cp_async", {"TM": 3}, "a warp sub-tile side of 16 is not a multiple of TM=3"),
    ("wmma", {"WN": 0}, "WN=0 is out of range"),
    ("wgmma_tma", {"KPIPE": 2}, "KPIPE is a switch: 0 or 1"),
    ("wgmma_tma", {"GM": 0}, "GM=0 is out of range"),
    ("smem_tiled", {"TILE": 64}, "a block of 4096 threads; CUDA allows at most 1024"),
    ("naive", {"BLOCK": True}, "BLOCK must be a whole number"),
])
def test_params_that_break_a_rule_are_refused_with_the_rule(level_id, params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        registry.get(level_id).with_params(params)


def test_params_within_the_rules_are_taken():
    assert registry.get("cp_async").with_params({"GM": 4, "STAGES": 4}).params["STAGES"] == 4
    assert registry.get("warp_tiling").with_params({"PF": 1}).threads == (256, 1)
    assert registry.get("smem_tiled").with_params({"TILE": 16}).threads == (16, 16)


def test_access_models_refuse_params_that_break_a_rule():
    """A recording's counters params reach the models: TILE=0 divided by zero there."""
    for params in ({"TILE": 0}, {"TILE": 4096}):
        with pytest.raises(ValueError, match="smem_tiled: "):
            model_for("smem_tiled", params)
    assert model_for("smem_tiled", {"TILE": 16}) is not None


# ------------------------------------------------------------------ the device's limits

def test_every_level_fits_the_h200_as_registered():
    for level in registry.ladder():
        assert measure.over_limits(level, H200_LIMITS) is None, level.id
        assert measure.refusal(level, 4096, 4096, 4096, H200) is None, level.id


def test_too_much_shared_memory_is_refused_naming_the_limit():
    level = registry.get("cp_async").with_params({"STAGES": 64})
    why = measure.refusal(level, 256, 256, 256, H200)
    assert why is not None and why.kind == "bad_input"  # the command asked for it
    assert "1589248 bytes (1552 KiB) of shared memory per block" in str(why)
    assert "at most 232448 bytes (227 KiB) per block (MaxSharedMemoryPerBlockOptin)" in str(why)


def test_a_level_that_does_not_fit_the_device_as_registered_is_unsupported():
    wmma = registry.get("wmma")
    need = wmma.dyn_smem_bytes()
    assert need > RTX.limits.smem_per_block_optin_bytes  # the premise: 99 KiB on sm_86
    why = measure.refusal(wmma, 4096, 4096, 4096, RTX)
    assert why is not None and why.kind == "unsupported"
    assert f"{need} bytes" in str(why) and "101376" in str(why)


def test_limits_known_after_compiling_are_checked_before_the_launch():
    level = registry.get("warp_tiling")
    # static + dynamic shared memory
    why = measure.over_limits(level, H200_LIMITS, static_smem=48_000, dyn_smem=190_000)
    assert "238000 bytes" in why and "(190000 dynamic + 48000 static)" in why
    # registers: 255 per thread leave room for 256 threads of this kernel, not 1024
    big = registry.get("smem_tiled")  # 32x32 = 1024 threads
    why = measure.over_limits(big, H200_LIMITS, regs=255, max_threads=256)
    assert "1024 threads needs 261120 registers at 255 per thread" in why
    assert "65536 per block (MaxRegistersPerBlock)" in why
    assert measure.over_limits(big, H200_LIMITS, regs=64, max_threads=1024) is None
    # a block wider than the device's
    narrow = dataclasses.replace(H200_LIMITS, max_block_dim_y=16)
    assert "MaxBlockDimY" in measure.over_limits(big, narrow)


def test_limits_come_from_the_cuda_device_attributes():
    attrs = {"MaxThreadsPerBlock": 1024, "MaxBlockDimX": 1024, "MaxBlockDimY": 1024,
             "MaxGridDimY": 65535, "MaxSharedMemoryPerBlock": 49152,
             "MaxSharedMemoryPerBlockOptin": 232448, "MaxRegistersPerBlock": 65536,
             "MultiProcessorCount": 132}
    assert DeviceLimits.from_attributes(attrs) == H200_LIMITS
    assert H200.as_event()["limits"]["smem_per_block_optin_bytes"] == 232448
    # a header with limits passes the reader as it is
    header = from_builtins({"type": "session", "t": 0, "protocol": 1, "created": "x",
                            "levels": {}, "device": H200.as_event()})
    assert msgspec.structs.asdict(header.device) == {"uuid": None, **H200.as_event()}


# ------------------------------------------------------------------ sticky CUDA errors

class CUDADriverError(RuntimeError):
    """Named like CuPy's, as the runner recognises CUDA errors by class name."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status


class CUDARuntimeError(CUDADriverError):
    pass


@pytest.mark.parametrize("exc, sticky", [
    (CUDADriverError(700, "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access"), True),
    (CUDADriverError(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION: an illegal instruction"), True),
    (CUDADriverError(719, "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure"), True),
    (CUDARuntimeError(214, "cudaErrorECCUncorrectable: uncorrectable ECC error"), True),
    (CUDARuntimeError(710, "cudaErrorAssert: device-side assert triggered"), True),
    (CUDARuntimeError(716, "cudaErrorMisalignedAddress: misaligned address"), True),
    (RuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered"), True),
    (CUDADriverError(1, "CUDA_ERROR_INVALID_VALUE: invalid argument"), False),
    (CUDARuntimeError(2, "cudaErrorMemoryAllocation: out of memory"), False),
    (CUDARuntimeError(701, "cudaErrorLaunchOutOfResources: too many resources requested"),
     False),
    (CUDARuntimeError(9, "cudaErrorInvalidConfiguration: invalid configuration argument"),
     False),
])
def test_only_sticky_cuda_errors_are_sticky(exc, sticky):
    assert is_sticky(exc) is sticky


# ------------------------------------------------------------------ the runner's answers

def fake_gpu_runner(bench: FakeBench, device: DeviceInfo = H200) -> tuple[runner.Runner,
                                                                          io.StringIO]:
    out = io.StringIO()
    r = runner.Runner(out, telemetry_hz=0)
    r.device, r.bench = device, bench  # as start() leaves them on a GPU machine
    r.pair_burst = paired_results
    return r, out


def answers(out: io.StringIO) -> list[dict]:
    return [wire(x) for x in out.getvalue().splitlines()]


RUN = '{"cmd": "run", "level": "cp_async", "M": 256, "N": 256, "K": 256, "id": 1'


def test_over_the_limits_nothing_reaches_the_gpu_and_the_runner_serves_on():
    bench = FakeBench()
    r, out = fake_gpu_runner(bench)
    code = r.serve([RUN + ', "params": {"STAGES": 64}}', RUN + ', "params": {"BM": 7}}',
                    '{"cmd": "ping", "id": 2}'])
    assert code == 0 and bench.runs == []  # not even the cuBLAS reference ran
    errors = [e for e in answers(out) if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["bad_input", "bad_input"]
    assert "shared memory per block" in errors[0]["message"]
    assert "MaxSharedMemoryPerBlockOptin" in errors[0]["message"]
    assert errors[1]["message"] == "cp_async: BM=7 is not a multiple of WM=64"
    assert (errors[0]["level"], errors[0]["M"], errors[0]["id"]) == ("cp_async", 256, 1)
    assert any(e["type"] == "pong" for e in answers(out))


def test_a_cuda_error_that_is_not_sticky_is_answered_and_the_runner_serves_on(monkeypatch):
    monkeypatch.setattr(runner, "context_usable", lambda: True)
    r, out = fake_gpu_runner(FakeBench(CUDADriverError(1, "CUDA_ERROR_INVALID_VALUE: bad")))
    code = r.serve([RUN + ', "compare": false}', '{"cmd": "ping", "id": 2}'])
    assert code == 0
    events = answers(out)
    [err] = [e for e in events if e["type"] == "error"]
    assert err["kind"] == "launch" and "CUDA_ERROR_INVALID_VALUE" in err["message"]
    assert "context is lost" not in err["message"]
    assert [e["type"] for e in events][-3:] == ["pong", "done", "bye"]


def test_a_cuda_error_that_leaves_the_device_unusable_ends_the_runner(monkeypatch):
    monkeypatch.setattr(runner, "context_usable", lambda: False)
    r, out = fake_gpu_runner(FakeBench(CUDADriverError(1, "CUDA_ERROR_INVALID_VALUE: bad")))
    assert r.serve([RUN + ', "compare": false}', '{"cmd": "ping"}']) == runner.EXIT_CONTEXT_LOST
    r, out = fake_gpu_runner(FakeBench(CUDADriverError(700, "CUDA_ERROR_ILLEGAL_ADDRESS: x")))
    assert r.serve([RUN + ', "compare": false}', '{"cmd": "ping"}']) == runner.EXIT_CONTEXT_LOST
    err = next(e for e in answers(out) if e["type"] == "error")
    assert err["kind"] == "launch" and "context is lost" in err["message"]


def test_a_bug_in_the_runner_is_answered_as_internal_and_the_runner_serves_on(monkeypatch):
    r, out = fake_gpu_runner(FakeBench())

    def broken(cmd: dict) -> bool:
        raise KeyError("a bug")

    monkeypatch.setattr(r, "run", broken)
    assert r.serve([RUN + "}", '{"cmd": "ping", "id": 2}']) == 0
    events = answers(out)
    err = next(e for e in events if e["type"] == "error")
    assert err["kind"] == "internal" and "KeyError('a bug')" in err["message"]
    assert err["id"] == 1 and {"type": "done", "id": 1} in [
        {k: v for k, v in e.items() if k != "t"} for e in events]
    assert any(e["type"] == "pong" for e in events)


def test_no_gpu_is_still_said_after_the_rules_pass(monkeypatch):
    monkeypatch.setattr(gpu, "_state", (None, "CuPy is not installed (test)"))
    out = io.StringIO()
    r = runner.Runner(out, telemetry_hz=0)
    r.start()
    try:
        r.serve([RUN + ', "params": {"STAGES": 4}}', RUN + ', "params": {"TM": 0}}'])
    finally:
        r.stop()
    errors = [e for e in answers(out) if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["no_gpu", "bad_input"]

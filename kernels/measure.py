"""Launch, verify and time one level at one shape (GPU side, inside the runner process).

Truth rules (shared/DESIGN.md): fresh random inputs for every run, never zeros; C is
poisoned with NaN before the checked launch; the reference is a float64 product of the
same rounded inputs; timing uses CUDA events around each launch after warm-up, with L2
flushed before every timed launch, and reports the median and spread.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gemmscope.kernels import build, hopper
from gemmscope.kernels.gpu import DeviceInfo, DeviceLimits, device_limits, require_cupy
from gemmscope.kernels.operands import (
    OUTPUT_BYTES,
    Operands,
    check,
    output_format,
    random_inputs,
)
from gemmscope.kernels.registry import BY_ID, DTYPE_OF, TOLERANCE, Kind, Level, Precision

ITEMSIZE = {Precision.FP32: 4, Precision.TF32: 4, Precision.FP16: 2, Precision.BF16: 2,
            Precision.FP8: 1}
CUBLAS_COMPUTE_DEFAULT, CUBLAS_COMPUTE_TF32 = 1, 7  # cupy._core compute types


class Refused(ValueError):
    """The level cannot run this shape or on this device; the message says why."""

    def __init__(self, message: str, kind: str = "refused"):
        super().__init__(message)
        self.kind = kind


def refusal(level: Level, M: int, N: int, K: int, device: DeviceInfo | None) -> Refused | None:
    """Why a level cannot run here, checked before anything is allocated (or None)."""
    if level.arch == "sm_90a" and (device is None or not device.has_sm90a):
        return Refused(f"{level.id} needs Hopper (sm_90a)", "unsupported")
    if K % level.k_multiple:
        why = f" ({level.k_reason})" if level.k_reason else ""
        return Refused(f"{level.id} needs K to be a multiple of {level.k_multiple}{why}; K={K}")
    if level.id == "cublaslt_fp8":
        if not torch_scaled_mm_available():
            return Refused("cublaslt_fp8 needs torch with torch._scaled_mm (not installed "
                           "here); skipped", "unsupported")
        if M % 16 or N % 16 or K % 16:
            return Refused(f"cublaslt_fp8: torch._scaled_mm needs M, N and K to be multiples "
                           f"of 16; got {M}x{N}x{K}")
    _, gy, _ = level.grid(M, N) if level.kind is Kind.LEVEL else (1, 1, 1)
    if gy > 65535:
        return Refused(f"{level.id}: grid y of {gy} blocks exceeds 65535 for M={M}, N={N}")
    if level.kind is Kind.LEVEL and device is not None and device.limits is not None:
        why = over_limits(level, device.limits)
        if why is not None:
            return Refused(f"{level.id}: {why}", limit_kind(level))
    return None


def limit_kind(level: Level) -> str:
    """A level over the device's limits: the command's fault where it changed the
    level's parameters (bad_input), else the device's (unsupported)."""
    return "bad_input" if level.params != BY_ID.get(level.id, level).params else "unsupported"


def over_limits(level: Level, limits: DeviceLimits, static_smem: int = 0,
                dyn_smem: int | None = None, regs: int | None = None,
                max_threads: int | None = None) -> str | None:
    """Which of the device's per-block limits a launch of the level would break, or None.
    Before compiling only the block and the dynamic shared memory are known; after,
    ``static_smem``, ``regs`` and the kernel's ``max_threads`` (what its registers allow)."""
    bx, by = level.threads
    threads = bx * by
    if threads > limits.max_threads_per_block:
        return (f"a block of {threads} threads; the device allows "
                f"{limits.max_threads_per_block} threads per block (MaxThreadsPerBlock)")
    if bx > limits.max_block_dim_x or by > limits.max_block_dim_y:
        return (f"a block of {bx}x{by} threads; the device allows {limits.max_block_dim_x}x"
                f"{limits.max_block_dim_y} (MaxBlockDimX, MaxBlockDimY)")
    dyn = level.dyn_smem_bytes() if dyn_smem is None else dyn_smem
    smem = static_smem + dyn
    if smem > limits.smem_per_block_optin_bytes:
        parts = f" ({dyn} dynamic + {static_smem} static)" if static_smem else ""
        return (f"{smem} bytes ({smem / 1024:.0f} KiB) of shared memory per block{parts}; the "
                f"device allows at most {limits.smem_per_block_optin_bytes} bytes "
                f"({limits.smem_per_block_optin_bytes / 1024:.0f} KiB) per block "
                "(MaxSharedMemoryPerBlockOptin)")
    if max_threads is not None and threads > max_threads:
        need = f"{threads * regs} registers at {regs} per thread" if regs else "more registers"
        return (f"a block of {threads} threads needs {need}; the device has "
                f"{limits.regs_per_block} per block (MaxRegistersPerBlock), so this kernel "
                f"runs at most {max_threads} threads per block")
    return None


def torch_scaled_mm_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")


def torch_scaled_mm_launcher(ops: Operands, stream_ptr: int) -> Callable[[], None]:
    """cuBLASLt FP8 through torch._scaled_mm on the same stream, writing into ops.c:
    A row-major, B column-major (Bt row-major, transposed view), per-tensor scales."""
    import torch

    def view(x: Any, dtype: Any) -> Any:
        return torch.from_dlpack(x).view(dtype)

    a = view(ops.a, torch.float8_e4m3fn)
    b = view(ops.b, torch.float8_e4m3fn).t()
    c = view(ops.c, torch.bfloat16)
    sa = torch.from_dlpack(ops.scale_a.reshape(1)).float()
    sb = torch.from_dlpack(ops.scale_b.reshape(1)).float()
    stream = torch.cuda.ExternalStream(stream_ptr)

    def run_ref() -> None:
        with torch.cuda.stream(stream):
            torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, out=c)

    return run_ref


def bytes_needed(level: Level, M: int, N: int, K: int) -> int:
    """Device memory one run needs: inputs, C, and the float64 copies for verification."""
    item = ITEMSIZE[level.precision]
    out_item = OUTPUT_BYTES[output_format(level)]
    # inputs, their float32 originals, C, and the float64 check (A, B, C, reference)
    return (item + 4) * (M * K + K * N) + out_item * M * N + 8 * (M * K + K * N + 3 * M * N)


@dataclass(slots=True)
class Timing:
    times_ms: list[float]

    def summary(self) -> dict[str, float]:
        t = sorted(self.times_ms)
        q = statistics.quantiles(t, n=4) if len(t) >= 2 else [t[0]] * 3
        return {"median_ms": statistics.median(t), "min_ms": t[0], "max_ms": t[-1],
                "q1_ms": q[0], "q3_ms": q[2]}


# Shared memory per block above which a second block no longer fits on an H100/H200 SM
# (228 KB per SM, 1 KB of it reserved per block): launching with at least this much, the
# unused rest as dynamic shared memory, runs one block per SM (see ONE_BLOCK_PER_SM use).
ONE_BLOCK_PER_SM_SMEM = 120 * 1024


def level_launcher(level: Level, ops: Operands, params: dict[str, int] | None = None,
                   min_smem: int = 0) -> tuple[Callable[[], None], dict[str, Any]]:
    """Compile the level and return a launch of the variant this shape uses (on the
    current stream), with the kernel's variant and resources. ``min_smem``: launch with
    at least this much shared memory per block (static + dynamic), the kernel not using
    the extra, to control how many blocks share an SM (the ncu bank-conflict comparison)."""
    M, N, K = ops.shape
    built = build.compile_level(level, params)
    vec = level.use_vector_path(M, N, K) or not level.edge_variant
    kernel = built.kernels[vec]
    smem = level.dyn_smem_bytes(built.params)
    attrs = built.attributes(vec)
    static = attrs["smem_bytes"]
    if min_smem > static + smem:
        smem = min_smem - static
    why = over_limits(level, device_limits(), static, smem, attrs["regs"],
                      int(kernel.max_threads_per_block))
    if why is not None:  # checked here, a launch never fails for want of resources
        raise Refused(f"{level.id}: {why}", limit_kind(level))
    if static + smem > 48 * 1024:  # above the default, the kernel must opt in
        kernel.max_dynamic_shared_size_bytes = smem
    block = (*level.threads, 1)
    if level.persistent:
        run_level = _tma_launcher(level, built.params, kernel, ops, smem, block)
    else:
        grid = level.grid(M, N)
        args = (np.int32(M), np.int32(N), np.int32(K), ops.a, ops.b, ops.c)

        def run_level() -> None:
            kernel(grid, block, args, shared_mem=smem)

    info = {"variant": ("tma" if level.persistent else "vector" if vec else "scalar"),
            "threads": block[0] * block[1], **built.attributes(vec)}
    info["smem_bytes"] += smem
    info["kernel"] = getattr(kernel, "name", None)
    return run_level, info


def _tma_launcher(level: Level, params: dict[str, int], kernel: Any, ops: Operands,
                  smem: int, block: tuple[int, int, int]) -> Callable[[], None]:
    """A persistent sm_90a level: tensor maps of A and Bt, one block per SM, launched
    through cuLaunchKernel (the maps go by value)."""
    cp = require_cupy()
    M, N, K = ops.shape
    dtype = "bf16" if ops.fmt == "bf16" else "uint8"
    box_k = params["BK"]
    map_a = hopper.encode(hopper.TiledMap(ops.a.data.ptr, dtype, M, K, params["BM"], box_k))
    map_b = hopper.encode(hopper.TiledMap(ops.b.data.ptr, dtype, N, K, params["BN"], box_k))
    # C through TMA stores when its rows are 16-byte multiples; else the kernel's own stores
    tma_c = N % 8 == 0
    map_c = (hopper.encode(hopper.TiledMap(ops.c.data.ptr, "bf16", M, N, 64, 64)) if tma_c
             else hopper.blank_map())
    args: list[Any] = [hopper.int32(M), hopper.int32(N), hopper.int32(K), map_a, map_b, map_c,
                       hopper.pointer(ops.c.data.ptr), hopper.int32(int(tma_c))]
    if ops.scale_a is not None:
        args += [hopper.pointer(ops.scale_a.data.ptr), hopper.pointer(ops.scale_b.data.ptr)]
    sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
    grid = level.grid(M, N, sms)
    function = kernel.kernel.ptr

    def run_level() -> None:
        hopper.launch(cp.cuda.driver, function, grid, block, smem,
                      cp.cuda.get_current_stream().ptr, args)

    return run_level


class Bench:
    """Runs levels on the current device. One instance per runner process."""

    def __init__(self, device: DeviceInfo, clock: Callable[[], float], sampler: Any = None):
        self.cp = require_cupy()
        self.device = device
        self.clock = clock
        self.sampler = sampler
        self._flush_buf = self.cp.empty(max(device.l2_bytes * 2, 1 << 20) // 4, self.cp.float32)
        self._stream = self.cp.cuda.Stream(non_blocking=True)

    def _launcher(self, level: Level, ops: Operands,
                  params: dict[str, int] | None) -> tuple[Callable[[], None], dict[str, Any]]:
        if level.kind is not Kind.REFERENCE:
            return level_launcher(level, ops, params)
        if level.precision is Precision.FP8:
            return torch_scaled_mm_launcher(ops, self._stream.ptr), {"variant": "cublaslt"}
        cp = self.cp
        a, b, c = ops.a, ops.b, ops.c
        if ops.fmt == "bf16":  # the same bits, seen as ml_dtypes.bfloat16 by cuBLAS
            import ml_dtypes

            a, b, c = (x.view(ml_dtypes.bfloat16) for x in (a, b, c))
        if ops.b_layout == "nk":
            b = b.T  # a transposed view: cuBLAS reads Bt as is
        compute = CUBLAS_COMPUTE_TF32 if level.precision is Precision.TF32 else None

        def run_ref() -> None:
            if compute is None:
                cp.matmul(a, b, out=c)
                return
            cp._core.set_compute_type(cp.float32, compute)
            try:
                cp.matmul(a, b, out=c)
            finally:
                cp._core.set_compute_type(cp.float32, CUBLAS_COMPUTE_DEFAULT)

        return run_ref, {"variant": "cublas"}

    # ------------------------------------------------------------------ a run
    def run(self, level: Level, M: int, N: int, K: int, repeats: int = 20, warmup: int = 3,
            on_repeat: Callable[[int, float], None] | None = None,
            params: dict[str, int] | None = None) -> dict[str, Any]:
        cp = self.cp
        free, _total = cp.cuda.runtime.memGetInfo()
        need = bytes_needed(level, M, N, K)
        if need > free * 0.9:
            raise Refused(f"{M}x{N}x{K} needs {need / 2**30:.1f} GiB of device memory for "
                          f"{level.id} and its float64 check; {free / 2**30:.1f} GiB are free",
                          "out_of_memory")
        with self._stream:
            ops = random_inputs(level, M, N, K)
            launch, info = self._launcher(level, ops, params)
            # verification: poisoned C, fresh inputs, float64 reference of the same values
            ops.poison()
            launch()
            acc = check(ops)
            for _ in range(warmup):
                launch()
            self._stream.synchronize()
            times = self._time(launch, repeats, on_repeat)
        tol = TOLERANCE[level.precision]
        verified = acc.verified(level.precision)
        err, has_nan = acc.rel_err, acc.has_nan
        summary = Timing(times["ms"]).summary()
        flops = 2.0 * M * N * K
        tflops = flops / (summary["median_ms"] * 1e-3) / 1e12
        peak = (self.device.as_event()["peak_tflops"] or {}).get(str(level.precision))
        window = self.sampler.window(times["t0"], times["t1"]) if self.sampler else None
        energy = times.get("energy_j")
        result: dict[str, Any] = {
            "level": level.id, "M": M, "N": N, "K": K, "dtype": DTYPE_OF[level.precision],
            "precision": str(level.precision), **summary, "tflops": tflops,
            "verified": verified, "rel_err": None if err != err else err, "tol": tol,
            "nan": has_nan, "deepgemm_diff": None if has_nan else acc.deepgemm_diff,
            "repeats": repeats, "warmup": warmup,
            "peak_tflops": peak, "pct_of_peak": 100 * tflops / peak if peak else None,
            **info,
        }
        if window is not None:
            avg_power, power_source = average_power(energy, times["t1"] - times["t0"], window)
            per_gemm_j = avg_power * summary["median_ms"] * 1e-3 if avg_power else None
            result.update({
                "sm_clock_mhz_avg": window.sm_clock_mhz_avg,
                "sm_clock_mhz_min": window.sm_clock_mhz_min,
                "avg_power_w": avg_power, "energy_j": per_gemm_j,
                "gflop_per_j": flops / 1e9 / per_gemm_j if per_gemm_j else None,
                "power_source": power_source,
                "throttled": window.throttled, "telemetry_samples": window.samples})
        return result

    def _time(self, launch: Callable[[], None], repeats: int,
              on_repeat: Callable[[int, float], None] | None) -> dict[str, Any]:
        cp = self.cp
        start, end = cp.cuda.Event(), cp.cuda.Event()
        nvml = self.sampler.nvml if self.sampler is not None else None
        e0 = _energy(nvml)
        t0 = self.clock()
        out: list[float] = []
        for i in range(repeats):
            self._flush_buf.fill(i)  # evict A, B and C from L2 before every timed launch
            start.record(self._stream)
            launch()
            end.record(self._stream)
            if self.sampler is not None and self.sampler.hz == 0:
                self.sampler.sample_now()  # at least one clock reading per launch
            end.synchronize()
            ms = cp.cuda.get_elapsed_time(start, end)
            out.append(ms)
            if on_repeat is not None:
                on_repeat(i, ms)
        t1 = self.clock()
        e1 = _energy(nvml)
        res: dict[str, Any] = {"ms": out, "t0": t0, "t1": t1}
        if e0 is not None and e1 is not None and t1 > t0:
            res["energy_j"] = e1 - e0
        return res


# The energy counter advances in coarse steps: over a short window it reads 0 or a whole
# step (seen on the H200: 0 J, or the equivalent of 997 W against a 700 W limit).
ENERGY_COUNTER_MIN_S = 1.0


def average_power(energy_j: float | None, window_s: float,
                  window: Any) -> tuple[float | None, str | None]:
    """Average power over the timed repeats, and where it came from.

    The energy counter over windows of a second or more; otherwise the mean of the
    instantaneous power samples in the window; otherwise unknown (None, None).
    """
    if energy_j is not None and energy_j > 0 and window_s >= ENERGY_COUNTER_MIN_S:
        return energy_j / window_s, "energy_counter"
    if window.avg_power_w is not None:
        return window.avg_power_w, "power_samples"
    return None, None


def _energy(nvml: Any) -> float | None:
    return None if nvml is None or not nvml.available else nvml.energy_j()


def wall_clock() -> Callable[[], float]:
    t0 = time.monotonic()
    return lambda: time.monotonic() - t0

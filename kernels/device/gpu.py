"""The one module that imports CuPy, lazily, and torch (the FP8 references' cuBLASLt),
lazily too. Their absence is a state, not a crash."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from ..hardware import gpu_table
from . import build_cache

_lock = threading.Lock()
_state: tuple[ModuleType | None, str | None] | None = None


class NoGPU(RuntimeError):
    """CuPy or a CUDA device is missing; the message says which."""


def get_cupy() -> tuple[ModuleType | None, str | None]:
    """(cupy, None) when a CUDA device is usable, else (None, reason)."""
    global _state
    with _lock:
        if _state is None:
            _state = _probe()
        return _state


def _probe() -> tuple[ModuleType | None, str | None]:
    build_cache.configure()  # CuPy reads CUPY_CACHE_DIR once, at import
    try:
        import cupy
    except ImportError as exc:
        return None, f"CuPy is not installed ({exc.name or exc})"
    except Exception as exc:  # a broken CUDA install raises all sorts at import
        return None, f"CuPy failed to import: {exc}"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return None, f"no CUDA driver or device ({_short(exc)})"
    if n < 1:
        return None, "no CUDA device"
    return cupy, None


def require_cupy() -> ModuleType:
    cp, reason = get_cupy()
    if cp is None:
        raise NoGPU(reason or "no GPU")
    return cp


def get_torch() -> ModuleType | None:
    """torch, imported at the first call (it loads its own CUDA libraries; only the
    cuBLASLt FP8 references use it, engine/cublaslt.py), or None where it is absent."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def deep_gemm_missing() -> str | None:
    """Why deepseek-ai/DeepGEMM cannot be used here (None: its package and torch are on
    the path), found without importing either (torch takes seconds to import)."""
    import importlib.util

    for name in ("torch", "deep_gemm"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"the {name} package is not importable"
    return None


def get_deep_gemm() -> ModuleType:
    """deepseek-ai/DeepGEMM's package, imported at the first call (it imports torch and
    JIT-compiles its kernels with the machine's nvcc)."""
    import deep_gemm

    return deep_gemm


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def peak_tflops(name: str, sm_count: int, sm_clock_max_mhz: float,
               arch: str | None = None) -> dict[str, float | None]:
    """Dense datasheet peaks per precision (kernels/hardware/gpu_table.toml), or for a GPU
    the table lacks, FP32 computed from the device (the others unknown)."""
    return dict(gpu_table.spec_for(name, sm_count, sm_clock_max_mhz, arch).peaks_tflops)


@dataclass(frozen=True, slots=True)
class DeviceLimits:
    """What one block may ask of the device (CUDA device attributes): checked before a
    level is compiled or launched, so a launch never fails for want of them."""

    max_threads_per_block: int
    max_block_dim_x: int
    max_block_dim_y: int
    max_grid_dim_y: int
    smem_per_block_bytes: int  # without opt-in (48 KiB)
    smem_per_block_optin_bytes: int  # the most a kernel may opt in to (static + dynamic)
    regs_per_block: int

    @classmethod
    def from_attributes(cls, attrs: Mapping[str, int]) -> DeviceLimits:
        return cls(**{f: int(attrs[a]) for f, a in LIMIT_ATTRIBUTES.items()})

    def as_event(self) -> dict[str, int]:
        return asdict(self)


# DeviceLimits field -> CUDA device attribute (cudaDevAttr... without the prefix, as
# CuPy's Device.attributes names it)
LIMIT_ATTRIBUTES = {
    "max_threads_per_block": "MaxThreadsPerBlock", "max_block_dim_x": "MaxBlockDimX",
    "max_block_dim_y": "MaxBlockDimY", "max_grid_dim_y": "MaxGridDimY",
    "smem_per_block_bytes": "MaxSharedMemoryPerBlock",
    "smem_per_block_optin_bytes": "MaxSharedMemoryPerBlockOptin",
    "regs_per_block": "MaxRegistersPerBlock"}

# CUDA errors after which the context is unusable: every later CUDA call of the process
# fails (CUDA runtime API docs: "the CUDA context cannot be used"). By code (the same in
# the runtime and driver APIs) and by name, normalised (cudaErrorIllegalAddress and
# CUDA_ERROR_ILLEGAL_ADDRESS both read "illegaladdress"). An unknown error counts as
# sticky; an invalid launch value or out of memory is not.
STICKY_CODES = frozenset({214, 220, 700, 702, 709, 710, 714, 715, 716, 717, 718, 719, 911, 999})
STICKY_NAMES = frozenset({
    "eccuncorrectable", "nvlinkuncorrectable", "illegaladdress", "launchtimeout",
    "contextisdestroyed", "assert", "hardwarestackerror", "illegalinstruction",
    "misalignedaddress", "invalidaddressspace", "invalidpc", "launchfailure", "launchfailed",
    "externaldevice", "unknown"})
_ERROR_NAME = re.compile(r"\b(?:cudaError|CUDA_ERROR_)(\w+)")


def is_sticky(exc: BaseException) -> bool:
    """Whether a CUDA error leaves the context unusable (see STICKY_CODES)."""
    status = getattr(exc, "status", None)
    if isinstance(status, int) and not isinstance(status, bool) and status in STICKY_CODES:
        return True
    m = _ERROR_NAME.search(str(exc))
    return m is not None and m.group(1).replace("_", "").lower() in STICKY_NAMES


def device_limits() -> DeviceLimits:
    """The current device's per-block limits (read once per device)."""
    cp = require_cupy()
    return _limits(cp.cuda.Device().id)


@functools.cache
def _limits(device_id: int) -> DeviceLimits:
    cp = require_cupy()
    return DeviceLimits.from_attributes(cp.cuda.Device(device_id).attributes)


def context_usable() -> bool:
    """Whether the device still synchronises (a sticky error shows here too)."""
    cp, _reason = get_cupy()
    if cp is None:
        return False
    try:
        cp.cuda.runtime.deviceSynchronize()
    except Exception:
        return False
    return True


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    name: str
    sm_count: int
    cc: str
    arch: str
    sm_clock_max_mhz: float
    mem_clock_max_mhz: float
    memory_gib: float
    l2_bytes: int
    driver: str
    cuda_runtime: str
    cupy: str
    limits: DeviceLimits | None = None
    pci_bus_id: str | None = None  # "0000:19:00.0": how NVML finds the same GPU

    def as_event(self) -> dict[str, Any]:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["limits"] = self.limits.as_event() if self.limits is not None else None
        # the GPU table's row: peaks, memory bandwidth, the clocks they assume, the source
        d.update(gpu_table.spec_for(self.name, self.sm_count, self.sm_clock_max_mhz,
                                    self.arch).as_event())
        return d

    @property
    def has_sm90a(self) -> bool:
        return self.cc == "9.0"


def device_info() -> DeviceInfo:
    cp = require_cupy()
    dev = cp.cuda.Device()
    attrs = dev.attributes
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    major, minor = dev.compute_capability[0], dev.compute_capability[1:]
    drv = cp.cuda.runtime.driverGetVersion()
    rt = cp.cuda.runtime.runtimeGetVersion()
    return DeviceInfo(
        name=name, sm_count=int(attrs["MultiProcessorCount"]), cc=f"{major}.{minor}",
        arch=f"sm_{major}{minor}", sm_clock_max_mhz=attrs["ClockRate"] / 1000,
        mem_clock_max_mhz=attrs.get("MemoryClockRate", 0) / 1000,
        memory_gib=round(cp.cuda.runtime.memGetInfo()[1] / 2**30, 1),
        l2_bytes=int(attrs["L2CacheSize"]), driver=f"{drv // 1000}.{drv % 1000 // 10}",
        cuda_runtime=f"{rt // 1000}.{rt % 1000 // 10}", cupy=cp.__version__,
        limits=_limits(dev.id), pci_bus_id=_bus_id(cp, dev.id, props))


def _bus_id(cp: Any, device_id: int, props: Mapping[str, Any]) -> str | None:
    """The device's PCI bus id, "0000:19:00.0" (how NVML finds the same GPU); None where
    CUDA cannot say (NVML then goes by index: kernels/device/gpu_select.py)."""
    try:
        return str(cp.cuda.runtime.deviceGetPCIBusId(device_id))
    except Exception:
        pass
    try:
        return f"{props['pciDomainID']:04x}:{props['pciBusID']:02x}:{props['pciDeviceID']:02x}.0"
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class CupyBuild:
    """Which CuPy is installed, the CUDA it was built for, and what it saw (gemmscope doctor).

    ``cuda_major`` comes from the distribution's name (cupy-cuda13x: 13) without importing
    CuPy, else from the runtime it loaded; the rest needs a working import (None otherwise)."""

    distribution: str | None  # "cupy-cuda13x"; None: not installed
    version: str | None
    cuda_major: int | None
    runtime: str | None = None  # CUDA runtime CuPy loaded, "13.2"
    driver_cuda: str | None = None  # the newest CUDA the driver supports, "13.0"
    memory_free_bytes: int | None = None
    memory_total_bytes: int | None = None
    reason: str | None = None  # why CuPy cannot run here (None: it can)
    also_installed: tuple[str, ...] = ()  # other CuPy builds: they overwrite each other


def _cuda_text(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}"


def cupy_build() -> CupyBuild:
    """What :class:`CupyBuild` says; imports CuPy (seconds) through :func:`get_cupy`."""
    import importlib.metadata as md
    import re

    names = sorted(set(md.packages_distributions().get("cupy", [])))
    dist, others = (names[0], tuple(names[1:])) if names else (None, ())
    version = md.version(dist) if dist else None
    found = re.search(r"cuda(\d\d)", dist or "")
    major = int(found[1]) if found else None
    cp, reason = get_cupy()
    if cp is None:
        return CupyBuild(dist, version, major, reason=reason, also_installed=others)
    try:
        rt = cp.cuda.runtime.runtimeGetVersion()
        drv = cp.cuda.runtime.driverGetVersion()
        free, total = cp.cuda.runtime.memGetInfo()
    except Exception as exc:
        return CupyBuild(dist, version, major, reason=f"CUDA call failed ({_short(exc)})",
                         also_installed=others)
    return CupyBuild(dist, version or cp.__version__, major or rt // 1000, _cuda_text(rt),
                     _cuda_text(drv), int(free), int(total), also_installed=others)


def cublas_text(version: int) -> str:
    """cuBLAS's version number as text: major * 10000 + minor * 100 + patch from
    cuBLAS 11 on (120804: "12.8.4"), major * 1000 + minor * 100 + patch before."""
    if version >= 100_000:
        return f"{version // 10000}.{version % 10000 // 100}.{version % 100}"
    return f"{version // 1000}.{version % 1000 // 100}.{version % 100}"


def software_versions(driver: str | None) -> dict[str, str | None]:
    """What software made a result (issue 41 item 6), each None where it cannot be read:
    ``driver`` (the NVIDIA driver, as NVML says it: the caller's), the CUDA the driver
    supports, the CUDA runtime, cuBLAS, NVRTC and CuPy."""
    cp = require_cupy()

    def read(fn: Any) -> str | None:
        try:
            return fn()
        except Exception:  # a library that cannot say is a null, never a failed run
            return None

    def nvrtc() -> str:
        major, minor = cp.cuda.nvrtc.getVersion()
        return f"{major}.{minor}"

    def cublas() -> str:
        handle = cp.cuda.device.get_cublas_handle()
        return cublas_text(int(cp.cuda.cublas.getVersion(handle)))

    return {"driver": driver,
            "cuda_driver": read(lambda: _cuda_text(cp.cuda.runtime.driverGetVersion())),
            "cuda_runtime": read(lambda: _cuda_text(cp.cuda.runtime.runtimeGetVersion())),
            "cublas": read(cublas), "nvrtc": read(nvrtc), "cupy": read(lambda: cp.__version__)}

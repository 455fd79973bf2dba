"""Is there a GPU to run on? Answered without importing CuPy in the GUI process.

CuPy's import takes seconds, so the app only asks whether it is installed
(``importlib.util.find_spec``) and then asks the CUDA driver directly through ctypes:
``cuInit`` and ``cuDeviceGetCount``, and the first device's name. A missing driver
library or a failing call is a reason string, never an exception.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import sys
from dataclasses import dataclass

CUDA_SUCCESS = 0
NO_DEVICE = 100  # CUDA_ERROR_NO_DEVICE


@dataclass(frozen=True, slots=True)
class GpuProbe:
    available: bool
    name: str | None  # the first device's name, when available
    reason: str  # why not, when not available ("" when available)
    device_count: int = 0


def _driver_library_names() -> list[str]:
    if sys.platform == "win32":
        return ["nvcuda.dll"]
    found = ctypes.util.find_library("cuda")
    names = ["libcuda.so.1", "libcuda.so"]
    return ([found] if found else []) + names


def _load_driver() -> ctypes.CDLL | None:
    for name in _driver_library_names():
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def probe_driver() -> GpuProbe:
    """Ask the CUDA driver for its devices (no CuPy involved)."""
    lib = _load_driver()
    if lib is None:
        return GpuProbe(False, None, "no CUDA driver (libcuda not found)")
    try:
        rc = lib.cuInit(0)
        if rc == NO_DEVICE:
            return GpuProbe(False, None, "no CUDA device (the driver found none)")
        if rc != CUDA_SUCCESS:
            return GpuProbe(False, None, f"the CUDA driver did not start (cuInit error {rc})")
        count = ctypes.c_int(0)
        rc = lib.cuDeviceGetCount(ctypes.byref(count))
        if rc != CUDA_SUCCESS or count.value < 1:
            return GpuProbe(False, None, "no CUDA device (the driver found none)")
        dev = ctypes.c_int(0)
        name = ctypes.create_string_buffer(256)
        if lib.cuDeviceGet(ctypes.byref(dev), 0) == CUDA_SUCCESS and \
                lib.cuDeviceGetName(name, 256, dev) == CUDA_SUCCESS:
            dev_name = name.value.decode("utf-8", "replace") or "CUDA device 0"
        else:
            dev_name = "CUDA device 0"
        return GpuProbe(True, dev_name, "", count.value)
    except (AttributeError, OSError) as exc:
        return GpuProbe(False, None, f"the CUDA driver could not be queried ({exc})")


def probe(check_cupy: bool = True) -> GpuProbe:
    """CuPy installed and a CUDA device present? ``GEMMSCOPE_NO_GPU=1`` forces replay."""
    if os.environ.get("GEMMSCOPE_NO_GPU"):
        return GpuProbe(False, None, "GPU use switched off (GEMMSCOPE_NO_GPU is set)")
    if check_cupy and importlib.util.find_spec("cupy") is None:
        return GpuProbe(False, None, "no CuPy (install gemmscope[cuda12] or [cuda13])")
    return probe_driver()

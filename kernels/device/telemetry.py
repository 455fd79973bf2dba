"""NVML telemetry: the one module that imports pynvml, lazily.

A sampler thread reads clocks, power, energy, temperature, utilisation, clock-event
reasons and (on Hopper) GPM metrics at a set rate, hands each sample to a callback and
keeps recent samples so a run can be summarised over its time window. Every NVML error
becomes a null field; a missing library or GPU becomes ``available = False`` with a reason.
"""

from __future__ import annotations

import atexit
import bisect
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol.events import GPM_FIELDS, TELEMETRY_FIELDS
from ..protocol.throttle import slowdowns
from .gpu_select import same_bus_id

# nvmlClocksEventReasons bits (GPU_NOTES.md); which are slowdowns: kernels.throttle
REASON_BITS = {
    0x1: "GpuIdle", 0x2: "ApplicationsClocksSetting", 0x4: "SwPowerCap",
    0x8: "HwSlowdown", 0x10: "SyncBoost", 0x20: "SwThermalSlowdown",
    0x40: "HwThermalSlowdown", 0x80: "HwPowerBrakeSlowdown", 0x100: "DisplayClockSetting",
}


def decode_reasons(mask: int | None) -> list[str] | None:
    if mask is None:
        return None
    names = [name for bit, name in REASON_BITS.items() if mask & bit]
    unknown = mask & ~sum(REASON_BITS)
    if unknown:
        names.append(f"0x{unknown:x}")
    return names


FIELDS = (*TELEMETRY_FIELDS, "power_kind", "reasons")  # of one sample


class Nvml:
    """Lazily initialised NVML handle for one device; every read may return None.

    ``pci_bus_id``: the GPU CUDA runs on, found among NVML's by its bus id (NVML ignores
    ``CUDA_VISIBLE_DEVICES``: kernels/device/gpu_select.py); else NVML's ``index``."""

    def __init__(self, index: int = 0, pci_bus_id: str | None = None, gpm: bool = True):
        """``gpm=False``: no GPM metrics (they take the performance monitor, which a
        profiler such as ncu needs for itself)."""
        self.index = index
        self.pci_bus_id = pci_bus_id
        self.gpm = gpm
        self.available = False
        self.reason: str | None = None
        self._nv: Any = None
        self._h: Any = None
        self._gpm_prev: Any = None
        self._gpm_ok = False
        self._lock = threading.Lock()
        self._init()

    def _init(self) -> None:
        try:
            import pynvml
        except ImportError:
            self.reason = "nvidia-ml-py (pynvml) is not installed"
            return
        try:
            pynvml.nvmlInit()
            if self.pci_bus_id:
                self.index = _index_of_bus(pynvml, self.pci_bus_id)
            self._h = pynvml.nvmlDeviceGetHandleByIndex(self.index)
        except pynvml.NVMLError as exc:
            self.reason = f"NVML: {exc}"
            return
        except LookupError as exc:
            self.reason = str(exc)
            return
        except Exception as exc:  # missing library and friends
            self.reason = f"NVML unavailable: {exc}"
            return
        self._nv = pynvml
        self.available = True
        atexit.register(self.close)
        if not self.gpm:
            return
        try:
            self._gpm_ok = bool(pynvml.nvmlGpmQueryDeviceSupport(self._h).isSupportedDevice)
        except Exception:
            self._gpm_ok = False

    def uuid(self) -> str | None:
        """The GPU's UUID (``GPU-...``), or None."""
        with self._lock:
            nv, h = self._nv, self._h
            if nv is None:
                return None
            got = self._get(lambda: nv.nvmlDeviceGetUUID(h))
            return got.decode() if isinstance(got, bytes) else got

    def close(self) -> None:
        with self._lock:
            if self._nv is not None:
                try:
                    self._nv.nvmlShutdown()
                except Exception:
                    pass
                self._nv = None
                self.available = False

    def _get(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception:
            return None

    def energy_j(self) -> float | None:
        """The energy counter (J since the driver loaded), or None."""
        with self._lock:
            nv, h = self._nv, self._h
            if nv is None:
                return None
            mj = self._get(lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h))
            return None if mj is None else mj / 1000

    def energy_reason(self) -> str | None:
        """None when the total-energy counter reads, else why not (NVML's answer)."""
        with self._lock:
            nv, h = self._nv, self._h
            if nv is None:
                return f"no NVML: {self.reason or 'closed'}"
            try:
                nv.nvmlDeviceGetTotalEnergyConsumption(h)
            except Exception as exc:
                return f"nvmlDeviceGetTotalEnergyConsumption: {exc}"
            return None

    def temperature_c(self) -> float | None:
        """The GPU temperature (°C), or None."""
        with self._lock:
            nv, h = self._nv, self._h
            if nv is None:
                return None
            return self._get(lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))

    def _read(self, fn: Callable[[Any, Any], Any]) -> Any:
        """``fn(pynvml, handle)`` under the lock; None without NVML or where it fails."""
        with self._lock:
            nv, h = self._nv, self._h
            return None if nv is None else self._get(lambda: fn(nv, h))

    def driver_version(self) -> str | None:
        """The driver's version ("580.159"), or None."""
        got = self._read(lambda nv, h: nv.nvmlSystemGetDriverVersion())
        return got.decode() if isinstance(got, bytes) else got

    def cuda_driver_version(self) -> str | None:
        """The newest CUDA the driver supports ("13.0"), or None."""
        got = self._read(lambda nv, h: nv.nvmlSystemGetCudaDriverVersion())
        return None if got is None else f"{got // 1000}.{got % 1000 // 10}"

    def device_name(self) -> str | None:
        got = self._read(lambda nv, h: nv.nvmlDeviceGetName(h))
        return got.decode() if isinstance(got, bytes) else got

    def device_count(self) -> int:
        """GPUs NVML sees (0 without NVML)."""
        return self._read(lambda nv, h: nv.nvmlDeviceGetCount()) or 0

    def memory_bytes(self) -> tuple[int, int] | None:
        """(free, total) device memory in bytes, or None."""
        got = self._read(lambda nv, h: nv.nvmlDeviceGetMemoryInfo(h))
        return None if got is None else (int(got.free), int(got.total))

    @property
    def gpm_supported(self) -> bool:
        """Whether the GPU has GPM metrics (and this handle reads them)."""
        return self._gpm_ok

    def power_limit_w(self) -> float | None:
        nv, h = self._nv, self._h
        mw = self._get(lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h))
        return None if mw is None else mw / 1000

    def sample(self) -> dict[str, Any]:
        """One reading of every field (None where unsupported)."""
        with self._lock:
            nv, h = self._nv, self._h
            if nv is None:
                return dict.fromkeys(FIELDS)
            g = self._get
            power_kind = "instant"
            power = g(lambda: _instant_power_mw(nv, h))
            if power is None:
                power_kind = "average"
                power = g(lambda: nv.nvmlDeviceGetPowerUsage(h))
            energy = g(lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h))
            util = g(lambda: nv.nvmlDeviceGetUtilizationRates(h).gpu)
            mask = g(lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h))
            out = {
                "sm_clock_mhz": g(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
                "mem_clock_mhz": g(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
                "power_w": None if power is None else power / 1000,
                "power_kind": None if power is None else power_kind,
                "power_limit_w": self.power_limit_w(),
                "energy_j": None if energy is None else energy / 1000,
                "temp_c": g(lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
                "gpu_util_pct": util,
                "reasons": decode_reasons(mask),
            }
            out.update(self._gpm())
            return out

    def clock_now(self) -> tuple[int | None, list[str] | None]:
        """The SM clock (MHz) and the decoded clock-event reasons, and nothing else: the
        per-launch reading of the paired loop (kernels/engine/paired.py), two NVML calls
        where :meth:`sample` makes about ten (and a GPM sample)."""
        with self._lock:
            nv, h = self._nv, self._h
            if nv is None:
                return None, None
            clock = self._get(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM))
            mask = self._get(lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h))
            return clock, decode_reasons(mask)

    def _gpm(self) -> dict[str, Any]:
        keys = GPM_FIELDS
        empty = dict.fromkeys(keys)
        if not self._gpm_ok:
            return empty
        nv, h = self._nv, self._h
        try:
            cur = nv.nvmlGpmSampleAlloc()
            nv.nvmlGpmSampleGet(h, cur)
        except Exception:
            self._gpm_ok = False
            return empty
        prev, self._gpm_prev = self._gpm_prev, cur
        if prev is None:
            return empty
        try:
            ids = (nv.NVML_GPM_METRIC_SM_OCCUPANCY, nv.NVML_GPM_METRIC_SM_UTIL,
                   nv.NVML_GPM_METRIC_ANY_TENSOR_UTIL, nv.NVML_GPM_METRIC_DRAM_BW_UTIL,
                   nv.NVML_GPM_METRIC_FP32_UTIL)
            req = nv.c_nvmlGpmMetricsGet_t()
            req.version = nv.NVML_GPM_METRICS_GET_VERSION
            req.numMetrics = len(ids)
            req.sample1 = prev
            req.sample2 = cur
            for i, mid in enumerate(ids):
                req.metrics[i].metricId = mid
            nv.nvmlGpmMetricsGet(req)
            vals = [None if req.metrics[i].nvmlReturn != 0 else float(req.metrics[i].value)
                    for i in range(len(ids))]
        except Exception:
            return empty
        finally:
            try:
                nv.nvmlGpmSampleFree(prev)
            except Exception:
                pass
        return dict(zip(keys, vals, strict=True))


def _index_of_bus(nv: Any, bus_id: str) -> int:
    """NVML's index of the GPU at PCI ``bus_id`` (LookupError where none is)."""
    for i in range(nv.nvmlDeviceGetCount()):
        info = nv.nvmlDeviceGetPciInfo(nv.nvmlDeviceGetHandleByIndex(i))
        if same_bus_id(info.busId, bus_id):
            return i
    raise LookupError(f"NVML sees no GPU at PCI bus id {bus_id} (the one CUDA runs on)")


def _instant_power_mw(nv: Any, h: Any) -> float | None:
    fid = getattr(nv, "NVML_FI_DEV_POWER_INSTANT", None)
    if fid is None:
        return None
    vals = nv.nvmlDeviceGetFieldValues(h, [fid])
    v = vals[0]
    if v.nvmlReturn != 0:
        return None
    # field values come back as a union; instant power is an unsigned int in mW
    return float(v.value.uiVal)


@dataclass(frozen=True, slots=True)
class RunWindow:
    """Aggregates of the samples between two times (one run's timed repeats)."""

    sm_clock_mhz_avg: float | None
    sm_clock_mhz_min: float | None
    energy_j: float | None
    avg_power_w: float | None
    throttled: list[str]
    samples: int


class Sampler:
    """Samples NVML in a thread at ``hz`` (0 = off) and calls ``emit`` with each sample.

    Samples carry ``t`` from ``clock`` (the session clock); recent ones are kept so that
    :meth:`window` can summarise any recent interval.
    """

    def __init__(self, nvml: Nvml, emit: Callable[[dict[str, Any]], None] | None,
                 clock: Callable[[], float], hz: float = 50.0, keep_s: float = 600.0):
        self.nvml = nvml
        self.emit = emit
        self.clock = clock
        self.hz = hz
        self._keep_s = keep_s
        self._samples: deque[dict[str, Any]] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.nvml.available and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="nvml-sampler", daemon=True)
            self._thread.start()

    def set_rate(self, hz: float) -> None:
        self.hz = hz
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def sample_now(self) -> dict[str, Any]:
        s = {"type": "telemetry", "t": round(self.clock(), 6), **self.nvml.sample()}
        with self._lock:
            self._samples.append(s)
            while self._samples and s["t"] - self._samples[0]["t"] > self._keep_s:
                self._samples.popleft()
        return s

    def _loop(self) -> None:
        next_t = time.monotonic()
        while not self._stop.is_set():
            hz = self.hz  # read once: set_rate may change it while we sample
            if hz <= 0:
                self._wake.wait()
                self._wake.clear()
                next_t = time.monotonic()
                continue
            s = self.sample_now()
            if self.emit is not None:
                self.emit(s)
            next_t += 1.0 / hz
            delay = next_t - time.monotonic()
            if delay < 0:
                next_t = time.monotonic()
                delay = 0
            if self._wake.wait(delay):
                self._wake.clear()

    def window(self, t0: float, t1: float) -> RunWindow:
        with self._lock:
            samples = list(self._samples)
        times = [s["t"] for s in samples]
        inside = samples[bisect.bisect_left(times, t0):bisect.bisect_right(times, t1)]
        clocks = [s["sm_clock_mhz"] for s in inside if s.get("sm_clock_mhz") is not None]
        powers = [s["power_w"] for s in inside if s.get("power_w") is not None]
        reasons = list(slowdowns(r for s in inside for r in s.get("reasons") or ()))
        return RunWindow(
            sm_clock_mhz_avg=sum(clocks) / len(clocks) if clocks else None,
            sm_clock_mhz_min=min(clocks) if clocks else None,
            energy_j=None, avg_power_w=sum(powers) / len(powers) if powers else None,
            throttled=reasons, samples=len(inside))


@dataclass(frozen=True, slots=True)
class NvmlFacts:
    """The driver and the device as NVML reports them (gemmscope doctor); None: unknown."""

    available: bool
    reason: str | None = None
    driver: str | None = None  # "580.159"
    cuda_driver: str | None = None  # the newest CUDA the driver supports, "13.0"
    device: str | None = None
    device_count: int = 0
    gpm_supported: bool = False
    memory_free_bytes: int | None = None
    memory_total_bytes: int | None = None


def nvml_facts(index: int = 0) -> NvmlFacts:
    """Read once through a short-lived :class:`Nvml`; every field may be None."""
    nvml = Nvml(index)
    if not nvml.available:
        return NvmlFacts(False, nvml.reason)
    try:
        memory = nvml.memory_bytes()
        return NvmlFacts(
            True, None, nvml.driver_version(), nvml.cuda_driver_version(), nvml.device_name(),
            nvml.device_count(), nvml.gpm_supported,
            None if memory is None else memory[0], None if memory is None else memory[1])
    finally:
        nvml.close()

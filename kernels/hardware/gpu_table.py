"""The GPU table (gpu_table.toml): datasheet dense peaks per precision, memory bandwidth
and the clocks they assume, per NVIDIA GPU, each row with its source.

A device is found by its CUDA name (``NVIDIA H100 PCIe``), matched whole against a row's
``names``: "A10" is not "A100", "H200" is not "GH200". A GPU the table lacks gets an FP32
peak computed from its SM count, FP32 lanes per SM of its architecture and its boost
clock, and nothing else (a tensor-core rate cannot be guessed); ``source`` says so."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..files.reading import FileRefused, Kind, read_toml

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8")
# FP32 lanes per SM (CUDA C++ Programming Guide, arithmetic instruction throughput): 64 on
# GA100 (sm_80), 128 on every later architecture
FP32_LANES = {"sm_80": 64, "sm_86": 128, "sm_87": 128, "sm_89": 128, "sm_90": 128,
              "sm_100": 128, "sm_103": 128, "sm_110": 128, "sm_120": 128, "sm_121": 128}
COMPUTED = "computed: SMs x FP32 lanes per SM x 2 x boost clock (GPU not in the table)"


@dataclass(frozen=True, slots=True)
class GpuSpec:
    key: str
    names: tuple[str, ...]
    arch: str  # sm_80, ..., sm_120 (the device's own, not a level's sm_90a)
    peaks_tflops: dict[str, float | None]  # every name of PRECISIONS; None: not offered
    memory_bandwidth_gbs: float | None
    source: str
    sm_count: int | None = None
    boost_clock_mhz: float | None = None  # the clock the FP32 peak assumes
    tensor_clock_mhz: float | None = None  # where the tensor peaks assume a lower one
    notes: tuple[str, ...] = field(default=())

    def peak(self, precision: str) -> float | None:
        return self.peaks_tflops.get(precision)

    def as_event(self) -> dict[str, Any]:
        """What a session header's device says of it (kernels/device/gpu.py)."""
        return {"gpu_table_key": self.key, "peak_tflops": dict(self.peaks_tflops),
                "mem_bandwidth_gbs": self.memory_bandwidth_gbs,
                "peak_clock_mhz": self.boost_clock_mhz,
                "peak_tensor_clock_mhz": self.tensor_clock_mhz, "peak_source": self.source}


def _row(raw: dict[str, Any]) -> GpuSpec:
    peaks = raw.get("peaks", {})
    unknown = set(peaks) - set(PRECISIONS)
    if unknown:
        raise ValueError(f"gpu_table.toml {raw.get('key')}: unknown precision(s) "
                         f"{', '.join(sorted(unknown))}")
    return GpuSpec(
        key=str(raw["key"]), names=tuple(str(n) for n in raw["names"]), arch=str(raw["arch"]),
        peaks_tflops={p: (float(peaks[p]) if p in peaks else None) for p in PRECISIONS},
        memory_bandwidth_gbs=_opt(raw.get("memory_bandwidth_gbs")), source=str(raw["source"]),
        sm_count=raw.get("sm_count"), boost_clock_mhz=_opt(raw.get("boost_clock_mhz")),
        tensor_clock_mhz=_opt(raw.get("tensor_clock_mhz")))


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)


@functools.cache
def _loaded() -> tuple[tuple[GpuSpec, ...], str | None]:
    """The rows of gpu_table.toml, and why there are none where it cannot be read (an
    installed file that was damaged: one line, and the program goes on without it)."""
    where = resources.files(__package__).joinpath("gpu_table.toml")
    try:
        with resources.as_file(where) as path:
            raw = read_toml(path, Kind.GPU_TABLE)
        rows = raw.get("gpu")
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ValueError("no [[gpu]] rows")
        return tuple(_row(r) for r in rows), None
    except FileRefused as exc:
        why = str(exc)
    except (KeyError, TypeError, ValueError) as exc:  # a row without a field, a text
        why = f"{where}: {type(exc).__name__}: {exc}"
    except OSError as exc:  # (as_file of a zipped install)
        why = f"{where}: cannot read: {exc.strerror or exc}"
    return (), (f"the GPU table is damaged ({why.splitlines()[0][:300]}); no datasheet "
                "peaks are used")


def table() -> tuple[GpuSpec, ...]:
    """Every row of gpu_table.toml, in file order; none where it is damaged
    (:func:`problem` says why)."""
    return _loaded()[0]


def problem() -> str | None:
    """Why the GPU table could not be read, in one line; None where it was."""
    return _loaded()[1]


def _plain(name: str) -> str:
    name = " ".join(name.split()).casefold()
    return name[len("nvidia "):] if name.startswith("nvidia ") else name


def lookup(device_name: str) -> GpuSpec | None:
    """The row whose ``names`` holds this CUDA device name (whole, any case, with or
    without "NVIDIA "), or None."""
    plain = _plain(device_name)
    for spec in table():
        if any(_plain(n) == plain for n in spec.names):
            return spec
    return None


def spec_for(device_name: str, sm_count: int, sm_clock_max_mhz: float,
             arch: str | None = None) -> GpuSpec:
    """The table's row for the device, else what can be computed from what it says of
    itself: the FP32 peak only (no bandwidth: the memory clock alone does not give it
    without the bus width)."""
    found = lookup(device_name)
    if found is not None:
        return found
    lanes = FP32_LANES.get(arch or "", 128)
    fp32 = (round(sm_count * lanes * 2 * sm_clock_max_mhz * 1e6 / 1e12, 1)
            if sm_count and sm_clock_max_mhz else None)
    return GpuSpec(key="", names=(device_name,), arch=arch or "",
                   peaks_tflops={p: (fp32 if p == "fp32" else None) for p in PRECISIONS},
                   memory_bandwidth_gbs=None, source=COMPUTED, sm_count=sm_count,
                   boost_clock_mhz=sm_clock_max_mhz or None)

"""The roofline's numbers: arithmetic intensity (FLOP per DRAM byte) and TFLOPS of each
result, and the roofs (peak and memory bandwidth) per precision.

A GEMM does 2·M·N·K floating-point operations. Its algorithmic intensity divides them by
the bytes it must move at least: A and B read once in their storage format, C written once
in its output format (M·K + K·N input elements, M·N output elements; no C read, beta = 0).
The measured intensity divides them by the DRAM bytes Nsight Compute counted
(``dram__bytes_read.sum`` + ``dram__bytes_write.sum``) for a launch of the whole GEMM;
counters of a reduced launch (one block per SM) do not stand for it and give none.

A roof is ``min(peak, intensity x bandwidth)``: the datasheet's (kernels/hardware) and,
where ``gemmscope record --ceilings`` measured them, the probes' (``ceilings`` events).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..ladder.shape import Shape

# bytes per element of each storage format a result or catalog names (``dtype``: fp32,
# fp16, bf16, fp8e4m3; an output format: fp32, fp16, bf16)
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "fp8e4m3": 1,
                 "fp8e5m2": 1, "int8": 1}
DRAM_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")
REDUCED_LAUNCHES = frozenset({"one_block_per_sm"})  # counters of part of a GEMM


def algorithmic_bytes(M: int, N: int, K: int, input_bytes: int, output_bytes: int) -> float:
    """The least DRAM traffic of C = A·B: A and B read once, C written once."""
    return float((M * K + K * N) * input_bytes + M * N * output_bytes)


def intensity(flops: float, nbytes: float | None) -> float | None:
    """FLOP per byte; None where the bytes are unknown, zero or not finite."""
    if nbytes is None or not math.isfinite(nbytes) or nbytes <= 0:
        return None
    return flops / nbytes


def output_bytes_of(output_format: str | None, precision: str, is_reference: bool) -> int:
    """Bytes per element of C: the catalog's output format where it names one; else what
    the levels of older recordings stored (FP32 C), and the 16-bit C the cuBLAS FP16, BF16
    and FP8 references write."""
    if output_format in ELEMENT_BYTES:
        return ELEMENT_BYTES[output_format]
    if is_reference and precision in ("fp16", "bf16", "fp8"):
        return 2
    return 4


def measured_dram_bytes(metrics: Mapping[str, float | None], launch: str | None
                        ) -> float | None:
    """DRAM bytes read plus written by a launch of the whole GEMM; None where the counters
    lack either or come from a reduced launch."""
    if launch in REDUCED_LAUNCHES:
        return None
    values = [metrics.get(m) for m in DRAM_METRICS]
    if any(v is None or not math.isfinite(float(v)) or v < 0 for v in values):
        return None
    return float(sum(v for v in values if v is not None))


@dataclass(frozen=True, slots=True)
class Point:
    """One result on the roofline."""

    level: str
    precision: str
    tflops: float
    ai: float  # algorithmic FLOP per byte
    ai_measured: float | None = None  # from ncu's DRAM bytes, where recorded
    is_reference: bool = False


def point(level: str, precision: str, dtype: str, M: int, N: int, K: int, tflops: float,
          output_format: str | None = None, is_reference: bool = False,
          dram_bytes: float | None = None) -> Point | None:
    """The result's point, or None where its TFLOPS or storage format cannot be placed on
    a log axis (zero, negative, not finite, or an unknown format)."""
    if not (math.isfinite(tflops) and tflops > 0) or dtype not in ELEMENT_BYTES:
        return None
    flops = Shape(M, N, K).flops
    nbytes = algorithmic_bytes(M, N, K, ELEMENT_BYTES[dtype],
                               output_bytes_of(output_format, precision, is_reference))
    ai = intensity(flops, nbytes)
    assert ai is not None
    return Point(level, precision, tflops, ai, intensity(flops, dram_bytes), is_reference)


@dataclass(frozen=True, slots=True)
class Roof:
    """The ceiling of one precision: flat at ``peak_tflops`` right of the ridge, the
    bandwidth's slope left of it."""

    precision: str
    peak_tflops: float
    bandwidth_gbs: float
    measured: bool = False  # from the session's ceilings probes, not the datasheet

    @property
    def ridge(self) -> float:
        """The intensity (FLOP/byte) where the slope meets the peak."""
        return self.peak_tflops * 1e12 / (self.bandwidth_gbs * 1e9)

    def attainable(self, ai: float) -> float:
        """TFLOPS the roof allows at intensity ``ai``."""
        return min(self.peak_tflops, ai * self.bandwidth_gbs * 1e9 / 1e12)

    def fraction(self, p: Point) -> float:
        """The point's share of what the roof allows at its (algorithmic) intensity."""
        return p.tflops / self.attainable(p.ai)


def _positive(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


def roofs(peaks: Mapping[str, float | None], bandwidth_gbs: float | None,
          precisions: Iterable[str], measured: bool = False) -> list[Roof]:
    """A roof per precision that has a peak, where the bandwidth is known (none without
    it: a flat line alone is no roofline)."""
    bw = _positive(bandwidth_gbs)
    if bw is None:
        return []
    out = []
    for precision in dict.fromkeys(precisions):
        peak = _positive(peaks.get(precision))
        if peak is not None:
            out.append(Roof(precision, peak, bw, measured))
    return out


OVER_CEILING = 1.005  # a point this far over a roof is past it, not on it within noise


def broken_roofs(measured: Iterable[Roof], points: Iterable[Point]
                 ) -> list[tuple[Roof, Point]]:
    """Each measured roof whose peak a result of its precision went past, with the
    fastest such result: a compute probe slower than a kernel did not find the GPU's
    ceiling (mma.sync FP16 on Hopper, whose peak needs wgmma), so the roof is no ceiling
    there. A point over the bandwidth slope but under the peak is not one: a small GEMM
    served from L2 can pass the DRAM slope at its algorithmic intensity."""
    pts = list(points)
    out = []
    for roof in measured:
        over = [p for p in pts if p.precision == roof.precision
                and p.tflops > roof.peak_tflops * OVER_CEILING]
        if over:
            out.append((roof, max(over, key=lambda p: p.tflops)))
    return out


def axis_span(points: Iterable[Point], all_roofs: Iterable[Roof]) -> tuple[float, float]:
    """The intensity range (FLOP/byte, log10 ends) that shows every point and ridge, with
    half a decade either side."""
    points, all_roofs = list(points), list(all_roofs)
    xs = [p.ai for p in points] + [p.ai_measured for p in points if p.ai_measured]
    xs += [r.ridge for r in all_roofs]
    if not xs:
        return (-1.0, 4.0)
    lo, hi = math.log10(min(xs)), math.log10(max(xs))
    return (math.floor(lo - 0.5), math.ceil(hi + 0.5))

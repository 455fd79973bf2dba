"""A GEMM's shape (M×N×K) and its arithmetic: the FLOPs, TFLOPS from a time, and a
percentage of another rate, each written once."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Shape:
    M: int
    N: int
    K: int

    def __str__(self) -> str:
        return f"{self.M}×{self.N}×{self.K}"

    @property
    def flops(self) -> float:
        """The FLOPs of one GEMM of this shape, 2·M·N·K: the one place it is written."""
        return 2.0 * self.M * self.N * self.K

    def tflops(self, ms: float) -> float:
        """TFLOP/s of one GEMM of this shape that took ``ms`` milliseconds."""
        return tflops_of(self.flops, ms)


def tflops_of(flops: float, ms: float) -> float:
    """TFLOP/s of ``flops`` done in ``ms`` milliseconds."""
    return flops / (ms * 1e-3) / 1e12


def percent(value: float | None, of: float | None) -> float | None:
    """``value`` as a percentage of ``of``; None without both, for a zero or negative
    ``of``, and where it overflows (100 × 1e308 TFLOPS is no percentage)."""
    if value is None or not of or of < 0:
        return None
    pct = 100.0 * value / of
    return pct if math.isfinite(pct) else None

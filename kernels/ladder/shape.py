"""A GEMM's shape (M×N×K), read from any event that names one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Shape:
    M: int
    N: int
    K: int

    def __str__(self) -> str:
        return f"{self.M}×{self.N}×{self.K}"


def shape_of(ev: dict[str, Any]) -> Shape | None:
    """The event's M, N, K as a Shape, or None where it has no (integer) shape."""
    dims = [ev.get(k) for k in ("M", "N", "K")]
    ints = [d for d in dims if isinstance(d, int) and not isinstance(d, bool)]
    return Shape(*ints) if len(ints) == 3 else None

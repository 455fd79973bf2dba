"""The inputs and output of one run, in the storage format its level takes.

Truth rules (shared/DESIGN.md): fresh values for every run, drawn from the run's named
distribution (``Distribution``: uniform on [-1, 1) unless the run says otherwise); the
reference is a float64 product of exactly the values the kernel sees (after rounding to FP16 or
BF16, or quantizing to E4M3 with the level's scales). Storage:

- FP32 / TF32: float32 A (M x K), B (K x N); C float32;
- FP16: float16 A, B; C float32 (cuBLAS's reference writes float16);
- BF16: bfloat16 bits as uint16 (no device dtype needed); B stored as Bt (N x K) when the
  level takes it so; C as bfloat16 bits;
- FP8: E4M3 codes as uint8, A (M x K) and Bt (N x K), with block scales (1 x 128 on A,
  128 x 128 on B) for the block-scaled level or one scale per tensor for cuBLASLt; C as
  bfloat16 bits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..device.gpu import require_cupy
from ..ladder.registry import DEEPGEMM_DIFF_MAX, TOLERANCE, Level, OutputFormat, Precision, Scaling
from ..protocol.events import DEFAULT_DISTRIBUTION, OPERAND_SEED, Distribution
from . import quantize as qz

BF16_NAN = 0x7FC0
OUTPUT_BYTES = {OutputFormat.FP32: 4, OutputFormat.FP16: 2, OutputFormat.BF16: 2}


@dataclass(slots=True)
class Operands:
    a: Any  # M x K
    b: Any  # K x N ("kn") or Bt, N x K ("nk")
    c: Any  # M x N
    fmt: str  # "fp32", "fp16", "bf16" (uint16 bits) or "e4m3" (uint8 codes)
    c_fmt: str  # "fp32", "fp16" or "bf16"
    b_layout: str = "kn"
    scale_a: Any = None  # FP8: KB x M block scales, or a 0-d per-tensor scale
    scale_b: Any = None  # FP8: NB x KB block scales, or a 0-d per-tensor scale

    @property
    def shape(self) -> tuple[int, int, int]:
        M, K = self.a.shape
        N = self.b.shape[0] if self.b_layout == "nk" else self.b.shape[1]
        return M, N, K

    def _value64(self, x: Any, scale: Any, rows_1x128: bool) -> Any:
        cp = require_cupy()
        if self.fmt == "bf16":
            return qz.bf16_decode(x, cp).astype(cp.float64)
        if self.fmt == "e4m3":
            if scale.ndim == 0:
                return qz.e4m3_decode(x, cp) * scale.astype(cp.float64)
            if rows_1x128:
                return qz.dequantize_rows_1x128(x, scale, cp)
            return qz.dequantize_blocks_128x128(x, scale, cp)
        return x.astype(cp.float64)

    def a64(self) -> Any:
        return self._value64(self.a, self.scale_a, True)

    def b64(self) -> Any:
        """B (K x N) in float64, whatever the stored layout."""
        b = self._value64(self.b, self.scale_b, False)
        return b.T if self.b_layout == "nk" else b

    def c32(self) -> Any:
        cp = require_cupy()
        return qz.bf16_decode(self.c, cp) if self.c_fmt == "bf16" else self.c

    def poison(self) -> None:
        """Fill C with NaN so an element the kernel never wrote cannot pass."""
        cp = require_cupy()
        self.c.fill(BF16_NAN if self.c_fmt == "bf16" else cp.nan)


def draw(shape: tuple[int, int], distribution: Distribution, xp: Any) -> Any:
    """A float32 array of ``shape`` drawn from ``distribution`` (``xp``: numpy or CuPy)."""
    if distribution is Distribution.UNIFORM:
        return xp.random.random(shape, dtype=xp.float32) * 2 - 1
    if distribution is Distribution.NORMAL:
        return xp.random.standard_normal(shape, dtype=xp.float32)
    if distribution is Distribution.PM1:
        return (xp.random.random(shape, dtype=xp.float32) < 0.5).astype(xp.float32) * 2 - 1
    if distribution is Distribution.ZEROS:
        return xp.zeros(shape, dtype=xp.float32)
    raise ValueError(f"unknown operand distribution {distribution!r}")


def seed_from_env(xp: Any) -> int | None:
    """Seeds ``xp``'s global generator from $GEMMSCOPE_OPERAND_SEED where it is set (the
    seed, or None where not); a value that is not an integer is said, never ignored."""
    text = os.environ.get(OPERAND_SEED, "").strip()
    if not text:
        return None
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"{OPERAND_SEED}={text!r}: give an integer seed, or unset it") from None
    xp.random.seed(seed)
    return seed


def random_inputs(level: Level, M: int, N: int, K: int,
                  distribution: Distribution = DEFAULT_DISTRIBUTION) -> Operands:
    """Fresh operands drawn from ``distribution`` in the level's storage format and an
    empty C. Every distribution survives the level's rounding: +-1 is exact in every
    format, and a block of zeros quantizes to zero codes with quantize.AMAX_FLOOR's scale."""
    cp = require_cupy()
    nk = level.b_layout == "nk"
    seed_from_env(cp)
    a = draw((M, K), distribution, cp)
    b = draw((N, K) if nk else (K, N), distribution, cp)
    p, c_fmt = level.precision, level.output_format
    c = cp.empty((M, N), {OutputFormat.FP32: cp.float32, OutputFormat.FP16: cp.float16,
                          OutputFormat.BF16: cp.uint16}[c_fmt])
    if p in (Precision.FP32, Precision.TF32):
        return Operands(a, b, c, "fp32", c_fmt, level.b_layout)
    if p is Precision.FP16:
        return Operands(a.astype(cp.float16), b.astype(cp.float16), c, "fp16", c_fmt,
                        level.b_layout)
    if p is Precision.BF16:
        return Operands(qz.bf16_encode(a, cp), qz.bf16_encode(b, cp), c, "bf16", c_fmt,
                        level.b_layout)
    if not nk:
        raise ValueError(f"{level.id}: FP8 operands are K-major (b_layout 'nk')")
    if level.scaling is Scaling.PER_TENSOR:  # cuBLASLt
        qa, sa = qz.quantize_tensor(a, cp)
        qb, sb = qz.quantize_tensor(b, cp)
    elif level.scaling is Scaling.BLOCKS:  # DeepGEMM's
        qa, sa = qz.quantize_rows_1x128(a, cp)
        qb, sb = qz.quantize_blocks_128x128(b, cp)
    else:
        raise ValueError(f"{level.id}: FP8 inputs need a scaling")
    return Operands(qa, qb, c, "e4m3", c_fmt, "nk", sa, sb)


@dataclass(frozen=True, slots=True)
class Accuracy:
    rel_err: float  # ||C - C_ref|| / ||C_ref||; ||C|| where C_ref is zero
    has_nan: bool
    deepgemm_diff: float  # 1 - 2 sum(xy) / sum(x^2 + y^2)
    # the reference is all zeros (zero operands): no relative error is defined, so C must
    # be exactly zero (and, poisoned before the launch, every element written)
    zero_reference: bool = False

    def verified(self, precision: Precision) -> bool:
        """No NaN, the relative error within the precision's tolerance, and for FP8 also
        DeepGEMM's measure below DEEPGEMM_DIFF_MAX; against a zero reference, C exactly
        zero."""
        if self.zero_reference:
            return not self.has_nan and self.rel_err == 0.0
        ok = not self.has_nan and self.rel_err == self.rel_err and \
            self.rel_err <= TOLERANCE[precision]
        if precision is Precision.FP8:
            ok = ok and self.deepgemm_diff < DEEPGEMM_DIFF_MAX
        return ok


def check(ops: Operands) -> Accuracy:
    """C against the float64 product of the values the kernel multiplied."""
    cp = require_cupy()
    ref = cp.matmul(ops.a64(), ops.b64())
    c64 = ops.c32().astype(cp.float64)
    has_nan = bool(cp.isnan(c64).any())
    diff_norm = float(cp.linalg.norm(c64 - ref))
    ref_norm = float(cp.linalg.norm(ref))
    err = diff_norm / ref_norm if ref_norm > 0 else diff_norm
    return Accuracy(err, has_nan, float("nan") if has_nan else qz.deepgemm_diff(c64, ref, cp),
                    zero_reference=ref_norm == 0)

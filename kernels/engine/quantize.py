"""Number formats the Tensor Core levels take, written for numpy and CuPy alike (``xp``).

- BF16: round-to-nearest-even from float32 bits, kept as uint16 (no bfloat16 dtype is
  needed on the device);
- FP8 E4M3 (the ``e4m3fn`` variant: no infinities, one NaN code, largest finite 448):
  encode by nearest value with ties to even (through the table of the 127 finite
  magnitudes), decode by table;
- block scaling in the style of DeepGEMM: one FP32 scale per 1 x 128 block of A along K,
  one per 128 x 128 block of Bt (N x K), each amax / 448 so that a block's largest element
  becomes the largest E4M3 value; and per-tensor scaling (one scale) for the cuBLASLt
  reference.

Qt-free and CuPy-free at import; every function takes its array module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

E4M3_MAX = 448.0
SCALE_BLOCK = 128
AMAX_FLOOR = 1e-4  # a block of zeros gets a tiny scale rather than a division by zero


def e4m3_values() -> np.ndarray:
    """float64 value of each of the 256 E4M3 codes (NaN for 0x7F and 0xFF)."""
    code = np.arange(256)
    sign = np.where(code >> 7, -1.0, 1.0)
    exp = (code >> 3) & 0xF
    man = code & 0x7
    mag = np.where(exp == 0, man / 8.0 * 2.0**-6, (1.0 + man / 8.0) * 2.0 ** (exp - 7.0))
    out = sign * mag
    out[(exp == 0xF) & (man == 0x7)] = np.nan
    return out


_VALUES = e4m3_values()
_MAGNITUDES = _VALUES[:127]  # codes 0x00..0x7E: 0, the subnormals, ..., 448, increasing


def e4m3_encode(x: Any, xp: Any = np) -> Any:
    """E4M3 codes (uint8) of x, rounded to nearest, ties to even, saturating at +-448."""
    mags = xp.asarray(_MAGNITUDES)
    ax = xp.minimum(xp.abs(x), E4M3_MAX)
    hi = xp.clip(xp.searchsorted(mags, ax), 0, 126)
    lo = xp.clip(hi - 1, 0, 126)
    d_lo = ax - mags[lo]
    d_hi = mags[hi] - ax
    tie_even = xp.where(lo % 2 == 0, lo, hi)
    pick = xp.where(d_lo < d_hi, lo, xp.where(d_hi < d_lo, hi, tie_even))
    return (pick | (xp.signbit(x) & (pick > 0)).astype(pick.dtype) << 7).astype(xp.uint8)


def e4m3_decode(codes: Any, xp: Any = np) -> Any:
    """float64 values of E4M3 codes."""
    return xp.asarray(_VALUES)[codes.astype(xp.int64)]


def bf16_encode(x: Any, xp: Any = np) -> Any:
    """bfloat16 bits (uint16) of float32 x, round to nearest even (finite inputs)."""
    bits = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    rounded = bits + xp.uint32(0x7FFF) + ((bits >> 16) & xp.uint32(1))
    return (rounded >> 16).astype(xp.uint16)


def bf16_decode(bits: Any, xp: Any = np) -> Any:
    """float32 values of bfloat16 bits."""
    return (bits.astype(xp.uint32) << 16).view(xp.float32)


def _scale(amax: Any, xp: Any) -> Any:
    return (xp.maximum(amax, AMAX_FLOOR) / E4M3_MAX).astype(xp.float32)


def quantize_rows_1x128(a: Any, xp: Any = np) -> tuple[Any, Any]:
    """A (M x K, K % 128 == 0) -> (E4M3 codes M x K, scales KB x M): one scale per row
    and 128-wide K block, stored block-major (scale of row m, block kb at [kb, m])."""
    M, K = a.shape
    if K % SCALE_BLOCK:
        raise ValueError(f"K={K} is not a multiple of {SCALE_BLOCK}")
    blocks = a.reshape(M, K // SCALE_BLOCK, SCALE_BLOCK)
    scale = _scale(xp.abs(blocks).max(axis=2), xp)  # M x KB
    codes = e4m3_encode(blocks / scale[:, :, None], xp).reshape(M, K)
    return codes, xp.ascontiguousarray(scale.T)


def quantize_blocks_128x128(bt: Any, xp: Any = np) -> tuple[Any, Any]:
    """Bt (N x K, K % 128 == 0) -> (E4M3 codes N x K, scales NB x KB) with NB = ceil(N/128):
    one scale per 128 x 128 block (the last row block may be partial)."""
    N, K = bt.shape
    if K % SCALE_BLOCK:
        raise ValueError(f"K={K} is not a multiple of {SCALE_BLOCK}")
    nb, kb = -(-N // SCALE_BLOCK), K // SCALE_BLOCK
    padded = xp.zeros((nb * SCALE_BLOCK, K), dtype=bt.dtype)
    padded[:N] = bt
    blocks = padded.reshape(nb, SCALE_BLOCK, kb, SCALE_BLOCK)
    scale = _scale(xp.abs(blocks).max(axis=(1, 3)), xp)  # NB x KB
    full = xp.repeat(xp.repeat(scale, SCALE_BLOCK, axis=0), SCALE_BLOCK, axis=1)[:N]
    return e4m3_encode(bt / full, xp), xp.ascontiguousarray(scale)


def quantize_tensor(x: Any, xp: Any = np) -> tuple[Any, Any]:
    """One scale for the whole tensor: (E4M3 codes, scale as a 0-d float32 array)."""
    scale = _scale(xp.abs(x).max(), xp)
    return e4m3_encode(x / scale, xp), scale


def dequantize_rows_1x128(codes: Any, scale_t: Any, xp: Any = np) -> Any:
    """float64 A from quantize_rows_1x128's output."""
    s = xp.repeat(scale_t.T.astype(xp.float64), SCALE_BLOCK, axis=1)  # M x K
    return e4m3_decode(codes, xp) * s


def dequantize_blocks_128x128(codes: Any, scale: Any, xp: Any = np) -> Any:
    """float64 Bt from quantize_blocks_128x128's output."""
    N, _K = codes.shape
    s = xp.repeat(xp.repeat(scale.astype(xp.float64), SCALE_BLOCK, axis=0), SCALE_BLOCK,
                  axis=1)[:N]
    return e4m3_decode(codes, xp) * s


def deepgemm_diff(x: Any, y: Any, xp: Any = np) -> float:
    """DeepGEMM's accuracy measure 1 - 2 sum(xy) / sum(x^2 + y^2) (0 when x == y)."""
    x = x.astype(xp.float64)
    y = y.astype(xp.float64)
    denom = float((x * x + y * y).sum())
    return 0.0 if denom == 0 else 1.0 - 2.0 * float((x * y).sum()) / denom

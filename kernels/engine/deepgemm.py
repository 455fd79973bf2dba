"""deepseek-ai/DeepGEMM as the FP8 levels' like-for-like reference (``deepgemm_fp8``):
its dense GEMM ``gemm_fp8_fp8_bf16_nt`` on the same E4M3 operands and block scales the
block-scaled levels read (one FP32 scale per 1x128 block of A, per 128x128 block of B),
BF16 output, on the bench's stream. Listed only where the runner can import deep_gemm
(kernels/device/gpu.py's deep_gemm_missing); nothing of DeepGEMM is in this repository."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..device.gpu import get_deep_gemm, get_torch
from .operands import Operands


def deepgemm_launcher(ops: Operands, stream_ptr: int) -> Callable[[], None]:
    """A launch of DeepGEMM's FP8 GEMM writing into ops.c. A's scales are stored KB x M
    (the levels' layout), which seen transposed is the column-major (M, KB) tensor
    DeepGEMM reads by TMA; where M is not a multiple of 4 its TMA alignment needs a
    padded copy, made here once so the timed call does no copy of its own."""
    torch = get_torch()
    if torch is None:
        raise ImportError("torch is not installed: the DeepGEMM reference needs it")
    dg = get_deep_gemm()
    a = torch.from_dlpack(ops.a).view(torch.float8_e4m3fn)
    b = torch.from_dlpack(ops.b).view(torch.float8_e4m3fn)  # Bt, N x K
    c = torch.from_dlpack(ops.c).view(torch.bfloat16)
    sb = torch.from_dlpack(ops.scale_b)  # NB x KB, row-major
    stream = torch.cuda.ExternalStream(stream_ptr)
    with torch.cuda.stream(stream):
        sa = dg.get_col_major_tma_aligned_tensor(torch.from_dlpack(ops.scale_a).t())

    def run_ref() -> None:
        with torch.cuda.stream(stream):
            dg.gemm_fp8_fp8_bf16_nt((a, sa), (b, sb), c)

    return run_ref


def calc_diff(x: Any, y: Any) -> float:
    """DeepGEMM's own accuracy measure on two CuPy arrays (for the GPU test that checks
    the bench's measure agrees with it)."""
    torch = get_torch()
    if torch is None:
        raise ImportError("torch is not installed")
    return float(get_deep_gemm().calc_diff(torch.from_dlpack(x), torch.from_dlpack(y)))

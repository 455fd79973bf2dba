"""The cuBLASLt FP8 references (per-tensor and DeepGEMM-style block scales), run through
torch._scaled_mm on the bench's stream: CuPy has no FP8 GEMM. torch is imported (by
device/gpu.py, which loads what touches CUDA) only when an FP8 reference runs or is asked
whether it can."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..device.gpu import get_torch
from .operands import Operands


def torch_scaled_mm_available() -> bool:
    torch = get_torch()
    return torch is not None and hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")


def torch_scaled_mm_launcher(ops: Operands, stream_ptr: int,
                             blocks: bool = False) -> Callable[[], None]:
    """cuBLASLt FP8 through torch._scaled_mm on the same stream, writing into ops.c:
    A row-major, B column-major (Bt row-major, transposed view). Per-tensor scales (one
    each), or DeepGEMM's block scales as torch wants them (its ScaledBlas.cpp checks):
    scale_a (M, K/128) with strides (1, M), a transposed view of the KB x M array the
    levels read; scale_b (K/128, N/128) whose transpose is the NB x KB row-major array."""
    torch = get_torch()
    if torch is None:
        raise ImportError("torch is not installed: the cuBLASLt FP8 references need it")

    def view(x: Any, dtype: Any) -> Any:
        return torch.from_dlpack(x).view(dtype)

    a = view(ops.a, torch.float8_e4m3fn)
    b = view(ops.b, torch.float8_e4m3fn).t()
    c = view(ops.c, torch.bfloat16)
    if not blocks:
        sa = torch.from_dlpack(ops.scale_a.reshape(1)).float()
        sb = torch.from_dlpack(ops.scale_b.reshape(1)).float()
    else:
        sa = torch.from_dlpack(ops.scale_a).t()
        sb = torch.from_dlpack(ops.scale_b).t()
    stream = torch.cuda.ExternalStream(stream_ptr)

    def run_ref() -> None:
        with torch.cuda.stream(stream):
            torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, out=c)

    return run_ref

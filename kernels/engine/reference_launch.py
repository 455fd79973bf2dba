"""A reference's launch: cuBLAS through CuPy's matmul (TF32 by the compute type), cuBLASLt
FP8 through torch (cublaslt.py), DeepGEMM's FP8 kernel where it imports (deepgemm.py).
The bench times it (measure.py); ``engine.launch`` runs it once under Nsight Compute so
that ``record --ncu`` can name the library's kernel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..device.gpu import require_cupy
from ..ladder.registry import Level, Library, Precision, Scaling
from .cublaslt import torch_scaled_mm_launcher
from .deepgemm import deepgemm_launcher
from .operands import Operands

CUBLAS_COMPUTE_DEFAULT, CUBLAS_COMPUTE_TF32 = 1, 7  # cupy._core compute types


def reference_launcher(level: Level, ops: Operands, stream_ptr: int
                       ) -> tuple[Callable[[], None], dict[str, Any]]:
    """The library call of a reference on ``ops`` (cuBLASLt's on the stream
    ``stream_ptr``; CuPy's matmul on the current stream)."""
    if level.library is None:
        raise ValueError(f"{level.id} is not a reference: it has no library")
    info = {"variant": str(level.library)}
    if level.library is Library.DEEPGEMM:
        return deepgemm_launcher(ops, stream_ptr), info
    if level.library is Library.CUBLASLT:
        blocks = level.scaling is Scaling.BLOCKS
        return torch_scaled_mm_launcher(ops, stream_ptr, blocks), info
    cp = require_cupy()
    a, b, c = ops.a, ops.b, ops.c
    if ops.fmt == "bf16":  # the same bits, seen as ml_dtypes.bfloat16 by cuBLAS
        import ml_dtypes

        a, b, c = (x.view(ml_dtypes.bfloat16) for x in (a, b, c))
    if ops.b_layout == "nk":
        b = b.T  # a transposed view: cuBLAS reads Bt as is
    compute = CUBLAS_COMPUTE_TF32 if level.precision is Precision.TF32 else None

    def run_ref() -> None:
        if compute is None:
            cp.matmul(a, b, out=c)
            return
        cp._core.set_compute_type(cp.float32, compute)
        try:
            cp.matmul(a, b, out=c)
        finally:
            cp._core.set_compute_type(cp.float32, CUBLAS_COMPUTE_DEFAULT)

    return run_ref, info

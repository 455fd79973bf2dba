"""Host side of the sm_90a levels: TMA tensor maps and launches with by-value parameters.

Tensor maps are built by the driver's ``cuTensorMapEncodeTiled`` through NVIDIA's typed
bindings (``cuda.bindings.driver``, the ``cuda-bindings`` package the CUDA extras install;
before, a hand-written ctypes call on ``libcuda``, whose argument types nothing checked).
A map describes a row-major 2D matrix (inner dimension = columns, 16-byte row pitch) and
the box one TMA copy moves, here always one 128-byte row of swizzle wide. The kernels take
the maps by value as ``__grid_constant__`` parameters; CuPy's RawKernel cannot pass a
128-byte struct, so those kernels are launched through ``cuLaunchKernel`` with a parameter
array of the arguments' addresses built here (ctypes holds those bytes). Imports no CuPy
(the caller passes device pointers and the function handle).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TENSOR_MAP_BYTES = 128
# CUtensorMapDataType, CUtensorMapSwizzle, CUtensorMapL2promotion (cuda.h)
# f32: FP32 values copied as they are (the TF32 level's operands, which wgmma reads as
# TF32); tf32: the driver's TFLOAT32 type, which benchmarks/tf32_accuracy.py tries beside it
DATA_TYPE = {"uint8": 0, "uint16": 1, "f16": 6, "f32": 7, "bf16": 9, "tf32": 11}
ITEM_BYTES = {"uint8": 1, "uint16": 2, "f16": 2, "f32": 4, "bf16": 2, "tf32": 4}
SWIZZLE_NONE, SWIZZLE_128B = 0, 3
L2_PROMOTION_256B = 3
MAX_BOX = 256


class TensorMapError(RuntimeError):
    """The driver refused a tensor map; the message names the matrix and the box."""


@dataclass(frozen=True, slots=True)
class TiledMap:
    """What one map describes: a rows x cols row-major matrix of ``dtype`` at ``ptr``,
    copied in boxes of box_rows x box_cols, 128-byte swizzled."""

    ptr: int
    dtype: str
    rows: int
    cols: int
    box_rows: int
    box_cols: int
    # False: the box lands as plain rows (no swizzle), box_cols * item a multiple of 16
    # bytes up to MAX_BOX elements (fp8_deep's C tiles of BN = 88 columns)
    swizzle: bool = True

    def check(self) -> None:
        item = ITEM_BYTES[self.dtype]
        if self.ptr % 16:
            raise TensorMapError(f"matrix at {self.ptr:#x} is not 16-byte aligned")
        if (self.cols * item) % 16:
            raise TensorMapError(f"a row of {self.cols} {self.dtype} is {self.cols * item} bytes, "
                                 "not a multiple of 16 (TMA row pitch)")
        if self.swizzle and self.box_cols * item != 128:
            raise TensorMapError(f"box of {self.box_cols} {self.dtype} is not one 128-byte row")
        if not self.swizzle and ((self.box_cols * item) % 16 or not 1 <= self.box_cols <= MAX_BOX):
            raise TensorMapError(f"box of {self.box_cols} {self.dtype} is not a multiple of 16 "
                                 f"bytes of 1..{MAX_BOX} elements")
        if not 1 <= self.box_rows <= MAX_BOX:
            raise TensorMapError(f"box of {self.box_rows} rows (1..{MAX_BOX})")

    def arguments(self) -> dict[str, Any]:
        """cuTensorMapEncodeTiled's arguments by name, as plain numbers (the enums' values
        of cuda.h); :func:`encode` makes them the bindings' types."""
        item = ITEM_BYTES[self.dtype]
        return {"data_type": DATA_TYPE[self.dtype], "rank": 2, "address": self.ptr,
                "dims": [self.cols, self.rows],  # inner dimension first
                "strides": [self.cols * item],  # the row pitch, bytes
                "box": [self.box_cols, self.box_rows], "element_strides": [1, 1],
                "interleave": 0, "swizzle": SWIZZLE_128B if self.swizzle else SWIZZLE_NONE,
                "l2_promotion": L2_PROMOTION_256B, "oob_fill": 0}


def _bindings() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise TensorMapError("the sm_90a levels build their tensor maps through NVIDIA's "
                             "cuda-bindings, which is not installed (pip install "
                             f"cuda-bindings, or gemmscope[cuda13]): {exc}") from None
    return driver


def encode(spec: TiledMap) -> ctypes.Array:
    """The 128-byte CUtensorMap of ``spec`` (raises TensorMapError with the driver's code)."""
    spec.check()
    cu = _bindings()
    a = spec.arguments()
    # the sizes as the bindings' cuuint64_t / cuuint32_t: cuda-bindings 13.3 (the H200's)
    # refuses plain ints there ("Cannot convert int to cuuint32_t"); 13.5 takes either
    u64, u32 = cu.cuuint64_t, cu.cuuint32_t
    status, tensor_map = cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType(a["data_type"]), a["rank"], a["address"],
        [u64(v) for v in a["dims"]], [u64(v) for v in a["strides"]],
        [u32(v) for v in a["box"]], [u32(v) for v in a["element_strides"]],
        cu.CUtensorMapInterleave(a["interleave"]), cu.CUtensorMapSwizzle(a["swizzle"]),
        cu.CUtensorMapL2promotion(a["l2_promotion"]),
        cu.CUtensorMapFloatOOBfill(a["oob_fill"]))
    if status != cu.CUresult.CUDA_SUCCESS:
        raise TensorMapError(f"cuTensorMapEncodeTiled returned {getattr(status, 'name', status)}"
                             f" for {spec}")
    out = (ctypes.c_ubyte * TENSOR_MAP_BYTES)()
    ctypes.memmove(out, tensor_map.getPtr(), TENSOR_MAP_BYTES)  # the parameter's bytes
    return out


def blank_map() -> ctypes.Array:
    """A map-sized parameter for a kernel told (by a flag) not to use that map."""
    return (ctypes.c_ubyte * TENSOR_MAP_BYTES)()


def int32(v: int) -> ctypes.c_int32:
    return ctypes.c_int32(v)


def pointer(ptr: int) -> ctypes.c_void_p:
    return ctypes.c_void_p(ptr)


def launch(driver: Any, function_ptr: int, grid: Sequence[int], block: Sequence[int],
           smem: int, stream_ptr: int, args: Sequence[Any]) -> None:
    """cuLaunchKernel with each argument's bytes given by address (``driver`` is
    cupy.cuda.driver); ``args`` are ctypes objects in the kernel's parameter order."""
    params = (ctypes.c_void_p * len(args))(*(ctypes.addressof(a) for a in args))
    driver.launchKernel(function_ptr, *grid, *block, smem, stream_ptr,
                        ctypes.addressof(params), 0)

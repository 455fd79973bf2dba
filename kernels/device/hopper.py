"""Host side of the sm_90a levels: TMA tensor maps and launches with by-value parameters.

Tensor maps are built by the driver's ``cuTensorMapEncodeTiled``, called through ctypes on
``libcuda`` (so neither cuda-python nor a CUDA toolkit is needed on the GPU machine). A map
describes a row-major 2D matrix (inner dimension = columns, 16-byte row pitch) and the box
one TMA copy moves, here always one 128-byte row of swizzle wide. The kernels take the maps
by value as ``__grid_constant__`` parameters; CuPy's RawKernel cannot pass a 128-byte struct,
so those kernels are launched through ``cuLaunchKernel`` with a parameter array built here.
Imports no CuPy (the caller passes device pointers and the function handle).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TENSOR_MAP_BYTES = 128
# CUtensorMapDataType, CUtensorMapSwizzle, CUtensorMapL2promotion (cuda.h)
DATA_TYPE = {"uint8": 0, "uint16": 1, "f16": 6, "bf16": 9}
ITEM_BYTES = {"uint8": 1, "uint16": 2, "f16": 2, "bf16": 2}
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

    def arguments(self) -> tuple[Any, ...]:
        """The ctypes arguments of cuTensorMapEncodeTiled after the output pointer."""
        item = ITEM_BYTES[self.dtype]
        dims = (ctypes.c_uint64 * 2)(self.cols, self.rows)
        strides = (ctypes.c_uint64 * 1)(self.cols * item)
        box = (ctypes.c_uint32 * 2)(self.box_cols, self.box_rows)
        elem = (ctypes.c_uint32 * 2)(1, 1)
        return (ctypes.c_int(DATA_TYPE[self.dtype]), ctypes.c_uint32(2),
                ctypes.c_void_p(self.ptr), dims, strides, box, elem,
                ctypes.c_int(0), ctypes.c_int(SWIZZLE_128B if self.swizzle else SWIZZLE_NONE),
                ctypes.c_int(L2_PROMOTION_256B),
                ctypes.c_int(0))


_libcuda: Any = None


def _driver() -> Any:
    global _libcuda
    if _libcuda is None:
        try:
            _libcuda = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise TensorMapError(f"cannot load the CUDA driver (libcuda.so.1): {exc}") from None
    return _libcuda


def encode(spec: TiledMap) -> ctypes.Array:
    """The 128-byte CUtensorMap of ``spec`` (raises TensorMapError with the driver's code)."""
    spec.check()
    out = (ctypes.c_ubyte * TENSOR_MAP_BYTES)()
    status = _driver().cuTensorMapEncodeTiled(ctypes.byref(out), *spec.arguments())
    if status != 0:
        raise TensorMapError(f"cuTensorMapEncodeTiled returned {status} for {spec}")
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

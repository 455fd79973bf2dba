"""Host side of fp8_deep (kernels/cuda/fp8_deep.cu): its tensor maps and launch.

What differs from the generic persistent launcher (level_launch._tma_launcher): A is copied in
boxes of 128 rows, half a 256-row tile; Bt in boxes of BN rows; C is stored in 64 x 64
swizzled boxes when BN is a multiple of 64 (32 x 64 where the kernel stages C a box at a
time, EPC 1), else in plain boxes of BN columns by 64 rows;
A's row scales (K/128 rows of M floats) by TMA in boxes of 256 where the kernel was built
for it (SCT 1, which the level's shape rule picks where M % 4 == 0: a 16-byte row pitch),
else the kernel's producer lanes copy them; the grid is the level's grid rule (whole
clusters). The kernel's cluster shape is compiled in (``__cluster_dims__``), so the plain
cuLaunchKernel launches it; the argument list is the other FP8 level's (no stream-K
workspace: its two pointers are null) and then the row scales' map.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..device import hopper
from ..device.gpu import require_cupy
from ..ladder.fp8_deep_level import scales_by_tma
from ..ladder.level import Level
from .operands import Operands

A_BOX_ROWS = 128  # half of fp8_deep's 256-row tile
SCALE_BOX = 256  # A's row scales of one tile and K block


def deep_maps(ops: Operands, bn: int, epc: int = 0) -> tuple[Any, Any, Any, bool]:
    """(map of A, map of Bt, map of C, whether C goes by TMA) for tiles BN wide; C's boxes
    32 rows high where the kernel stages C box by box (EPC 1)."""
    M, N, K = ops.shape
    map_a = hopper.encode(hopper.TiledMap(ops.a.data.ptr, "uint8", M, K, A_BOX_ROWS, 128))
    map_b = hopper.encode(hopper.TiledMap(ops.b.data.ptr, "uint8", N, K, bn, 128))
    tma_c = N % 8 == 0  # a 16-byte row pitch
    if not tma_c:
        map_c = hopper.blank_map()
    elif bn % 64 == 0:
        map_c = hopper.encode(hopper.TiledMap(ops.c.data.ptr, "bf16", M, N, 32 if epc else 64,
                                              64))
    else:
        map_c = hopper.encode(hopper.TiledMap(ops.c.data.ptr, "bf16", M, N, 64, bn,
                                              swizzle=False))
    return map_a, map_b, map_c, tma_c


def scale_map(ops: Operands, by_tma: bool) -> Any:
    """The map of A's row scales in boxes of one tile's 256 rows (a blank map where the
    kernel was built to copy them by its lanes, SCT 0)."""
    M, _N, K = ops.shape
    if not by_tma:
        return hopper.blank_map()
    if not scales_by_tma(M):
        raise hopper.TensorMapError(f"fp8_deep with SCT=1 loads A's row scales by TMA, which "
                                    f"needs M % 4 == 0 (a 16-byte row pitch); M={M}: run it "
                                    "with SCT=0")
    return hopper.encode(hopper.TiledMap(ops.scale_a.data.ptr, "f32", K // 128, M, 1,
                                         SCALE_BOX, swizzle=False))


def deep_plan(level: Level, params: dict[str, int], M: int, N: int,
              sm_count: int) -> tuple[int, tuple[int, int, int]]:
    """(BN, grid) of a launch with the parameters it was built with, which may not be the
    level's own (a run that gives its parameters): the Bt and C boxes and the grid follow
    them, or the maps would describe other boxes than the kernel waits for."""
    built = dataclasses.replace(level, params={**level.params, **params})
    return built.params["BN"], built.grid(M, N, sm_count)


def deep_launcher(level: Level, params: dict[str, int], kernel: Any, ops: Operands, smem: int,
                  block: tuple[int, int, int]) -> Callable[[], None]:
    cp = require_cupy()
    M, N, _K = ops.shape
    bn, grid = deep_plan(level, params, M, N,
                         int(cp.cuda.Device().attributes["MultiProcessorCount"]))
    built = {**level.params, **params}
    map_a, map_b, map_c, tma_c = deep_maps(ops, bn, built.get("EPC", 0))
    map_s = scale_map(ops, bool(built.get("SCT", 0)))
    args: list[Any] = [hopper.int32(M), hopper.int32(N), hopper.int32(_K), map_a, map_b, map_c,
                       hopper.pointer(ops.c.data.ptr), hopper.int32(int(tma_c)),
                       hopper.pointer(0), hopper.pointer(0),
                       hopper.pointer(ops.scale_a.data.ptr), hopper.pointer(ops.scale_b.data.ptr),
                       map_s]
    function = kernel.kernel.ptr

    def run_level() -> None:
        hopper.launch(cp.cuda.driver, function, grid, block, smem,
                      cp.cuda.get_current_stream().ptr, args)

    return run_level

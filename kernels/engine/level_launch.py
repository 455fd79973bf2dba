"""Compiling a level and launching it at one shape: the launch the bench times (a plain
grid, a persistent sm_90a level's tensor maps, DeepGEMM's host), with the kernel's variant
and resources, and :class:`Refused`, what a level that cannot run here raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..device import hopper
from ..device.gpu import device_limits, require_cupy
from ..ladder.level import Toolchain
from ..ladder.registry import BY_ID, Geometry, Level
from ..toolchain import build_event, nvrtc
from ..toolchain.constraints import over_limits
from .deep_launch import deep_launcher
from .operands import Operands


class Refused(ValueError):
    """The level cannot run this shape or on this device; the message says why."""

    def __init__(self, message: str, kind: str = "refused"):
        super().__init__(message)
        self.kind = kind


def limit_kind(level: Level) -> str:
    """A level over the device's limits: the command's fault where it changed the
    level's parameters (bad_input), else the device's (unsupported)."""
    return "bad_input" if level.params != BY_ID.get(level.id, level).params else "unsupported"


# Shared memory per block above which a second block no longer fits on an H100/H200 SM
# (228 KB per SM, 1 KB of it reserved per block): launching with at least this much, the
# unused rest as dynamic shared memory, runs one block per SM (see ONE_BLOCK_PER_SM use).
ONE_BLOCK_PER_SM_SMEM = 120 * 1024


def level_launcher(level: Level, ops: Operands, params: dict[str, int] | None = None,
                   min_smem: int = 0, on_compile: Callable[[], None] | None = None,
                   trace: Callable[[nvrtc.Compiled], None] | None = None
                   ) -> tuple[Callable[[], None], dict[str, Any]]:
    """Compile the level and return a launch of the variant this shape uses (on the
    current stream), with the kernel's variant and resources. ``min_smem``: launch with
    at least this much shared memory per block (static + dynamic), the kernel not using
    the extra, to control how many blocks share an SM (the ncu bank-conflict comparison).
    ``on_compile()``: called before the level is built, where this process has not built
    it yet; the info then says how long that took and whether it came from the cache.
    ``trace``: launch the level's trace build (kernels/cuda/trace.cuh) instead, after
    calling ``trace(built)`` with it (which points its ``gs_trace`` at a buffer)."""
    M, N, K = ops.shape
    picked = False
    if params is None and level.shape_params is not None:  # parameters picked per shape
        sm_count = int(require_cupy().cuda.Device().attributes["MultiProcessorCount"])
        fitted = level.for_shape(M, N, K, sm_count)
        if fitted is not level:
            level, params, picked = fitted, dict(fitted.params), True
    if level.params_rule is not None:  # a build for another shape (every caller's path)
        why = level.params_rule(M, N, K, {**level.params, **(params or {})})
        if why is not None:
            raise Refused(f"{level.id}: {why}")
    compiled_now: list[bool] = []

    def compiling() -> None:
        compiled_now.append(True)
        if on_compile is not None:
            on_compile()

    if level.user_file is not None and level.toolchain is not Toolchain.TRITON:
        cc = require_cupy().cuda.Device().compute_capability
        build_event.screen_user_source(level, params, level.arch or f"sm_{cc}")
    built = nvrtc.compile_level(level, params, compiling, trace=trace is not None)
    if trace is not None:
        trace(built)
    vec = level.use_vector_path(M, N, K) or not level.edge_variant
    kernel = built.kernels[vec]
    smem = level.dyn_smem_bytes(built.params)
    attrs = built.attributes(vec)
    static = attrs["smem_bytes"]
    if min_smem > static + smem:
        smem = min_smem - static
    why = over_limits(level, device_limits(), static, smem, attrs["regs"],
                      int(kernel.max_threads_per_block))
    if why is not None:  # checked here, a launch never fails for want of resources
        raise Refused(f"{level.id}: {why}", limit_kind(level))
    if static + smem > 48 * 1024:  # above the default, the kernel must opt in
        kernel.max_dynamic_shared_size_bytes = smem
    geometry = level.launch_geometry(built.params)
    block = (*geometry.block, 1)
    if level.host == "fp8_deep":
        run_level = deep_launcher(level, built.params, kernel, ops, smem, block)
    elif level.persistent:
        run_level = _tma_launcher(level, geometry, kernel, ops, smem, block)
    else:
        sms = (int(require_cupy().cuda.Device().attributes["MultiProcessorCount"])
               if level.sm_grid else None)
        grid = level.grid(M, N, sms)
        args = (np.int32(M), np.int32(N), np.int32(K), ops.a, ops.b, ops.c)

        def run_level() -> None:
            kernel(grid, block, args, shared_mem=smem)

    info: dict[str, Any] = {
        "variant": ("tma" if level.persistent else "vector" if vec else "scalar"),
            "threads": block[0] * block[1], **built.attributes(vec),
            # which code ran (issue 31 item 2): one key, one cubin (the build is deterministic)
            "code_key": built.code_key, "compiler": built.compiler}
    info["smem_bytes"] += smem
    info["kernel"] = getattr(kernel, "name", None)
    if compiled_now:  # this run built the level (its first in this process)
        info.update(compile_s=round(built.compile_s, 4), compile_cached=built.cached)
    if picked:  # the run's result says what ran
        info["params"] = dict(level.params)
    return run_level, info


# a 16-bit C's map for TMA stores: its element type and box rows (64 columns: 128 bytes)
C_BOXES = {"bf16": ("bf16", 64), "fp16": ("f16", 32)}


def _tma_launcher(level: Level, geometry: Geometry, kernel: Any, ops: Operands,
                  smem: int, block: tuple[int, int, int]) -> Callable[[], None]:
    """A persistent sm_90a level: tensor maps of A and Bt, one block per SM, launched
    through cuLaunchKernel (the maps go by value). A box is a block tile's rows by one
    K tile."""
    cp = require_cupy()
    M, N, K = ops.shape
    dtype = {"bf16": "bf16", "fp16": "f16", "e4m3": "uint8", "fp32": "f32"}[ops.fmt]
    (rows, cols), box_k = geometry.tile, geometry.k_tile
    map_a = hopper.encode(hopper.TiledMap(ops.a.data.ptr, dtype, M, K, rows, box_k))
    map_b = hopper.encode(hopper.TiledMap(ops.b.data.ptr, dtype, N, K, cols, box_k))
    # a 16-bit C through TMA stores when its rows are 16-byte multiples: BF16 in 64 x 64
    # boxes, FP16 (mma_tma, and its attempts' OUT16 2 and 3) in 32 x 64 boxes, two a warp
    # tile; else (and for an FP32 C) the kernel's own stores
    c_box = C_BOXES.get(ops.c_fmt)
    tma_c = c_box is not None and N % 8 == 0
    map_c = (hopper.encode(hopper.TiledMap(ops.c.data.ptr, c_box[0], M, N, c_box[1], 64))
             if tma_c and c_box is not None else hopper.blank_map())
    grid = level.grid(M, N, int(cp.cuda.Device().attributes["MultiProcessorCount"]))
    # stream-K: one slot of FP32 partial sums per block (a block tile) and a counter per
    # (tile, consumer), zeroed here; the kernel leaves the counters zero after each launch
    ws = flags = None
    if level.stream_k:
        tiles = -(-M // rows) * -(-N // cols)
        ws = cp.empty(grid[0] * rows * cols, dtype=cp.float32)
        flags = cp.zeros(tiles * level.params["CONSUMERS"], dtype=cp.int32)
    args: list[Any] = [hopper.int32(M), hopper.int32(N), hopper.int32(K), map_a, map_b, map_c,
                       hopper.pointer(ops.c.data.ptr), hopper.int32(int(tma_c)),
                       hopper.pointer(0 if ws is None else ws.data.ptr),
                       hopper.pointer(0 if flags is None else flags.data.ptr)]
    if ops.scale_a is not None:
        args += [hopper.pointer(ops.scale_a.data.ptr), hopper.pointer(ops.scale_b.data.ptr)]
    function = kernel.kernel.ptr

    workspace = (ws, flags)

    def run_level() -> None:
        assert workspace  # the closure keeps the stream-K buffers alive as long as the launch
        hopper.launch(cp.cuda.driver, function, grid, block, smem,
                      cp.cuda.get_current_stream().ptr, args)

    return run_level

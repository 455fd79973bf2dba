"""What a level is: the entry type of the registry (kernels/ladder/registry.py), its enums
(precision, kind, output format, scaling, library), the launch geometry callables, and
the checks of a level's template parameters. The table of levels itself is registry.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from . import arch as arch_limits


class Precision(StrEnum):
    FP32 = "fp32"
    TF32 = "tf32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"


class Kind(StrEnum):
    LEVEL = "level"
    REFERENCE = "reference"


class Toolchain(StrEnum):
    """What builds and launches a level's kernel."""

    NVRTC = "nvrtc"  # a CUDA source compiled by NVRTC (CuPy), launched by the engine
    TRITON = "triton"  # a @triton.jit function of a user's .py, compiled by Triton


class OutputFormat(StrEnum):
    """How a level stores C."""

    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"  # bfloat16 bits as uint16


class Scaling(StrEnum):
    """How a level's FP8 inputs are scaled (NONE for the other precisions)."""

    NONE = "none"
    PER_TENSOR = "per_tensor"  # one FP32 scale per tensor (cuBLASLt)
    BLOCKS = "blocks"  # one FP32 scale per 1x128 block of A and 128x128 block of B (DeepGEMM)


class Library(StrEnum):
    """What a reference calls; the value is the result's ``variant``."""

    CUBLAS = "cublas"  # cupy.matmul
    CUBLASLT = "cublaslt"  # torch._scaled_mm (FP8)
    DEEPGEMM = "deep_gemm"  # deepseek-ai/DeepGEMM's gemm_fp8_fp8_bf16_nt, where importable


# input storage type of each precision class (the ``dtype`` field of a result)
DTYPE_OF = {Precision.FP32: "fp32", Precision.TF32: "fp32", Precision.FP16: "fp16",
            Precision.BF16: "bf16", Precision.FP8: "fp8e4m3"}

# verification tolerance on ||C - C_ref|| / ||C_ref|| (reference: float64 of the same
# rounded inputs). FP32 accumulation over K=8192 stays near 1e-6; TF32 rounds inputs to
# 10 mantissa bits (about 3e-4); FP16/BF16 references write a 16-bit C.
TOLERANCE = {Precision.FP32: 1e-4, Precision.TF32: 5e-3, Precision.FP16: 2e-3,
             Precision.BF16: 1e-2, Precision.FP8: 2e-2}
DEEPGEMM_DIFF_MAX = 1e-3  # FP8 runs must also stay below this 1 - 2 sum(xy) / sum(x^2 + y^2)


@dataclass(frozen=True, slots=True)
class Geometry:
    """How a level's blocks cut the GEMM, derived from its template parameters."""

    block: tuple[int, int]  # threads per block (x, y)
    tile: tuple[int, int]  # (rows of C, cols of C) one block computes
    k_tile: int = 1  # K one block stages per step (BK); 1 where nothing is staged
    group_rows: int = 1  # block rows walked together, column by column (GM)


# what a catalog has always said of a reference's block and tile (cuBLAS chooses its own)
LIBRARY_CALL = Geometry((256, 1), (1, 1))


def one_thread_per_element(p: dict[str, int]) -> Geometry:
    """BLOCK x BLOCK threads, one element of C each; k walked one at a time."""
    side = p["BLOCK"]
    return Geometry((side, side), (side, side))


def square_tiles(p: dict[str, int]) -> Geometry:
    """TILE x TILE threads, one element of C each, TILE-deep shared tiles of A and B."""
    side = p["TILE"]
    return Geometry((side, side), (side, side), side)


def thread_tiles(p: dict[str, int]) -> Geometry:
    """One thread per TM x TN outputs of a BM x BN block tile."""
    threads = (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])
    return Geometry((threads, 1), (p["BM"], p["BN"]), p["BK"])


def warp_tiles(p: dict[str, int]) -> Geometry:
    """One warp per WM x WN tile of a BM x BN block tile; GM block rows walked together
    where the kernel groups its blocks (gs_block_coords)."""
    threads = (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32
    return Geometry((threads, 1), (p["BM"], p["BN"]), p["BK"], p.get("GM", 1))


def warp_tiles_grouped(p: dict[str, int]) -> Geometry:
    """warp_tiles with GM tile rows walked together (gs_group_coords)."""
    threads = (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32
    return Geometry((threads, 1), (p["BM"], p["BN"]), p["BK"], p["GM"])


def warp_tiles_producer(p: dict[str, int]) -> Geometry:
    """warp_tiles_grouped behind a producer warpgroup (128 threads first in the block);
    GM tile rows walked together (gs_group_coords)."""
    g = warp_tiles_grouped(p)
    return dataclasses.replace(g, block=(128 + g.block[0], 1))


def warp_specialized(p: dict[str, int]) -> Geometry:
    """A producer warpgroup and CONSUMERS consumer warpgroups per BM x BN tile; GM tile
    rows walked together (gs_group_coords)."""
    return Geometry(((p["CONSUMERS"] + 1) * 128, 1), (p["BM"], p["BN"]), p["BK"], p["GM"])


@dataclass(frozen=True, slots=True)
class Level:
    id: str
    title: str
    adds: str
    precision: Precision
    follows: str
    kind: Kind = Kind.LEVEL
    source: str | None = None  # file name under kernels/cuda/
    kernel: str | None = None  # template name; instantiated as kernel<params..., VEC>
    params: dict[str, int] = field(default_factory=dict)  # template arguments, in order
    # block shape and block tile from the template parameters (None: a library call)
    geometry: Callable[[dict[str, int]], Geometry] | None = None
    grid_x: str = "N"  # which dimension of C blockIdx.x walks ("N" or "M")
    vector: int = 1  # elements per vector load on the fast path (K % vector == N % vector == 0)
    # dynamic shared memory in bytes, from the template parameters (None: static only)
    dyn_smem: Callable[[dict[str, int]], int] | None = None
    source_dir: str | None = None  # a folder other than kernels/cuda (test-only levels)
    arch: str | None = None  # e.g. "sm_90a" when the level needs Hopper-only instructions
    # "kn": B is K x N row-major (the ladder's layout); "nk": the kernel takes Bt, N x K
    # row-major (K-major, as wgmma reads FP8 operands); the host transposes before timing
    b_layout: str = "kn"
    persistent: bool = False  # one block per SM walking tiles (grid = min(tiles, SMs))
    # the trace build has a K-stage observer (kernels/cuda/trace.cuh, GsTraceStages): a
    # lane after the warpgroups' lanes records the block's K-stage events, which its
    # consumer lanes then do not (their tiles only)
    trace_observer: bool = False
    # one block per SM walking tiles like ``persistent``, but launched like the other
    # levels (pointers, no tensor maps): the grid is min(tiles, SMs) blocks
    sm_grid: bool = False
    # the template parameter that switches stream-K on (a persistent level; non-zero: every
    # SM's block takes part whatever the tile count, with a partial-sum workspace)
    stream_k_param: str | None = None
    k_multiple: int = 1  # K must be a multiple of this (refused before launch otherwise)
    k_reason: str = ""  # why, for the refusal message
    output_format: OutputFormat = OutputFormat.FP32  # how C is stored
    scaling: Scaling = Scaling.NONE
    library: Library | None = None  # a reference's library (None: the level's own kernel)
    # the reference a level's percentage compares against (an id of this registry)
    reference: str | None = None
    # why a shape is refused, beyond k_multiple (None: every shape runs)
    shape_rule: Callable[[int, int, int], str | None] | None = None
    edge_variant: bool = True  # False: one instantiation (VEC=true) serves every shape
    # template parameter changes picked per shape from (M, N, K, SMs), as a library picks
    # a kernel per shape; applied when a run gives no parameters of its own (None: the
    # same parameters at every shape)
    shape_params: Callable[[int, int, int, int], dict[str, int]] | None = None
    # why a build with these template parameters cannot run M x N x K, where one is built
    # for a shape (fp8_deep's KS, its K blocks compiled in); None: every build runs every
    # shape the level takes
    params_rule: Callable[[int, int, int, dict[str, int]], str | None] | None = None
    # a persistent level's grid from (tiles, SMs, template parameters), where it is not
    # min(tiles, SMs) (None: that); e.g. whole clusters, or waves that come out even
    grid_rule: Callable[[int, int, dict[str, int]], int] | None = None
    # the host side that builds its launch, where it is not the generic one (None):
    # "fp8_deep" (kernels/engine/deep_launch.py: half-height A boxes for multicast)
    host: str | None = None
    notes: str = ""
    # a user's kernel (kernels/ladder/user_level.py): the file it came from, the grid it
    # is launched with (its spec's expressions, evaluated for the run), whether its
    # template ends in the VEC flag, and what builds it
    user_file: str | None = None
    fixed_grid: tuple[int, int, int] | None = None
    vec_flag: bool = True
    toolchain: Toolchain = Toolchain.NVRTC

    @property
    def stream_k(self) -> bool:
        return self.stream_k_param is not None and bool(self.params.get(self.stream_k_param))

    @property
    def archs(self) -> tuple[str, ...]:
        """The architectures this level is built for and fits (kernels/ladder/arch.py); a
        reference (a library call) claims every portable one that has its precision's
        tensor cores (FP8: sm_89 and later)."""
        if self.kind is Kind.REFERENCE and self.arch is not None:
            return (self.arch,)  # a library built for one architecture (DeepGEMM: sm_90a)
        if self.kind is Kind.REFERENCE:
            return (arch_limits.FP8_ARCHS if self.precision is Precision.FP8
                    else arch_limits.PORTABLE)
        bx, by = self.threads
        return arch_limits.claimed(self.arch, bx * by, self.dyn_smem_bytes())

    @property
    def arch_need(self) -> str:
        """What the level needs, in a few words ("sm_80+", "sm_90a only (Hopper)")."""
        return arch_limits.need_text(self.arch, self.archs)

    def runs_on(self, cc: str | None) -> bool:
        """Whether the level runs on a device of compute capability ``cc`` ("8.9")."""
        return arch_limits.runs_on(self.archs, cc)

    @property
    def source_path(self) -> str | None:
        """Path relative to the repository root, as the session header records it (a
        user's kernel: its file's name)."""
        if self.user_file is not None:
            return self.user_file
        return None if self.source is None else f"kernels/cuda/{self.source}"

    def name_expression(self, vec: bool, params: dict[str, int] | None = None) -> str:
        values = (params or self.params).values()
        args = [str(v) for v in values] + (["true" if vec else "false"] if self.vec_flag
                                           else [])
        return f"{self.kernel}<{', '.join(args)}>" if args else str(self.kernel)

    def with_params(self, changes: dict[str, int]) -> Level:
        """This level with some template parameters changed (its geometry follows them);
        a parameter's old name (RENAMED_PARAMS) is taken for its new one."""
        changes = current_params(changes)
        unknown = set(changes) - set(self.params)
        if unknown:
            raise ValueError(f"{self.id} has no parameter(s) {', '.join(sorted(unknown))}; "
                             f"it has {', '.join(self.params)}")
        p = {**self.params, **changes}
        problem = param_problem(changes, p)
        if problem is None and self.geometry is not None:
            bx, by = self.geometry(p).block
            if bx * by > MAX_THREADS_PER_BLOCK:
                problem = (f"a block of {bx * by} threads; CUDA allows at most "
                           f"{MAX_THREADS_PER_BLOCK} threads per block")
        if problem is not None:
            raise ValueError(f"{self.id}: {problem}")
        return dataclasses.replace(self, params=p)

    def for_shape(self, M: int, N: int, K: int, sm_count: int) -> Level:
        """This level as a run of M x N x K on ``sm_count`` SMs launches it: with the
        parameter changes its ``shape_params`` picks there (itself where none)."""
        if self.shape_params is None:
            return self
        changes = {k: v for k, v in self.shape_params(M, N, K, sm_count).items()
                   if self.params.get(k) != v}
        return self.with_params(changes) if changes else self

    def launch_geometry(self, params: dict[str, int] | None = None) -> Geometry:
        """Block shape, block tile, K tile and block order for these template parameters
        (the level's own by default)."""
        if self.geometry is None:
            return LIBRARY_CALL
        return self.geometry(params or self.params)

    @property
    def threads(self) -> tuple[int, int]:
        """Block shape (x, y)."""
        return self.launch_geometry().block

    @property
    def tile(self) -> tuple[int, int]:
        """(rows of C, cols of C) one block computes."""
        return self.launch_geometry().tile

    def dyn_smem_bytes(self, params: dict[str, int] | None = None) -> int:
        return 0 if self.dyn_smem is None else self.dyn_smem(params or self.params)

    def use_vector_path(self, M: int, N: int, K: int) -> bool:
        return self.vector > 1 and K % self.vector == 0 and N % self.vector == 0

    def grid(self, M: int, N: int, sm_count: int | None = None) -> tuple[int, int, int]:
        if self.fixed_grid is not None:
            return self.fixed_grid
        rows, cols = self.tile
        gm, gn = -(-M // rows), -(-N // cols)
        if self.persistent and self.grid_rule is not None:
            return (self.grid_rule(gm * gn, sm_count or gm * gn, self.params), 1, 1)
        if self.persistent and self.stream_k:
            # stream-K shares K steps among every SM's block, even with fewer tiles
            return (sm_count or gm * gn, 1, 1)
        if self.persistent or self.sm_grid:
            return (min(gm * gn, sm_count or gm * gn), 1, 1)
        return (gn, gm, 1) if self.grid_x == "N" else (gm, gn, 1)

    def shape_refusal(self, M: int, N: int, K: int) -> str | None:
        """Why this level cannot run M x N x K, known before anything is allocated (its K
        multiple, its shape rule, a build for another shape, the grid's y limit), or
        None."""
        if K % self.k_multiple:
            reason = f" ({self.k_reason})" if self.k_reason else ""
            return f"{self.id} needs K to be a multiple of {self.k_multiple}{reason}; K={K}"
        why = self.shape_rule(M, N, K) if self.shape_rule is not None else None
        if not why and self.params_rule is not None:
            why = self.params_rule(M, N, K, self.params)
        if why:
            return f"{self.id}: {why}"
        _, gy, _ = self.grid(M, N) if self.kind is Kind.LEVEL else (1, 1, 1)
        if gy > 65535:
            return f"{self.id}: grid y of {gy} blocks exceeds 65535 for M={M}, N={N}"
        return None

    def catalog_entry(self, order: int) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "adds": self.adds,
                "precision": str(self.precision), "params": dict(self.params),
                "block": list(self.threads), "tile": list(self.tile),
                "follows": self.follows, "notes": self.notes, "kind": str(self.kind),
                "order": order, "source": self.source_path, "arch": self.arch,
                "b_layout": self.b_layout, "persistent": self.persistent,
                "k_multiple": self.k_multiple, "archs": list(self.archs),
                "output_format": str(self.output_format),
                "arch_need": self.arch_need,
                **({"user": self.user_file, "toolchain": str(self.toolchain)}
                   if self.user_file is not None else {})}


# Template parameters that are switches (0 or 1). Every other one is a count or a size.
SWITCHES = frozenset({"PF", "KPIPE", "EPI", "SCL", "SKIP", "SCT", "RING", "EPC"})
# stream-K mode: 0 (off), 1 (the last full wave and the remainder), 2 (the remainder only)
MODES = {"SK": 2}
# counts where 0 means "at run time": fp8_deep's KS (K blocks compiled in, or K read)
RUN_TIME_COUNTS = frozenset({"KS"})
MAY_BE_ZERO = SWITCHES | set(MODES) | RUN_TIME_COUNTS

# Template parameters renamed since recordings were made: old name -> new name. GM, the
# group of block rows walked together (kernels/cuda/common.cuh's gs_group_coords), was
# SWZ in the SIMT and mma.sync levels (issue 29), which it never swizzled.
RENAMED_PARAMS = {"SWZ": "GM"}
# what an old name's value means under the new one: SWZ = 0 walked the grid row by row
# like SWZ = 1; GM counts rows, at least 1
_OLD_VALUE = {"SWZ": lambda v: 1 if v == 0 else v}


def current_params(params: dict[str, int]) -> dict[str, int]:
    """``params`` with each old parameter name (RENAMED_PARAMS) under its new name, in the
    same order; the same dict where none is old. A value given under both names keeps the
    new name's."""
    if not any(k in RENAMED_PARAMS for k in params):
        return params
    out: dict[str, int] = {}
    for k, v in params.items():
        new = RENAMED_PARAMS.get(k)
        if new is None:
            out[k] = v
        elif new not in params:
            fix = _OLD_VALUE.get(k)
            out[new] = fix(v) if fix is not None and type(v) is int else v
    return out
MAX_PARAM = 4096
# no CUDA device runs larger blocks; the device's own limits are checked before launch
MAX_THREADS_PER_BLOCK = 1024


def param_problem(changes: dict[str, int], p: dict[str, int]) -> str | None:
    """Why template parameters ``p`` (``changes`` merged over a level's own) cannot make
    a kernel, or None. Checks what the launch geometry divides by, so that neither the
    geometry nor the compiler meets a zero; :meth:`Level.with_params` then checks the
    block the geometry gives, and the kernels' static_asserts hold the rest."""
    for name, v in changes.items():
        if isinstance(v, bool) or not isinstance(v, int):
            return f"{name} must be a whole number, not {v!r}"
        if name in SWITCHES and v not in (0, 1):
            return f"{name} is a switch: 0 or 1, not {v}"
        if name in MODES and not 0 <= v <= MODES[name]:
            return f"{name} is a mode: 0 to {MODES[name]}, not {v}"
        lo = 0 if name in MAY_BE_ZERO else 1
        if not lo <= v <= MAX_PARAM:
            return f"{name}={v} is out of range ({lo} to {MAX_PARAM})"
    # (tile, what divides it): per-thread tiles, warp tiles, a warp tile's sub-tiles
    pairs = [("BM", "WM"), ("BN", "WN"), ("WM", "WMITER"), ("WN", "WNITER")]
    if "WM" not in p:
        pairs += [("BM", "TM"), ("BN", "TN")]
    for big, small in pairs:
        if big in p and small in p and p[big] % p[small]:
            return f"{big}={p[big]} is not a multiple of {small}={p[small]}"
    if "WMITER" in p:
        for sub, t in ((p["WM"] // p["WMITER"], "TM"), (p["WN"] // p["WNITER"], "TN")):
            if sub % p[t]:
                return f"a warp sub-tile side of {sub} is not a multiple of {t}={p[t]}"
    return None

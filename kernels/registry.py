"""The level registry: every rung of the ladder, one `.cu` file and one entry each.

An entry says what the level is (id, title, what it adds over the one before, precision),
how it is built (source file, kernel template, template parameters) and launched (a
geometry callable for block, tile and grid, dynamic shared memory), what it takes and
gives (B layout, FP8 scaling, C's format), which shapes it refuses, which reference it is
compared with, which seed step or public worklog it follows, and what measurement said
about it (``notes``). cuBLAS references are entries of kind ``reference`` with no source
and the library they call. Code elsewhere asks an entry; it does not test ids or
parameter names.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any


class Precision(StrEnum):
    FP32 = "fp32"
    TF32 = "tf32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"


class Kind(StrEnum):
    LEVEL = "level"
    REFERENCE = "reference"


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


# input storage type of each precision class (the ``dtype`` field of a result)
DTYPE_OF = {Precision.FP32: "fp32", Precision.TF32: "fp32", Precision.FP16: "fp16",
            Precision.BF16: "bf16", Precision.FP8: "fp8e4m3"}

# verification tolerance on ||C - C_ref|| / ||C_ref|| (reference: float64 of the same
# rounded inputs). FP32 accumulation over K=8192 stays near 1e-6; TF32 rounds inputs to
# 10 mantissa bits (about 3e-4); FP16/BF16 references write a 16-bit C.
TOLERANCE = {Precision.FP32: 1e-4, Precision.TF32: 5e-3, Precision.FP16: 2e-3,
             Precision.BF16: 1e-2, Precision.FP8: 2e-2}


@dataclass(frozen=True, slots=True)
class Geometry:
    """How a level's blocks cut the GEMM, derived from its template parameters."""

    block: tuple[int, int]  # threads per block (x, y)
    tile: tuple[int, int]  # (rows of C, cols of C) one block computes
    k_tile: int = 1  # K one block stages per step (BK); 1 where nothing is staged
    group_rows: int = 1  # block rows walked together, column by column (SWZ, GM)
    cluster: int = 1  # CTAs per thread block cluster (CL), adjacent tile rows


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
    """One warp per WM x WN tile of a BM x BN block tile; SWZ block rows walked together
    where the kernel groups its blocks (gs_block_coords)."""
    threads = (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32
    return Geometry((threads, 1), (p["BM"], p["BN"]), p["BK"], p.get("SWZ", 1))


def warp_specialized(p: dict[str, int]) -> Geometry:
    """A producer warpgroup and CONSUMERS consumer warpgroups per BM x BN tile; GM tile
    rows walked together (gs_tile_coords)."""
    return Geometry(((p["CONSUMERS"] + 1) * 128, 1), (p["BM"], p["BN"]), p["BK"], p["GM"],
                    p.get("CL", 1))


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
    notes: str = ""

    @property
    def source_path(self) -> str | None:
        """Path relative to the repository root, as the session header records it."""
        return None if self.source is None else f"kernels/cuda/{self.source}"

    def name_expression(self, vec: bool, params: dict[str, int] | None = None) -> str:
        values = (params or self.params).values()
        args = [str(v) for v in values] + ["true" if vec else "false"]
        return f"{self.kernel}<{', '.join(args)}>"

    def with_params(self, changes: dict[str, int]) -> Level:
        """This level with some template parameters changed (its geometry follows them)."""
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
        rows, cols = self.tile
        gm, gn = -(-M // rows), -(-N // cols)
        if self.persistent:
            cl = self.launch_geometry().cluster  # whole clusters of CL tile rows
            units = -(-gm // cl) * gn
            return (min(units, (sm_count or units * cl) // cl) * cl, 1, 1)
        return (gn, gm, 1) if self.grid_x == "N" else (gm, gn, 1)

    def shape_refusal(self, M: int, N: int, K: int) -> str | None:
        """Why this level cannot run M x N x K, known before anything is allocated (its K
        multiple, its shape rule, the grid's y limit), or None."""
        if K % self.k_multiple:
            reason = f" ({self.k_reason})" if self.k_reason else ""
            return f"{self.id} needs K to be a multiple of {self.k_multiple}{reason}; K={K}"
        why = self.shape_rule(M, N, K) if self.shape_rule is not None else None
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
                "k_multiple": self.k_multiple}


# Template parameters that are switches (0 or 1); SWZ, the block-order group, may be 0
# too (0 and 1 both walk the grid row by row). Every other one is a count or a size.
SWITCHES = frozenset({"PF", "KPIPE", "EPI"})
MAY_BE_ZERO = SWITCHES | {"SWZ"}
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


SIBOEHM = "siboehm.com/articles/22/CUDA-MMM (SGEMM_CUDA)"

LEVELS: tuple[Level, ...] = (
    Level(
        id="naive", title="Naive (uncoalesced)", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="One thread per C element; threadIdx.x walks rows of C, so the 32 lanes of a "
             "warp read A and write C a whole row apart (uncoalesced).",
        follows=f"seed L1; {SIBOEHM} kernel 1", source="naive.cu", kernel="sgemm_naive",
        params={"BLOCK": 32}, geometry=one_thread_per_element, grid_x="M"),
    Level(
        id="coalesced", title="Coalesced thread mapping", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="Same work per thread, but threadIdx.x walks columns: a warp reads 32 "
             "consecutive floats of B and writes 32 consecutive floats of C (coalesced).",
        follows=f"{SIBOEHM} kernel 2", source="coalesced.cu", kernel="sgemm_coalesced",
        params={"BLOCK": 32}, geometry=one_thread_per_element),
    Level(
        id="smem_tiled", title="Shared-memory tiling", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="A 32x32 block tile of C; each K step stages a 32x32 tile of A and of B in shared "
             "memory, so each global element is read once per block instead of once per "
             "thread.",
        follows=f"seed L2; {SIBOEHM} kernel 3", source="smem_tiled.cu",
        kernel="sgemm_smem_tiled", params={"TILE": 32}, geometry=square_tiles),
    Level(
        id="smem_padded", title="Padded shared memory (BK+1)", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="Rows of the shared tiles padded by one word (32x33), the classic bank-conflict "
             "fix.",
        follows="seed L3", source="smem_padded.cu", kernel="sgemm_smem_padded",
        params={"TILE": 32}, geometry=square_tiles,
        notes="Slower than smem_tiled on the H200 (8.7 -> 6.8 TFLOPS at 4096^3), and not "
              "for want of conflicts: the access had none to remove. A warp reads one row of "
              "As (a broadcast) and 32 consecutive words of Bs. Nsight Compute at 1024^3 "
              "(benchmarks/ncu_levels.sh) counted shared-load bank conflicts 36,477 -> 33,260 "
              "and store conflicts 328,952 -> 269,093, the same order in both and not from "
              "the access pattern (the counter also counts arbitration with other warps' "
              "accesses); but shared-load wavefronts rose from 50.4 M to 67.1 M (+33%). A "
              "33-word row is not 16-byte aligned, so the four As words a thread reads per "
              "step no longer come in one LDS.128: the SASS has 64 LDS.32 per tile instead "
              "of 32 LDS.32 + 8 LDS.128."),
    Level(
        id="double_buffer", title="Double buffering", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="Two shared-memory stages: the next K tile is fetched into registers while the "
             "current one is computed, then stored into the other stage; one barrier per "
             "K step instead of two.",
        follows="seed L4", source="double_buffer.cu", kernel="sgemm_double_buffer",
        params={"TILE": 32}, geometry=square_tiles,
        notes="Builds on the unpadded tile of smem_tiled, since padding measured slower "
              "(see smem_padded). 9.25 TFLOPS against smem_tiled's 8.74 at 4096^3: one "
              "thread per output leaves little math to hide the loads behind."),
    Level(
        id="register_2d", title="2D register blocking", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="A 128x128 block tile with BK=8; each of 256 threads computes an 8x8 tile of C "
             "in registers from 8 A and 8 B values per k (64 FMAs per 16 shared loads).",
        follows=f"seed L5; {SIBOEHM} kernel 5", source="register_2d.cu",
        kernel="sgemm_register_2d", params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
        geometry=thread_tiles),
    Level(
        id="vectorized", title="float4 loads, A tile transposed", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="Global loads of A and B as float4 (16 bytes per lane); the A tile is stored "
             "transposed (BK x BM) so that a thread's 8 A values are contiguous and read "
             "with two 128-bit shared loads, like its 8 B values.",
        follows=f"{SIBOEHM} kernel 6", source="vectorized.cu", kernel="sgemm_vectorized",
        params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}, geometry=thread_tiles,
        vector=4),
    Level(
        id="warp_tiling", title="Warp tiling", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="A 128x256 block tile of 8 warps; each warp owns a 64x64 warp tile walked in 4x2 "
             "sub-tiles of 16x32, and a lane's 16x8 outputs are eight 4x4 pieces, so every "
             "shared read is an LDS.128 that a quarter-warp takes from consecutive or "
             "identical addresses. Two shared stages with register prefetch overlap loads "
             "and math; the transposed A tile is padded by 4 floats so its stores do not "
             "conflict.",
        follows=f"{SIBOEHM} kernel 10; Zhou/Lai's 128x128x8 SGEMM layout",
        source="warp_tiling.cu", kernel="sgemm_warp_tiling",
        params={"BM": 128, "BN": 256, "BK": 8, "WM": 64, "WN": 64, "WMITER": 4, "WNITER": 2,
                "TM": 4, "TN": 4, "MINB": 1, "SWZ": 1, "PF": 0},
        geometry=warp_tiles, vector=4,
        notes="Tuned on the H200 at 4096^3 (benchmarks/tune.py): 128x128 tiles with 8x8 "
              "per thread gave 38.9 TFLOPS (41.0 with two blocks per SM); 128x256 with 16x8 "
              "per thread 44.2. BK=16 does not fit: two stages need 49.7 KB of static "
              "shared memory."),
    Level(
        id="cp_async", title="cp.async multi-stage pipeline", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="Global-to-shared copies by cp.async (no register staging, nothing waits on a "
             "load) into a ring of 3 shared stages, so two K tiles are in flight while one "
             "is computed; freed from the prefetch registers, the tile gets BK=16 (half the "
             "barriers per FLOP). A is copied element by element into its transposed, "
             "padded layout; block rows are walked in groups of 4 for L2 reuse.",
        follows="CUTLASS multistage mainloop; NVIDIA Ampere cp.async guide",
        source="cp_async.cu", kernel="sgemm_cp_async",
        params={"BM": 128, "BN": 256, "BK": 16, "WM": 64, "WN": 64, "WMITER": 4, "WNITER": 2,
                "TM": 4, "TN": 4, "STAGES": 3, "MINB": 1, "SWZ": 1},
        geometry=warp_tiles, vector=4,
        dyn_smem=lambda p: p["STAGES"] * p["BK"] * (p["BM"] + 4 + p["BN"]) * 4,
        notes="Tuned on the H200 at 4096^3 (benchmarks/tune.py, docs/perf-notes.md): "
              "46.6 TFLOPS, 90.9% of cuBLAS FP32 (51.2). What limits it (Nsight Compute): "
              "240-255 registers per thread allow one block of 8 warps per SM (12.5% "
              "occupancy), 2 warps per scheduler issue on 83% of cycles, and 11% of the "
              "main loop's instructions are not FMAs (shared loads, copy addressing, "
              "barrier). Variants: 2 or 4 stages 45.4, BK=8 with 6 stages 44.7, BK=32 45.6, "
              "128x128 tiles with 2 blocks per SM 41.3."),
    Level(
        id="wmma", title="Tensor Cores (WMMA, FP16)", precision=Precision.FP16,
        reference="cublas_fp16",
        adds="FP16 inputs, FP32 accumulation on Tensor Cores through the WMMA API; 16x16x16 "
             "fragments, a 128x128 block tile of 8 warps (64x32 each), K tiles of 64 "
             "staged by cp.async in a 3-stage ring with rows padded by 8 halves.",
        follows="seed L6; CUDA Programming Guide, warp matrix functions",
        source="wmma.cu", kernel="hgemm_wmma",
        params={"BM": 128, "BN": 128, "BK": 64, "WM": 64, "WN": 32, "STAGES": 3},
        geometry=warp_tiles, vector=8,
        dyn_smem=lambda p: p["STAGES"] * (p["BM"] * (p["BK"] + 8) + p["BK"] * (p["BN"] + 8)) * 2,
        notes="Tuned on the H200 at 4096^3 (benchmarks/tune.py): BK=32 gave 295 TFLOPS "
              "(278 with 2 stages), BK=64 328; 4 stages at BK=64 fell to 270 (143 KB of "
              "shared memory); 128x256 tiles 280-326."),
    Level(
        id="mma_sync", title="mma.sync + ldmatrix, swizzled", precision=Precision.FP16,
        reference="cublas_fp16",
        adds="The warp-level Tensor Core instructions without the WMMA API: ldmatrix.x4 "
             "loads fragments (.trans for the k-major B tile), mma.sync.m16n8k16 multiplies; "
             "a 128x256 block tile of 8 warps (64x64 each), K tiles of 64 staged by "
             "cp.async in a 4-stage ring, rows swizzled (chunk ^ row % 8) instead of padded; "
             "the next step's fragments load while the current one multiplies.",
        follows="PTX ISA: ldmatrix, mma.m16n8k16; CUTLASS sm80 multistage; CuTe Swizzle<3,4,3>",
        source="mma_sync.cu", kernel="hgemm_mma_sync",
        params={"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64, "STAGES": 4, "SWZ": 1},
        geometry=warp_tiles, vector=8,
        dyn_smem=lambda p: p["STAGES"] * (p["BM"] * p["BK"] + p["BK"] * p["BN"]) * 2,
        notes="Measured on the H200 at 4096^3 (benchmarks/tune.py): 356 TFLOPS with 3 "
              "stages and no fragment double-buffering (377 with grouped block order); "
              "with double-buffered fragments 377 (3 stages), 380 (4 stages), 376 (2); "
              "128x128 tiles 285-307. The loop sits at 255 registers with 4 spilled words "
              "reloaded per K tile, which is what the next step should remove."),
    Level(
        id="wgmma_tma", title="wgmma + TMA, warp-specialized (BF16)", precision=Precision.BF16,
        reference="cublas_bf16",
        adds="Hopper's own path: a persistent block per SM; a producer warpgroup (registers "
             "given away by setmaxnreg) issues TMA copies (cp.async.bulk.tensor, completing "
             "on mbarriers) of 128x64 A and 256x64 B tiles in the 128-byte swizzle into a "
             "4-stage ring; two consumer warpgroups, 64 rows each, multiply with "
             "wgmma.m64n256k16 straight from shared memory into 128 FP32 registers per "
             "thread and free each stage for the producer when their wgmmas completed.",
        follows="PTX ISA 8.x: wgmma, cp.async.bulk.tensor, mbarrier, setmaxnreg; "
                "CUTLASS sm90 warp-specialized mainloop; Pranjal Shankhdhar's fast.cu worklog",
        source="wgmma_tma.cu", kernel="bgemm_wgmma_tma",
        params={"BM": 128, "BN": 256, "BK": 64, "STAGES": 4, "CONSUMERS": 2, "GM": 16,
                "KPIPE": 1, "EPI": 1},
        geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
        k_multiple=8, k_reason="a TMA row pitch must be a multiple of 16 bytes",
        edge_variant=False, output_format=OutputFormat.BF16,
        dyn_smem=lambda p: (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 2
                            + p["EPI"] * p["CONSUMERS"] * 16384 + 1024),
        notes="Tensor maps: built on the host by the driver's cuTensorMapEncodeTiled, called "
              "through ctypes on libcuda (kernels/hopper.py; no cuda-python needed), and passed "
              "by value as __grid_constant__ parameters through cuLaunchKernel. B is taken "
              "as Bt (N x K); C is written as BF16 like cuBLAS's BF16 GEMM. Measured on the "
              "H200 (benchmarks/hopper_bench.py, 4096^3 / 8192^3): direct stores from the "
              "accumulators 701 / 769 TFLOPS (90% / 95% of cuBLAS BF16); C through shared "
              "memory and TMA stores 765 / 786 (99.5% / 100%). Keeping one wgmma group in "
              "flight (KPIPE) and the tile-group height GM changed less than 1%."),
    Level(
        id="fp8_block_scaled", title="FP8 E4M3, block-scaled (DeepGEMM-style)",
        precision=Precision.FP8,
        reference="cublaslt_fp8", scaling=Scaling.BLOCKS,
        adds="E4M3 inputs quantized by the app with one FP32 scale per 1x128 block of A and "
             "per 128x128 block of B; the wgmma_tma pipeline (128x256 tiles, 4 stages of "
             "128-deep K blocks) with wgmma.m64n128k32 (FP8): each K block is accumulated "
             "fresh in temporary registers, one 128-column half at a time, and promoted into "
             "FP32 accumulators times its two scales.",
        follows="DeepGEMM (deepseek-ai) fine-grained scaling; PTX ISA wgmma .e4m3",
        source="fp8_block_scaled.cu", kernel="fp8gemm_block_scaled",
        params={"BM": 128, "BN": 256, "BK": 128, "STAGES": 4, "CONSUMERS": 2, "GM": 16,
                "KPIPE": 0, "EPI": 1},
        geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
        k_multiple=128, k_reason="one FP32 scale per 128 of K", edge_variant=False,
        output_format=OutputFormat.BF16,
        dyn_smem=lambda p: (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"]
                            + p["EPI"] * p["CONSUMERS"] * 16384 + 1024),
        notes="Tensor maps as in wgmma_tma. Accuracy is reported as the relative error and "
              "as DeepGEMM's 1 - 2 sum(xy) / sum(x^2 + y^2) against a float64 product of the "
              "dequantized inputs. Measured on the H200 (benchmarks/hopper_bench.py): waiting "
              "for each K block before promoting, 128x128 tiles, 820 / 883 TFLOPS at 4096^3 / "
              "8192^3; promoting block k-1 from a second set of temporaries while block k "
              "runs (KPIPE=1) 948 / 1046; with the TMA-store epilogue 1045 / 1076; 128x256 "
              "tiles in two halves (KPIPE=0, 4 stages) 1064 / 1095, the default."),
    # -- issue 17: the Hopper levels with 2-CTA clusters (kernels/cuda/*_cluster.cu) ---
    Level(
        id="wgmma_cluster", title="wgmma + TMA multicast, 2-CTA clusters (BF16)",
        precision=Precision.BF16, reference="cublas_bf16",
        adds="Thread block clusters: two CTAs on neighbouring SMs compute vertically "
             "adjacent 128x256 tiles, each loads its own A tile and half of the shared B "
             "tile, which TMA multicasts into both CTAs' shared memory (B's L2 traffic "
             "halved); a stage is refilled when both CTAs' consumers freed it (mbarrier "
             "arrivals across the cluster).",
        follows="PTX ISA 8.x: cluster, mapa, cp.async.bulk.tensor .multicast::cluster; "
                "CUTLASS sm90 TMA multicast; Pranjal Shankhdhar's fast.cu worklog",
        source="wgmma_cluster.cu", kernel="bgemm_wgmma_cluster",
        params={"BM": 128, "BN": 256, "BK": 64, "STAGES": 4, "CONSUMERS": 2, "GM": 16,
                "KPIPE": 1, "EPI": 1, "CL": 2, "PRODREGS": 40, "CONSREGS": 232},
        geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
        k_multiple=8, k_reason="a TMA row pitch must be a multiple of 16 bytes",
        edge_variant=False, output_format=OutputFormat.BF16,
        dyn_smem=lambda p: (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 2
                            + p["EPI"] * p["CONSUMERS"] * 16384 + 1024),
        notes="wgmma_tma's pipeline, verification and reference; the grid is whole clusters "
              "(at most SMs / 2). Not yet measured on the H200 (issue 17: "
              "benchmarks/tune17_hopper.py times CL = 1 and 2 side by side)."),
    Level(
        id="fp8_cluster", title="FP8 E4M3 block-scaled, 2-CTA clusters",
        precision=Precision.FP8, reference="cublaslt_fp8", scaling=Scaling.BLOCKS,
        adds="fp8_block_scaled with wgmma_cluster's pairing: two CTAs share the B tile "
             "through TMA multicast; the promotion loop is fp8_block_scaled's, with the "
             "scale loads for the next K block issued before the wait on the current one.",
        follows="DeepGEMM (deepseek-ai): TMA multicast, fine-grained scaling; PTX ISA wgmma .e4m3",
        source="fp8_cluster.cu", kernel="fp8gemm_cluster",
        params={"BM": 128, "BN": 256, "BK": 128, "STAGES": 4, "CONSUMERS": 2, "GM": 16,
                "KPIPE": 0, "EPI": 1, "CL": 2, "PRODREGS": 40, "CONSREGS": 232},
        geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
        k_multiple=128, k_reason="one FP32 scale per 128 of K", edge_variant=False,
        output_format=OutputFormat.BF16,
        dyn_smem=lambda p: (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"]
                            + p["EPI"] * p["CONSUMERS"] * 16384 + 1024),
        notes="fp8_block_scaled's verification (relative error and DeepGEMM's difference) "
              "and reference. Not yet measured on the H200 (issue 17: "
              "benchmarks/tune17_hopper.py)."),
    # -- references (cuBLAS through CuPy) --------------------------------------------
    Level(id="cublas_fp32", title="cuBLAS FP32 (no TF32)", precision=Precision.FP32,
          adds="Reference: cupy.matmul on float32 with TF32 off.", follows="cuBLAS",
          kind=Kind.REFERENCE, library=Library.CUBLAS),
    Level(id="cublas_tf32", title="cuBLAS TF32", precision=Precision.TF32,
          adds="Reference: cupy.matmul on float32 with the TF32 compute type.",
          follows="cuBLAS", kind=Kind.REFERENCE, library=Library.CUBLAS),
    Level(id="cublas_fp16", title="cuBLAS FP16", precision=Precision.FP16,
          adds="Reference: cupy.matmul on float16 (Tensor Cores, FP16 output).",
          follows="cuBLAS", kind=Kind.REFERENCE, library=Library.CUBLAS,
          output_format=OutputFormat.FP16),
    Level(id="cublas_bf16", title="cuBLAS BF16", precision=Precision.BF16,
          adds="Reference: cupy.matmul on ml_dtypes bfloat16 (Tensor Cores, BF16 output), "
               "B given as Bt like the BF16 level (a transposed view, no copy).",
          follows="cuBLAS", kind=Kind.REFERENCE, library=Library.CUBLAS, b_layout="nk",
          output_format=OutputFormat.BF16),
    # before cublaslt_fp8, which stays REFERENCE_FOR's FP8 entry (the last one wins)
    Level(id="cublaslt_fp8_blocks", title="cuBLASLt FP8 (1x128 / 128x128 block scales)",
          precision=Precision.FP8,
          adds="Reference: torch._scaled_mm on E4M3 inputs with DeepGEMM's block scales (one "
               "per 1x128 block of A, one per 128x128 block of B, the same arrays the "
               "block-scaled levels read), BF16 output (cuBLASLt's block-scaled FP8 GEMM); "
               "needs torch, skipped with a message otherwise.",
          follows="cuBLASLt 1D/2D block scaling for FP8 through torch", kind=Kind.REFERENCE,
          library=Library.CUBLASLT, b_layout="nk", output_format=OutputFormat.BF16,
          scaling=Scaling.BLOCKS, k_multiple=128, k_reason="one FP32 scale per 128 of K",
          shape_rule=lambda M, N, K: (
              f"torch._scaled_mm needs M, N and K to be multiples of 16; got {M}x{N}x{K}"
              if M % 16 or N % 16 or K % 16 else None),
          notes="torch 2.11 on the H200 refused scale_a given as a contiguous (M, K/128) "
                "array; ScaledBlas.cpp wants it outer-dim-major (strides (1, M)). Not yet "
                "measured (issue 17)."),
    Level(id="cublaslt_fp8", title="cuBLASLt FP8 (per-tensor scales)", precision=Precision.FP8,
          adds="Reference: torch._scaled_mm on E4M3 inputs with one scale per tensor, BF16 "
               "output (cuBLASLt); needs torch, skipped with a message otherwise.",
          follows="cuBLASLt through torch", kind=Kind.REFERENCE, library=Library.CUBLASLT,
          b_layout="nk", output_format=OutputFormat.BF16, scaling=Scaling.PER_TENSOR,
          shape_rule=lambda M, N, K: (
              f"torch._scaled_mm needs M, N and K to be multiples of 16; got {M}x{N}x{K}"
              if M % 16 or N % 16 or K % 16 else None)),
)

BY_ID: dict[str, Level] = {lv.id: lv for lv in LEVELS}
# the reference of each precision class, for results recorded before levels named theirs
REFERENCE_FOR: dict[Precision, str] = {lv.precision: lv.id for lv in LEVELS
                                       if lv.kind is Kind.REFERENCE}


def ladder() -> list[Level]:
    return [lv for lv in LEVELS if lv.kind is Kind.LEVEL]


def references() -> list[Level]:
    return [lv for lv in LEVELS if lv.kind is Kind.REFERENCE]


def get(level_id: str) -> Level:
    try:
        return BY_ID[level_id]
    except KeyError:
        known = ", ".join(BY_ID)
        raise KeyError(f"unknown level {level_id!r}; known levels: {known}") from None


def cuda_dir() -> Path:
    return Path(str(resources.files("gemmscope.kernels") / "cuda"))


def source_file(level: Level) -> Path:
    if level.source is None:
        raise ValueError(f"{level.id} has no CUDA source")
    return Path(level.source_dir or cuda_dir()) / level.source


def source_hashes() -> dict[str, dict[str, str]]:
    """The session header's ``levels`` map: each level's .cu and its sha256."""
    out: dict[str, dict[str, str]] = {}
    for lv in ladder():
        assert lv.source is not None
        out[lv.id] = {"source": lv.source_path or "", "sha256": _sha256(lv.source)}
    for header in sorted(cuda_dir().glob("*.cuh")):  # common.cuh, hopper.cuh
        out[header.stem] = {"source": f"kernels/cuda/{header.name}", "sha256": _sha256(header.name)}
    return out


def _sha256(name: str) -> str:
    return hashlib.sha256((cuda_dir() / name).read_bytes()).hexdigest()


def catalog() -> list[dict[str, Any]]:
    return [lv.catalog_entry(i) for i, lv in enumerate(LEVELS)]

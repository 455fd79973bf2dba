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
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from .fp8_deep_level import FP8_DEEP
from .hopper_levels import FP8_BLOCK_SCALED, STREAM_K, TF32_WGMMA, WGMMA_TMA
from .level import (  # the entry type and its parts, re-exported: one import for users
    DEEPGEMM_DIFF_MAX,
    DTYPE_OF,
    LIBRARY_CALL,
    MAX_PARAM,
    MAX_THREADS_PER_BLOCK,
    MAY_BE_ZERO,
    SWITCHES,
    TOLERANCE,
    Geometry,
    Kind,
    Level,
    Library,
    OutputFormat,
    Precision,
    Scaling,
    one_thread_per_element,
    param_problem,
    square_tiles,
    thread_tiles,
    warp_specialized,
    warp_tiles,
    warp_tiles_grouped,
    warp_tiles_producer,
)

__all__ = [  # noqa: RUF022 (the entry's parts first, then the table and its lookups)
    "DEEPGEMM_DIFF_MAX",
    "DTYPE_OF",
    "Geometry",
    "Kind",
    "LIBRARY_CALL",
    "Level",
    "Library",
    "MAX_PARAM",
    "MAX_THREADS_PER_BLOCK",
    "MAY_BE_ZERO",
    "OutputFormat",
    "Precision",
    "SWITCHES",
    "Scaling",
    "TOLERANCE",
    "one_thread_per_element",
    "param_problem",
    "square_tiles",
    "thread_tiles",
    "warp_specialized",
    "warp_tiles",
    "warp_tiles_grouped",
    "warp_tiles_producer",
    "LEVELS",
    "BY_ID",
    "REFERENCE_FOR",
    "SIBOEHM",
    "MMA_TMA_STAGING_BYTES",
    "mma_tma_smem",
    "wmma_block_form",
    "ladder",
    "references",
    "get",
    "cuda_dir",
    "source_file",
    "source_hashes",
    "catalog",
]

SIBOEHM = "siboehm.com/articles/22/CUDA-MMM (SGEMM_CUDA)"

# a math warp's C staging in mma_tma (kernels/cuda/mma_tma.cu): its 64 x 64 tile in FP16
MMA_TMA_STAGING_BYTES = 8192


def mma_tma_smem(p: dict[str, int], staging_bytes: int = MMA_TMA_STAGING_BYTES) -> int:
    """mma_tma's shared memory: STAGES of A and Bt tiles (2 bytes an element),
    ``staging_bytes`` of C staging per math warp after them, 1 KB to align the stages to the
    swizzle's 1024 bytes. (Its attempts stage C otherwise, or not: benchmarks/attempts.)"""
    warps = (p["BM"] // p["WM"]) * (p["BN"] // p["WN"])
    return p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 2 + warps * staging_bytes + 1024




def wmma_block_form(M: int, N: int, K: int, sm_count: int) -> dict[str, int]:
    """wmma's block per shape: 128x256 of eight 64x64 warp tiles (one block an SM) where
    that grid gives at least half the SMs a block, else 128x128 of four (BN 128: two
    blocks an SM, twice the blocks). Measured on an H100 (2026-12-06, % of cuBLAS FP16,
    paired): 128x256 against 128x128 at 512^3 (8 blocks) 35.5 / 51.6, 1024^3 (32) 30.9 /
    45.1, 2048^3 (128 of 132 SMs) 50.2 / 45.5, 3000 x 5000 x 4096 48.9 / 46.1."""
    blocks = -(-M // 128) * -(-N // 256)
    return {"BN": 128} if 2 * blocks < sm_count else {}

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
        notes="Slower than smem_tiled on the H200: this access had no bank conflicts to remove (a"
              " warp reads one row of As, a broadcast, and 32 consecutive words of Bs), and a "
              "33-word row is not 16-byte aligned, so the A reads fall from LDS.128 to LDS.32 and"
              " shared-load wavefronts rise by a third."),
    Level(
        id="double_buffer", title="Double buffering", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="Two shared-memory stages: the next K tile is fetched into registers while the "
             "current one is computed, then stored into the other stage; one barrier per "
             "K step instead of two.",
        follows="seed L4", source="double_buffer.cu", kernel="sgemm_double_buffer",
        params={"TILE": 32}, geometry=square_tiles,
        notes="Built on smem_tiled's unpadded tile, since padding measured slower; with one "
              "thread per output there is little math to hide the loads behind, so the second "
              "stage gains about 6%."),
    Level(
        id="register_2d", title="2D register blocking", precision=Precision.FP32,
        reference="cublas_fp32",
        adds="A 128x128 block tile with BK=8; each of 256 threads computes an 8x8 tile of C "
             "in registers from 8 A and 8 B values per k (64 FMAs per 16 shared loads).",
        follows=f"seed L5; {SIBOEHM} kernel 5", source="register_2d.cu",
        kernel="sgemm_register_2d", params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
        geometry=thread_tiles,
        notes="Its launch bounds ask for two blocks per SM (128 registers, not the 152 ptxas "
              "took unasked), so one block's loads and barrier hide behind the other's FMAs: "
              "1.18 of siboehm's kernel 5 at 4096^3, from 0.85 with one block per SM."),
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
                "TM": 4, "TN": 4, "MINB": 1, "GM": 1, "PF": 0},
        geometry=warp_tiles, vector=4,
        notes="128x256 block tiles, 16x8 outputs per thread; limited by static shared memory (two"
              " stages of BK=16 would need 49.7 KB) and by the registers that one block of 8 "
              "warps per SM leaves."),
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
                "TM": 4, "TN": 4, "STAGES": 3, "MINB": 1, "GM": 1},
        geometry=warp_tiles, vector=4,
        dyn_smem=lambda p: p["STAGES"] * p["BK"] * (p["BM"] + 4 + p["BN"]) * 4,
        notes="Issue-bound: 240-255 registers per thread allow one block of 8 warps per SM (two "
              "warps per scheduler), and 11% of the main loop's instructions are not FMAs (shared"
              " loads, copy addressing, the barrier)."),
    Level(
        id="cp_async_interior", title="cp.async, guard-free interior blocks",
        precision=Precision.FP32, reference="cublas_fp32",
        adds="cp_async's pipeline with its main loop compiled twice: blocks whose tile lies "
             "wholly inside C (with K a multiple of BK) copy without any bounds check, one "
             "source pointer per operand stepped by a row stride, immediate offsets and no "
             "fallback-address selects; only the blocks on the edge of C run the guarded "
             "loop. A K step's FMAs run in serpentine order (odd rows right to left), which "
             "lets the compiler reuse more operands from its reuse cache.",
        follows="CUTLASS predicated tile iterators (residue handled apart from the main loop)",
        source="cp_async_interior.cu", kernel="sgemm_cp_async_interior",
        params={"BM": 128, "BN": 256, "BK": 16, "WM": 64, "WN": 64, "WMITER": 4, "WNITER": 2,
                "TM": 4, "TN": 4, "STAGES": 4, "MINB": 1, "GM": 1},
        geometry=warp_tiles, vector=4,
        dyn_smem=lambda p: p["STAGES"] * p["BK"] * (p["BM"] + 4 + p["BN"]) * 4,
        notes="cp_async with the address selects and edge guards gone from interior tiles, a "
              "fourth stage (three K tiles in flight: 90.2 -> 94.0% of cuBLAS FP32 at 4096^3, "
              "92.0 -> 94.8% at 8192^3, paired, 2026-12-02), and a K step's 128 FMAs in "
              "serpentine order, odd rows right to left (255 -> 251 registers; 94.5 -> 95.9% "
              "at 4096^3, 95.1 -> 97.4% at 8192^3, 2026-12-04); still issue-bound at two "
              "warps per scheduler, so each non-FMA instruction left in the loop costs."),
    Level(
        id="wmma", title="Tensor Cores (WMMA, FP16)", precision=Precision.FP16,
        reference="cublas_fp16",
        adds="FP16 inputs, FP32 accumulation on Tensor Cores through the WMMA API; 16x16x16 "
             "fragments, a 128x256 block tile of 8 warps (64x64 each; 128x128 of 4 where "
             "that leaves SMs idle), K tiles of 64 staged by cp.async in a 3-stage ring "
             "with rows padded by 8 halves, all three in flight: the one barrier per K tile "
             "comes once the tile's last fragments are in registers. Blocks inside C copy "
             "without bounds tests.",
        follows="seed L6; CUDA Programming Guide, warp matrix functions",
        source="wmma.cu", kernel="hgemm_wmma",
        params={"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64, "STAGES": 3},
        shape_params=wmma_block_form,
        geometry=warp_tiles, vector=8,
        dyn_smem=lambda p: p["STAGES"] * (p["BM"] * (p["BK"] + 8) + p["BK"] * (p["BN"] + 8)) * 2,
        notes="The WMMA API loads its fragments from plain strided shared tiles, so the swizzled,"
              " TMA-fed feeding that lifts the mma.sync levels cannot be used. From 128x128 "
              "tiles of 64x32 warp tiles (41-44% of cuBLAS FP16) to 64x64 warp tiles at "
              "128x256 with the interior loader and every stage in flight: 47.2-47.3 / "
              "48.8-49.8% at 4096^3 / 8192^3 (two H100s, paired, 2026-12-06); a second "
              "set of fragments to load the next step while one multiplies (mma_sync's "
              "way) spills past 255 registers. On the H200 (bundled recording, 2026-12-06): "
              "48.1 / 50.1%; under Nsight Compute (an H100) its HMMA pipe is busy 58% of the "
              "time against mma_sync's 68%, its warps waiting on the next K tile's copies "
              "and on each step's fragment loads."),
    Level(
        id="mma_sync", title="mma.sync + ldmatrix, swizzled", precision=Precision.FP16,
        reference="cublas_fp16",
        adds="The warp-level Tensor Core instructions without the WMMA API: ldmatrix.x4 "
             "loads fragments (.trans for the k-major B tile), mma.sync.m16n8k16 multiplies; "
             "a 128x256 block tile of 8 warps (64x64 each), K tiles of 64 staged by "
             "cp.async in a 4-stage ring, rows swizzled (chunk ^ row % 8) instead of padded; "
             "the next step's fragments load while the current one multiplies. Blocks inside "
             "C copy without bounds tests (cp_async_interior's loader).",
        follows="PTX ISA: ldmatrix, mma.m16n8k16; CUTLASS sm80 multistage; CuTe Swizzle<3,4,3>",
        source="mma_sync.cu", kernel="hgemm_mma_sync",
        params={"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64, "STAGES": 4, "GM": 1},
        geometry=warp_tiles, vector=8,
        dyn_smem=lambda p: p["STAGES"] * (p["BM"] * p["BK"] + p["BK"] * p["BN"]) * 2,
        notes="The loop sits at 254-255 registers, and each block's prologue and epilogue "
              "leave the tensor cores idle: what mma_persistent removes. Its interior loader "
              "halves the K loop's instructions (about 190-230 a K tile against 408, 128 of "
              "them HMMA) and took the spill out of its trace build."),
    Level(
        id="mma_persistent", title="mma.sync, persistent pipeline", precision=Precision.FP16,
        reference="cublas_fp16",
        adds="mma_sync's math in a persistent kernel: one block per SM walks its output "
             "tiles in grouped order, and their K tiles form one cp.async stream, so the "
             "next tile's first K tiles are in flight (and its first fragments loaded) "
             "while this tile's last steps multiply and its epilogue stores C; the "
             "pipeline never drains between tiles. Swizzled ldmatrix offsets are set up "
             "once per thread, leaving immediates in the loop.",
        follows="CUTLASS persistent tile schedulers; mma_sync",
        source="mma_persistent.cu", kernel="hgemm_mma_persistent",
        params={"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64, "STAGES": 4, "GM": 8},
        geometry=warp_tiles_grouped, vector=8, sm_grid=True,
        dyn_smem=lambda p: p["STAGES"] * (p["BM"] * p["BK"] + p["BK"] * p["BN"]) * 2,
        notes="64x64 warp tiles need most of shared memory's bandwidth (ldmatrix reads beside "
              "cp.async writes) and two warps per scheduler hide little latency; a "
              "warp-specialized producer (mma_tma) takes the copies and barriers off the math "
              "warps."),
    Level(
        id="mma_tma", title="mma.sync fed by TMA, warp-specialized (FP16)",
        precision=Precision.FP16, reference="cublas_fp16_bt",
        adds="mma_persistent's math with wgmma_tma's feeding: a producer warpgroup copies "
             "the A and Bt tiles of each K step by TMA (128-byte swizzle, completing on "
             "mbarriers) into a 3-stage ring; the eight math warps issue no copies and meet "
             "at no block barrier: each frees a stage (an mbarrier arrival) once its last "
             "fragments of it are in registers. C is FP16, as cuBLAS FP16 writes it: each "
             "math warp stages its 64x64 tile with 16 stmatrix.x4 in the 128-byte swizzle "
             "and stores it with two TMA stores it does not wait for.",
        follows="mma_persistent; wgmma_tma; PTX ISA: cp.async.bulk.tensor, mbarrier",
        source="mma_tma.cu", kernel="hgemm_mma_tma",
        params={"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64, "STAGES": 3, "GM": 8},
        geometry=warp_tiles_producer, arch="sm_90a", b_layout="nk", persistent=True,
        k_multiple=8, k_reason="a TMA row pitch must be a multiple of 16 bytes",
        edge_variant=False, output_format=OutputFormat.FP16, dyn_smem=mma_tma_smem,
        notes="C staged by stmatrix and stored by TMA while the next tile's K steps start, "
              "in place of each thread's 64 guarded stores of an FP32 C: 66.4 -> 70.6% of "
              "cuBLAS FP16 at 4096^3 (H100, paired, 2026-12-05), and on the H200 67.9 -> "
              "70.1% at 4096^3 and 69.8 -> 70.9% at 8192^3 (the bundled recording, "
              "2026-12-06); the 64 KB of staging leave "
              "room for 3 stages. What limits it is mma.sync's rate: the HMMA pipe was busy "
              "about 89% of the active cycles with the FP32 C, mma.sync alone reaches about "
              "608 TFLOPS on the H200 (benchmarks/mma_ceiling.py), and CUTLASS's own sm80 "
              "mma.sync GEMMs reached 0.60-0.62 of cuBLAS on an H100 where this level reached "
              "about 0.70 (benchmarks/cutlass_mma_anchor.py). cuBLAS FP16 runs wgmma, which "
              "does 1.44 times mma.sync's work per cycle."),
    WGMMA_TMA,
    dataclasses.replace(
        WGMMA_TMA, id="wgmma_stream_k", title="wgmma + TMA, stream-K last wave (BF16)",
        adds=STREAM_K,
        follows="Osama et al., Stream-K (PPoPP 2023); CUTLASS's stream-K tile scheduler "
                "(data-parallel waves, then stream-K); wgmma_tma",
        params={**WGMMA_TMA.params, "GM": 8, "SK": 2},
        notes="wgmma_tma with SK=2: the last wave of tiles is shared out by K steps, which pays "
              "where that wave is mostly empty (8192^3) and costs where it is nearly full "
              "(4096^3), since a cut tile's partial sums go through L2 twice and SMs on different"
              " K offsets share less of A and B."),
    FP8_BLOCK_SCALED,
    dataclasses.replace(
        FP8_BLOCK_SCALED, id="fp8_stream_k", title="FP8 E4M3 block-scaled, stream-K last wave",
        adds=STREAM_K + " The partial sums are the promoted (scaled) FP32 accumulators.",
        follows="Osama et al., Stream-K (PPoPP 2023); fp8_block_scaled",
        params={**FP8_BLOCK_SCALED.params, "SK": 2, "GM": 8, "SKIP": 0},
        notes="fp8_block_scaled with SK=2: the partial last wave of tiles is shared out by K "
              "blocks, which pays where that wave is mostly empty (DeepGEMM's N = 2112, 8192^3) "
              "and costs where it is nearly full."),
    FP8_DEEP,
    TF32_WGMMA,
    # -- references (cuBLAS through CuPy) --------------------------------------------
    Level(id="cublas_fp32", title="cuBLAS FP32 (no TF32)", precision=Precision.FP32,
          adds="Reference: cupy.matmul on float32 with TF32 off.", follows="cuBLAS",
          kind=Kind.REFERENCE, library=Library.CUBLAS),
    # before cublas_tf32, which stays REFERENCE_FOR's TF32 entry (the last one wins)
    Level(id="cublas_tf32_bt", title="cuBLAS TF32, B as Bt", precision=Precision.TF32,
          adds="Reference: cupy.matmul on float32 with the TF32 compute type, B given as "
               "Bt like the TF32 level (a transposed view, no copy): both operands K-major, "
               "the layout Hopper's TF32 wgmma reads.",
          follows="cuBLAS", kind=Kind.REFERENCE, library=Library.CUBLAS, b_layout="nk"),
    Level(id="cublas_tf32", title="cuBLAS TF32", precision=Precision.TF32,
          adds="Reference: cupy.matmul on float32 with the TF32 compute type.",
          follows="cuBLAS", kind=Kind.REFERENCE, library=Library.CUBLAS),
    # before cublas_fp16, which stays REFERENCE_FOR's FP16 entry (the last one wins)
    Level(id="cublas_fp16_bt", title="cuBLAS FP16, B as Bt", precision=Precision.FP16,
          adds="Reference: cupy.matmul on float16 (Tensor Cores, FP16 output), B given as Bt "
               "like the FP16 TMA levels (a transposed view, no copy).",
          follows="cuBLAS", kind=Kind.REFERENCE, library=Library.CUBLAS, b_layout="nk",
          output_format=OutputFormat.FP16),
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
    Level(id="deepgemm_fp8", title="DeepGEMM FP8 (1x128 / 128x128 block scales)",
          precision=Precision.FP8,
          adds="Reference: deepseek-ai/DeepGEMM's gemm_fp8_fp8_bf16_nt on E4M3 inputs with "
               "its own scaling (one FP32 scale per 1x128 block of A and per 128x128 block "
               "of B, the arrays the block-scaled levels read), BF16 output. Listed only "
               "where the runner can import deep_gemm (with torch and nvcc for its JIT).",
          follows="DeepGEMM (deepseek-ai), the FP8 levels' like-for-like anchor",
          kind=Kind.REFERENCE, library=Library.DEEPGEMM, arch="sm_90a", b_layout="nk",
          output_format=OutputFormat.BF16, scaling=Scaling.BLOCKS, k_multiple=128,
          k_reason="one FP32 scale per 128 of K",
          shape_rule=lambda M, N, K: (
              f"DeepGEMM needs N to be a multiple of 64; got N={N}" if N % 64 else None),
          notes="Timed like every reference: the call as a user makes it, its JIT compile "
                "and block-shape choice done before timing; A's scales passed in the "
                "column-major, TMA-aligned layout DeepGEMM asks for (prepared once)."),
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
              if M % 16 or N % 16 or K % 16 else
              f"with one K block (K={K}) torch reads the block scales as another scaling "
              "(measured: a wrong result at 256x256x128); K must be a multiple of 128 of at "
              "least 256"
              if K < 256 else None),
          notes="cuBLASLt FP8 with DeepGEMM's block scales through torch._scaled_mm; torch 2.11 "
                "takes scale_a outer-dim-major (strides (1, M)), not as a contiguous (M, K/128) "
                "array."),
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
    import hashlib  # here: a reader of the registry's data (``gemmscope report``) needs none

    return hashlib.sha256((cuda_dir() / name).read_bytes()).hexdigest()


def catalog(unavailable: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The levels' catalog entries, less those named in ``unavailable`` (a reference whose
    library the runner cannot import is not listed: the DeepGEMM one without deep_gemm)."""
    gone = set(unavailable)
    return [lv.catalog_entry(i) for i, lv in enumerate(LEVELS) if lv.id not in gone]

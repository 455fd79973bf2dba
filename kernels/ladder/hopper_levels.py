"""The sm_90a (Hopper) levels' entries, named because the registry's table derives their
stream-K forms from them (dataclasses.replace), and what sizes their shared memory. Kept
out of registry.py so that the table stays readable."""

from __future__ import annotations

from .level import Level, OutputFormat, Precision, Scaling, warp_specialized


def _bf16_smem(p: dict[str, int]) -> int:
    """STAGES of A and Bt tiles (2 bytes an element), the C staging buffers, 1 KB slack."""
    return (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 2
            + p["EPI"] * p["CONSUMERS"] * 16384 + 1024)


FP8_TILE_ROWS = 128  # BM of the FP8 levels


def fp8_scale_blocks(bn: int) -> int:
    """The 128-column scale blocks of Bt a tile BN wide spans (NB in fp8_block_scaled.cu): a
    tile whose width is not a multiple of 128 (192) starts 0 or 64 columns into one."""
    return bn // 128 if bn % 128 == 0 else (bn + 64 + 127) // 128


def _fp8_smem(p: dict[str, int]) -> int:
    """As _bf16_smem with 1-byte elements, and with SCL two buffers of scales (64 rows of
    A, the tile's blocks of Bt, FP32) per consumer."""
    return (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"]
            + p["EPI"] * p["CONSUMERS"] * 16384
            + p.get("SCL", 0) * p["CONSUMERS"] * 2 * (64 + fp8_scale_blocks(p["BN"])) * 4
            + 1024)


def _waves_times_width(rows: int, N: int, bn: int, sm_count: int) -> int:
    """A width's cost in a run of ``rows`` tile rows: as many waves as the busiest SM has
    tiles, each as long as the tile is wide (a tile's time grows with its width at a
    given K)."""
    return -(-rows * -(-N // bn) // sm_count) * bn


def bf16_tile_width(M: int, N: int, K: int, sm_count: int) -> dict[str, int]:
    """wgmma_tma's tile width per shape: 232 where its waves cost clearly less than 256's,
    else the default 256. 3000 x 5000: 24 x 20 tiles of 256 are 3.64 waves (1024), 24 x 22
    of 232 exactly 4 (928): 97.9% of cuBLAS BF16 paired, against 90.6% (H200, 2026-12-03);
    at 4096^3 232 makes 5 waves of 4 (88.7% against 100.3%), and the rule keeps 256. 240
    and 192 lost to 232 where the count ties them (95.6% and 92.9% at 3000 x 5000): a
    narrower tile loads A once for fewer columns. The 5% margin as fp8_tile_width's."""
    rows = -(-M // 128)
    wide, narrow = (_waves_times_width(rows, N, bn, sm_count) for bn in (256, 232))
    return {"BN": 232} if narrow < 0.95 * wide else {}


def fp8_tile_width(M: int, N: int, K: int, sm_count: int) -> dict[str, int]:
    """The FP8 levels' tile width per shape, as DeepGEMM picks its BLOCK_N: 192 where
    its waves cost clearly less than 256's, else the default 256 (no change). A wave's
    cost is the tile width (a tile's time grows with it at a given K); the run takes as
    many waves as the busiest SM has tiles. M = 4096, N = 2112: 32 x 9 tiles of 256 (the
    last column 64 wide), 3 waves, 768; 32 x 11 tiles of 192, 3 waves, 576. The 5%
    margin: at 8192^3 and 4096 x 32768 x 512 192 costs 1.6% less by this count but ran
    0.3% and 2.3% slower (round 6): a narrower tile loads A once for fewer columns."""
    rows = -(-M // FP8_TILE_ROWS)
    wide, narrow = (_waves_times_width(rows, N, bn, sm_count) for bn in (256, 192))
    return {"BN": 192} if narrow < 0.95 * wide else {}


STREAM_K = ("The tiles left after the last full wave (fewer than SMs) shared out by K steps "
            "(stream-K): their K steps are cut into one equal, contiguous range per SM, so "
            "no SM idles while others finish the last, partial wave. A tile cut between "
            "SMs is finished by the SM holding its first K step; the others leave FP32 "
            "partial sums in a workspace and count themselves in a per-tile flag it waits "
            "on. The launch uses every SM, even for fewer tiles than SMs.")

# The two warp-specialized Hopper levels, named: their stream-K forms in LEVELS are the
# same entries with other template parameters (dataclasses.replace).
WGMMA_TMA = Level(
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
            "KPIPE": 1, "EPI": 1, "SK": 0},
    shape_params=bf16_tile_width,
    geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
    stream_k_param="SK",
    k_multiple=8, k_reason="a TMA row pitch must be a multiple of 16 bytes",
    edge_variant=False, output_format=OutputFormat.BF16,
    dyn_smem=_bf16_smem,
    notes="Tensor maps built on the host by the driver's cuTensorMapEncodeTiled (ctypes on "
          "libcuda, kernels/device/hopper.py) and passed by value as __grid_constant__ "
          "parameters; B taken as Bt (N x K), C written as BF16 through shared memory and TMA "
          "stores. At the power cap its shared-memory pipe (wgmma's operand reads and the TMA "
          "fills) is 94% busy at 8192^3, level with cuBLAS BF16.")


FP8_BLOCK_SCALED = Level(
    id="fp8_block_scaled", title="FP8 E4M3, block-scaled (DeepGEMM-style)",
    precision=Precision.FP8,
    reference="cublaslt_fp8", scaling=Scaling.BLOCKS,
    adds="E4M3 inputs quantized by the app with one FP32 scale per 1x128 block of A and "
         "per 128x128 block of B; the wgmma_tma pipeline (128x256 tiles, 4 stages of "
         "128-deep K blocks) with wgmma.m64n128k32 (FP8): each K block is accumulated "
         "fresh in temporary registers, one 128-column half at a time, and promoted into "
         "FP32 accumulators times its two scales. Where 192-wide tiles need fewer waves of "
         "SMs (N = 2112: 11 x 192), the host picks them per shape, as DeepGEMM picks its "
         "BLOCK_N: one wgmma.m64n192k32 part whose columns span two scale blocks of B.",
    follows="DeepGEMM (deepseek-ai) fine-grained scaling; PTX ISA wgmma .e4m3",
    source="fp8_block_scaled.cu", kernel="fp8gemm_block_scaled",
    params={"BM": FP8_TILE_ROWS, "BN": 256, "BK": 128, "STAGES": 4, "CONSUMERS": 2,
            "GM": 16, "KPIPE": 0, "EPI": 1, "SK": 0, "SCL": 1, "SKIP": 1},
    shape_params=fp8_tile_width,
    geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
    stream_k_param="SK",
    k_multiple=128, k_reason="one FP32 scale per 128 of K", edge_variant=False,
    output_format=OutputFormat.BF16,
    dyn_smem=_fp8_smem,
    notes="Tensor maps as in wgmma_tma; accuracy is reported as the relative error and as "
          "DeepGEMM's 1 - 2 sum(xy) / sum(x^2 + y^2) against a float64 product of the dequantized"
          " inputs. Limited by the promotion schedule: each half tile's wait and FP32 promotion "
          "per 128 of K leave the tensor pipe 66% busy at 8192^3 (the same loop with neither runs"
          " at about 1480 TFLOPS).")


def _tf32_smem(p: dict[str, int]) -> int:
    """STAGES of A and Bt tiles (4 bytes an element) and 1 KB of slack for the 1024-byte
    alignment; C leaves from registers, so there is no staging buffer."""
    return p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 4 + 1024


# The TF32 tolerance is TOLERANCE[Precision.TF32] (level.py), 5e-3 on the relative
# Frobenius error. TF32 costs each input a relative error below 2^-10 (dropping the 13 low
# mantissa bits; below 2^-11 rounded to nearest), the same at every K: the products'
# errors add up as the products do (a random walk for zero-mean inputs, in step with the
# sum for inputs of one sign), so their ratio stays put. Emulated in numpy
# (tests/kernels/ladder/test_tf32_level.py), dropped bits give 6.5e-4 to 7.7e-4 from
# K = 128 to 16384 for uniform, normal and all-positive operands (rounded: 3e-4 and less),
# so 5e-3 leaves a margin of 6 and still fails a lost K step: one step of 32 missing at
# K = 16384 leaves an error of sqrt(32 / 16384) = 4.4 % with zero-mean operands.
TF32_WGMMA = Level(
    id="tf32_wgmma", title="wgmma + TMA, TF32 on tensor cores", precision=Precision.TF32,
    reference="cublas_tf32_bt",
    adds="FP32 inputs multiplied on the tensor cores as TF32 (10 of a float's 23 mantissa "
         "bits), FP32 accumulators and an FP32 C, on wgmma_tma's pipeline: TMA copies "
         "128x32 A and 256x32 Bt tiles of floats (one 128-byte swizzle row deep) into a "
         "4-stage ring, two consumer warpgroups issue wgmma.m64n256k8.tf32 from it. A "
         "stage holds half the K of a BF16 one; a TF32 wgmma is half the BF16 rate, so "
         "each stage still feeds the tensor cores as long.",
    follows="PTX ISA 8.x: wgmma .tf32 (K-major operands only), cp.async.bulk.tensor; "
            "CUTLASS sm90 TF32 GEMMs (K-major A and B); wgmma_tma",
    source="tf32_wgmma.cu", kernel="sgemm_wgmma_tf32",
    params={"BM": 128, "BN": 256, "BK": 32, "STAGES": 4, "CONSUMERS": 2, "GM": 16,
            "KPIPE": 1, "SK": 0},
    geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
    stream_k_param="SK",
    k_multiple=4, k_reason="a TMA row pitch must be a multiple of 16 bytes (4 floats)",
    edge_variant=False, output_format=OutputFormat.FP32,
    dyn_smem=_tf32_smem,
    notes="TF32 reads FP32 inputs with a 10-bit mantissa: against float64 its relative "
          "error is about 7e-4 at every K (emulated, the low bits dropped) where FP32 "
          "(cuBLAS without TF32) stays below 1e-6 "
          "(benchmarks/tf32_accuracy.py measures both, and cuBLAS TF32, on the GPU). B is "
          "taken as Bt (N x K), as wgmma reads TF32 only K-major; its reference, cuBLAS "
          "TF32 on the same Bt, is what the ratio is of. C is stored from registers (no "
          "TMA store for an FP32 C yet).")

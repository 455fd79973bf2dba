"""The sm_90a (Hopper) levels' entries, named because the registry's table derives their
stream-K forms from them (dataclasses.replace), and what sizes their shared memory. Kept
out of registry.py so that the table stays readable."""

from __future__ import annotations

from .level import Level, OutputFormat, Precision, Scaling, warp_specialized


def _bf16_smem(p: dict[str, int]) -> int:
    """STAGES of A and Bt tiles (2 bytes an element), the C staging buffers, 1 KB slack."""
    return (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 2
            + p["EPI"] * p["CONSUMERS"] * 16384 + 1024)


def _fp8_smem(p: dict[str, int]) -> int:
    """As _bf16_smem with 1-byte elements, and with SCL two buffers of scales (64 rows of
    A, BN / 128 blocks of Bt, FP32) per consumer."""
    return (p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"]
            + p["EPI"] * p["CONSUMERS"] * 16384
            + p.get("SCL", 0) * p["CONSUMERS"] * 2 * (64 + p["BN"] // 128) * 4 + 1024)


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
    geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
    stream_k_param="SK",
    k_multiple=8, k_reason="a TMA row pitch must be a multiple of 16 bytes",
    edge_variant=False, output_format=OutputFormat.BF16,
    dyn_smem=_bf16_smem,
    notes="Tensor maps: built on the host by the driver's cuTensorMapEncodeTiled, called "
          "through ctypes on libcuda (kernels/hopper.py; no cuda-python needed), and passed "
          "by value as __grid_constant__ parameters through cuLaunchKernel. B is taken "
          "as Bt (N x K); C is written as BF16 like cuBLAS's BF16 GEMM. Measured on the "
          "H200 (benchmarks/hopper_bench.py, 4096^3 / 8192^3): direct stores from the "
          "accumulators 701 / 769 TFLOPS (90% / 95% of cuBLAS BF16); C through shared "
          "memory and TMA stores 765 / 786 (99.5% / 100%). Keeping one wgmma group in "
          "flight (KPIPE) and the tile-group height GM changed less than 1%.")


FP8_BLOCK_SCALED = Level(
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
            "KPIPE": 0, "EPI": 1, "SK": 0, "SCL": 1, "SKIP": 1},
    geometry=warp_specialized, arch="sm_90a", b_layout="nk", persistent=True,
    stream_k_param="SK",
    k_multiple=128, k_reason="one FP32 scale per 128 of K", edge_variant=False,
    output_format=OutputFormat.BF16,
    dyn_smem=_fp8_smem,
    notes="Tensor maps as in wgmma_tma. Accuracy is reported as the relative error and "
          "as DeepGEMM's 1 - 2 sum(xy) / sum(x^2 + y^2) against a float64 product of the "
          "dequantized inputs. Measured on the H200 (benchmarks/hopper_bench.py): waiting "
          "for each K block before promoting, 128x128 tiles, 820 / 883 TFLOPS at 4096^3 / "
          "8192^3; promoting block k-1 from a second set of temporaries while block k "
          "runs (KPIPE=1) 948 / 1046; with the TMA-store epilogue 1045 / 1076; 128x256 "
          "tiles in two halves (KPIPE=0, 4 stages) 1064 / 1095, the default. Round 3 "
          "(issue 17, benchmarks/tune17_hopper.py, side by side): the scales through "
          "shared memory (SCL=1, copied one K block ahead while the first half runs) "
          "1104 -> 1254 at 8192^3; at DeepGEMM's shapes (M = 4096; N, K) = (2112, 7168) "
          "735 -> 803-847, (24576, 1536) 1093 -> 1110, (32768, 512) 855 -> 832-840, "
          "(7168, 16384) 1131 -> 1276-1283, (4096, 7168) 1065 -> 1223-1228, (7168, "
          "2048) 1036 -> 1094-1099; reading them before the K block's wgmmas instead of "
          "while they run: 3-4% slower. Round 4: a tile whose second half lies wholly "
          "past N runs a second copy of the K loop that issues only the first (SKIP=1); "
          "side by side with SKIP=0 (this GPU ran both ~6% under round 3's figures while "
          "cuBLASLt held): N = 2112 782 -> 860, 8192^3 1174 -> 1187, the other five "
          "shapes within 1% (1056 -> 1051, 822 -> 814, 1192 -> 1200, 1145 -> 1146, "
          "1033 -> 1034). A runtime test around the second half's wgmmas instead of a "
          "second loop cost ~5% everywhere.")

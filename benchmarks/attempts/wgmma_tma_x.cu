// Attempts on wgmma_tma's tile width (issue 42, the BF16 row), not a level:
// kernels/cuda/wgmma_tma.cu itself (included: its plain build, no trace lines), with
// wgmma.m64nBNk16 for BN = 192 and 240 as well as its 256, 232 and 128 (wgmma_x_ops.cuh,
// benchmarks/kernel_attempts.py's wgmma_x_ops()). The kernel template only instantiates
// GsWgmmaBf16<BN> when a BN is compiled, so the specializations below may follow it. With
// the level's parameters this is wgmma_tma's code.
// Why: at 3000 x 5000 x 4096, 24 x 20 tiles of 128 x 256 are 480 tiles over 132 SMs, 3.64
// waves (0.91 of four: the 91.4% paired). A tile's time grows with its width at a given K,
// so waves x BN counts the run: 256: 4 x 256 = 1024; 192: 24 x 27 tiles, 5 waves, 960;
// 240: 24 x 21, 4 waves, 960; 232: 24 x 22 = 528, exactly 4 waves, 928.
// A width that is not a multiple of 64 keeps the level's TMA epilogue: the level stores its
// last 64 columns as one more box, overlapping the chunk before (round 4; round 3 stored
// such widths directly, EPI = 0, which costs 11 points at 256). 232 became the level's own
// width for shapes like 3000 x 5000 (bf16_tile_width), so its instruction and GsWgmmaBf16
// specialization are the level's.
#include "wgmma_tma.cu"
#include "wgmma_x_ops.cuh"

template <>
struct GsWgmmaBf16<192> {
    static __device__ __forceinline__ void mma(float (&d)[96], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n192(d, a, b, acc);
    }
};
template <>
struct GsWgmmaBf16<240> {
    static __device__ __forceinline__ void mma(float (&d)[120], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n240(d, a, b, acc);
    }
};

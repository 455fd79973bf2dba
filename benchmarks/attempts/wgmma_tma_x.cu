// Attempts on wgmma_tma's tile width (issue 42, the BF16 row), not a level:
// kernels/cuda/wgmma_tma.cu itself (included: its plain build, no trace lines), with
// wgmma.m64nBNk16 for BN = 192, 232 and 240 as well as its 256 and 128 (wgmma_x_ops.cuh,
// benchmarks/kernel_attempts.py's wgmma_x_ops()). The kernel template only instantiates
// GsWgmmaBf16<BN> when a BN is compiled, so the specializations below may follow it. With
// the level's parameters this is wgmma_tma's code.
// Why: at 3000 x 5000 x 4096, 24 x 20 tiles of 128 x 256 are 480 tiles over 132 SMs, 3.64
// waves (0.91 of four: the 91.4% paired). A tile's time grows with its width at a given K,
// so waves x BN counts the run: 256: 4 x 256 = 1024; 192: 24 x 27 tiles, 5 waves, 960;
// 240: 24 x 21, 4 waves, 960; 232: 24 x 22 = 528, exactly 4 waves, 928.
// The shared-memory epilogue (EPI = 1) writes 64-column chunks; hopper_epilogue.cuh's
// gs_store_acc_tma stores the whole ones only, so for a width that is not a multiple of 64
// (232, 240) this file specializes it: after the whole chunks it stores the tile's last 64
// columns as one more box, which overlaps the chunk before (232: columns 168..231 after
// 128..191), so every store stays a 64 x 64 TMA box inside the tile and the overlap is
// written twice with the same values (round 3 measured the alternative, EPI = 0's direct
// stores: 11 points lost at 256; round 4 measured this store order at 97.9%).
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
struct GsWgmmaBf16<232> {
    static __device__ __forceinline__ void mma(float (&d)[116], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n232(d, a, b, acc);
    }
};
template <>
struct GsWgmmaBf16<240> {
    static __device__ __forceinline__ void mma(float (&d)[120], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n240(d, a, b, acc);
    }
};

// gs_store_acc_tma for NREG % 32 != 0: the whole 64-column chunks, then the tile's last 64
// columns from the half of the buffer the last whole chunk did not use (its store may still
// be reading the other). As the level would do it (branch bf16-232's wgmma_tma.cu).
template <int NREG>
__device__ __forceinline__ void gs_store_acc_tma_tail(const float (&d)[NREG], unsigned char* buf,
                                                      const GsTensorMap* map, int row0, int col0,
                                                      int bar_id) {
    constexpr int WHOLE = NREG / 32 * 32, LAST = NREG - 32;
    float head[WHOLE], last[32];
#pragma unroll
    for (int i = 0; i < WHOLE; ++i) head[i] = d[i];
#pragma unroll
    for (int i = 0; i < 32; ++i) last[i] = d[LAST + i];
    gs_store_acc_tma(head, buf, map, row0, col0, bar_id);
    gs_store_acc_tma(last, buf + (NREG / 32 % 2) * 8192, map, row0, col0 + 2 * LAST, bar_id);
}
template <>
__device__ __forceinline__ void gs_store_acc_tma<116>(const float (&d)[116], unsigned char* buf,
                                                      const GsTensorMap* map, int row0, int col0,
                                                      int bar_id) {
    gs_store_acc_tma_tail<116>(d, buf, map, row0, col0, bar_id);
}
template <>
__device__ __forceinline__ void gs_store_acc_tma<120>(const float (&d)[120], unsigned char* buf,
                                                      const GsTensorMap* map, int row0, int col0,
                                                      int bar_id) {
    gs_store_acc_tma_tail<120>(d, buf, map, row0, col0, bar_id);
}

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
// (232, 240) this file specializes it: its last chunk is the tile's last 64 columns, which
// overlap the chunk before (232: columns 168..231 after 128..191), so every store stays a
// 64 x 64 TMA box inside the tile and the overlap is written twice with the same values
// (round 3 measured the alternative, EPI = 0's direct stores: 11 points lost at 256).
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

// gs_store_acc_tma for NREG % 32 != 0: chunk ch covers 8-column groups g0..g0 + 7 with
// g0 = min(8 ch, NREG / 4 - 8), the same lane layout, swizzle and double buffer otherwise.
template <int NREG>
__device__ __forceinline__ void gs_store_acc_tma_overlap(const float (&d)[NREG], unsigned char* buf,
                                                         const GsTensorMap* map, int row0,
                                                         int col0, int bar_id) {
    static_assert(NREG % 4 == 0 && NREG >= 32, "whole 8-column groups, one box at least");
    constexpr int GROUPS = NREG / 4, CHUNKS = (GROUPS + 7) / 8;
    const int t = threadIdx.x % 128;
    const int r = (t / 32) * 16 + (t % 32) / 4;
    const bool leader = t == 0;
#pragma unroll
    for (int ch = 0; ch < CHUNKS; ++ch) {
        constexpr int LAST = GROUPS - 8;
        const int g0 = ch * 8 < LAST ? ch * 8 : LAST;
        unsigned char* half = buf + (ch & 1) * 8192;
        const unsigned half_addr = gs_smem_addr(half);
        if (leader) gs_bulk_wait_read<1>();
        gs_named_barrier(bar_id, 128);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int g = g0 + j;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int rr = r + 8 * h;
                const unsigned addr = half_addr + rr * 128 + ((j ^ (rr & 7)) << 4) + 4 * (t % 4);
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr),
                             "r"(gs_pack_bf16x2(d[4 * g + 2 * h], d[4 * g + 2 * h + 1]))
                             : "memory");
            }
        }
        gs_fence_async_shared();
        gs_named_barrier(bar_id, 128);
        if (leader) {
            gs_tma_store_2d(map, half, col0 + g0 * 8, row0);
            gs_bulk_commit();
        }
    }
}
template <>
__device__ __forceinline__ void gs_store_acc_tma<116>(const float (&d)[116], unsigned char* buf,
                                                      const GsTensorMap* map, int row0, int col0,
                                                      int bar_id) {
    gs_store_acc_tma_overlap<116>(d, buf, map, row0, col0, bar_id);
}
template <>
__device__ __forceinline__ void gs_store_acc_tma<120>(const float (&d)[120], unsigned char* buf,
                                                      const GsTensorMap* map, int row0, int col0,
                                                      int bar_id) {
    gs_store_acc_tma_overlap<120>(d, buf, map, row0, col0, bar_id);
}

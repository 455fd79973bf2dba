// Attempts on wgmma_tma's tile width (issue 42, the BF16 row), not a level:
// kernels/cuda/wgmma_tma.cu (its plain build: no trace lines) with wgmma.m64nBNk16 for BN
// = 192, 232 and 240 as well as 256 and 128 (wgmma_x_ops.cuh, made by gen_wgmma from
// benchmarks/kernel_attempts.py's WGMMA_X_SHAPES). With the level's parameters this is
// wgmma_tma's code. Why: at 3000 x 5000 x 4096, 24 x 20 tiles of 128 x 256 are 480 tiles
// over 132 SMs, 3.64 waves (0.91 of four: the 91.4% paired). A tile's time grows with its
// width at a given K, so waves x BN counts the run: 256: 4 x 256 = 1024; 192: 24 x 27
// tiles, 5 waves, 960; 240: 24 x 21, 4 waves, 960; 232: 24 x 22 = 528, exactly 4 waves, 928.
// The shared-memory epilogue (EPI = 1) writes 64-column chunks, so a width that is not a
// multiple of 64 (232, 240) stores its accumulators directly (EPI = 0).
#include "common.cuh"
#include "hopper.cuh"
#include "wgmma_x_ops.cuh"

template <int BN>
struct GsWgmmaBf16;
template <>
struct GsWgmmaBf16<256> {
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n256(d, a, b, acc);
    }
};
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
template <>
struct GsWgmmaBf16<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n128(d, a, b, acc);
    }
};

template <int BM, int BN, int BK, int STAGES, int CONSUMERS, int GM, int KPIPE, int EPI,
          int SK, bool VEC>
__global__ void __launch_bounds__((CONSUMERS + 1) * 128, 1)
bgemm_wgmma_tma_x(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
                const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
                unsigned short* __restrict__ C, int tma_c, float* __restrict__ ws,
                int* __restrict__ flags) {
    static_assert(BK * 2 == 128, "a K step must be one 128-byte swizzle row");
    static_assert(BM == 64 * CONSUMERS, "each consumer warpgroup owns 64 rows");
    constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr int NREG = BN / 2;  // accumulators per thread of a m64nBN tile

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);

    const int wg = threadIdx.x / 128;
    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int tiles = tm * tn, ksteps = GS_CEIL_DIV(K, BK);
    gs_ws_init_barriers<STAGES, CONSUMERS>(full, empty);
    const GsWork work = gs_work<SK>(tiles, ksteps);

    if (wg == 0) {
        // ---------------------------------------------------------------- producer
        gs_setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            gs_ws_produce<BM, BN, BK, STAGES, GM, A_BYTES, STAGE_BYTES>(&tmA, &tmB, smem, full,
                                                                      empty, tm, tn, work);
    } else {
        // ---------------------------------------------------------------- consumers
        gs_setmaxnreg_inc<232>();
        const int c = wg - 1;
        const bool leader = threadIdx.x % 128 == 0;
        float acc[NREG];
        int it = 0;
        gs_for_each_unit(work, [&](int t, int k0, int k1) {
            int bm, bn;
            gs_group_coords(t, tm, tn, GM, bm, bn);
            for (int ks = k0; ks < k1; ++ks, ++it) {
                const int s = it % STAGES;
                gs_mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* stage = smem + s * STAGE_BYTES;
                const unsigned long long da = gs_wgmma_desc_sw128(stage + c * 64 * 128);
                const unsigned long long db = gs_wgmma_desc_sw128(stage + A_BYTES);
                gs_fence_regs(acc);
                gs_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk)  // 16 bf16 = 32 bytes = 2 address units
                    GsWgmmaBf16<BN>::mma(acc, da + 2 * kk, db + 2 * kk, (ks > k0 || kk > 0) ? 1 : 0);
                gs_wgmma_commit();
                // KPIPE = 1: leave this step's wgmmas running while the previous step's have
                // completed, and free the previous stage; KPIPE = 0: wait for this step.
                gs_wgmma_wait<KPIPE>();
                gs_fence_regs(acc);
                if (leader && (KPIPE == 0 || ks > k0))
                    gs_mbar_arrive(&empty[(it - KPIPE) % STAGES]);
            }
            if (KPIPE > 0) {
                gs_wgmma_wait<0>();
                gs_fence_regs(acc);
                if (leader) gs_mbar_arrive(&empty[(it - 1) % STAGES]);
            }
            if (SK && !gs_sk_settle<NREG, CONSUMERS>(acc, ws, flags, work, t, k0, k1, c))
                return;  // a contributor: its partial sums are in the workspace
            if (EPI && tma_c)
                gs_store_acc_tma(acc, smem + STAGES * STAGE_BYTES + c * 16384, &tmC,
                                 bm * BM + c * 64, bn * BN, 1 + c);
            else
                gs_store_acc_bf16(acc, C, M, N, bm * BM + c * 64, bn * BN);
        });
        if (EPI && tma_c && leader) gs_bulk_wait<0>();
    }
}

// Level "wgmma_cluster" (sm_90a): wgmma_tma with thread block clusters. BF16 A (M x K) and
// Bt (N x K), both K-major, FP32 accumulation, C written as BF16, as in wgmma_tma.
//
// What changes: the grid is made of clusters of CL CTAs (__cluster_dims__), and the CTAs of
// a cluster compute CL vertically adjacent tiles (rows bm0 .. bm0 + CL - 1, one column bn),
// which need the same B tile. Each CTA's producer loads its own A tile and one slice of
// BN / CL rows of the B tile, which TMA multicasts into the shared memory of every CTA of
// the cluster; so B's traffic from L2 is divided by CL. The price is coupling: a stage is
// refilled only when the consumers of all CTAs freed it, so each consumer's leader arrives
// on the "empty" mbarrier of every CTA (mapa + mbarrier.arrive.shared::cluster), and the
// CTAs walk their tile pairs in lock step (both run the same number of K steps).
// The cluster is synchronized (barrier.cluster) after the mbarriers are initialized, before
// any CTA signals another, and at the end, so no CTA exits while a peer may still write
// into its shared memory.
// Template switches for the tune script: CL = 1 is wgmma_tma's pipeline (no multicast);
// PRODREGS / CONSREGS are the setmaxnreg targets of producer and consumers.
// Edges as in wgmma_tma: TMA zero-fills, the stores are guarded or clipped (a CTA whose
// tile row is past M, the odd one out of the last pair, computes zeros and stores nothing).
#include "common.cuh"
#include "hopper.cuh"

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
struct GsWgmmaBf16<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n128(d, a, b, acc);
    }
};

template <int BM, int BN, int BK, int STAGES, int CONSUMERS, int GM, int KPIPE, int EPI, int CL,
          int PRODREGS, int CONSREGS, bool VEC>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__((CONSUMERS + 1) * 128, 1)
bgemm_wgmma_cluster(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
                    const __grid_constant__ GsTensorMap tmB,
                    const __grid_constant__ GsTensorMap tmC, unsigned short* __restrict__ C,
                    int tma_c) {
    static_assert(BK * 2 == 128, "a K step must be one 128-byte swizzle row");
    static_assert(BM == 64 * CONSUMERS, "each consumer warpgroup owns 64 rows");
    static_assert(CL >= 1 && CL <= 4 && BN % (8 * CL) == 0, "B slices of whole row groups");
    constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr int NREG = BN / 2;

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);

    const int wg = threadIdx.x / 128;
    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int pairs = GS_CEIL_DIV(tm, CL) * tn, ksteps = GS_CEIL_DIV(K, BK);
    gs_ws_init_barriers<STAGES, CONSUMERS * CL>(full, empty);
    if constexpr (CL > 1) gs_cluster_sync();

    if (wg == 0) {
        // ---------------------------------------------------------------- producer
        gs_setmaxnreg_dec<PRODREGS>();
        if (threadIdx.x == 0)
            gs_ws_produce_cluster<BM, BN, BK, STAGES, GM, CL, A_BYTES, STAGE_BYTES>(
                &tmA, &tmB, smem, full, empty, tm, tn, ksteps);
    } else {
        // ---------------------------------------------------------------- consumers
        gs_setmaxnreg_inc<CONSREGS>();
        const int c = wg - 1;
        const bool leader = threadIdx.x % 128 == 0;
        float acc[NREG];
        int it = 0;
        for (int p = gs_cluster_id(); p < pairs; p += gs_cluster_count()) {
            int bm, bn;
            gs_cluster_tile<CL>(p, tm, tn, GM, bm, bn);
            for (int ks = 0; ks < ksteps; ++ks, ++it) {
                const int s = it % STAGES;
                gs_mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* stage = smem + s * STAGE_BYTES;
                const unsigned long long da = gs_wgmma_desc_sw128(stage + c * 64 * 128);
                const unsigned long long db = gs_wgmma_desc_sw128(stage + A_BYTES);
                gs_fence_regs(acc);
                gs_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk)
                    GsWgmmaBf16<BN>::mma(acc, da + 2 * kk, db + 2 * kk, (ks > 0 || kk > 0) ? 1 : 0);
                gs_wgmma_commit();
                gs_wgmma_wait<KPIPE>();
                gs_fence_regs(acc);
                if (leader && (KPIPE == 0 || ks > 0))
                    gs_ws_release_cluster<CL>(&empty[(it - KPIPE) % STAGES]);
            }
            if (KPIPE > 0) {
                gs_wgmma_wait<0>();
                gs_fence_regs(acc);
                if (leader) gs_ws_release_cluster<CL>(&empty[(it - 1) % STAGES]);
            }
            if (EPI && tma_c)
                gs_store_acc_tma(acc, smem + STAGES * STAGE_BYTES + c * 16384, &tmC,
                                 bm * BM + c * 64, bn * BN, 1 + c);
            else
                gs_store_acc_bf16(acc, C, M, N, bm * BM + c * 64, bn * BN);
        }
        if (EPI && tma_c && leader) gs_bulk_wait<0>();
    }
    if constexpr (CL > 1) gs_cluster_sync();
}

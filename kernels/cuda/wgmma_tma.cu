// Level "wgmma_tma" (sm_90a): Hopper's own Tensor Core path. BF16 A (M x K, row-major)
// and B given as its transpose Bt (N x K, row-major: both operands K-major, as wgmma reads
// them without transposition); FP32 accumulation; C (M x N) written as BF16, like the
// cuBLAS BF16 reference.
//
// One persistent block per SM walks output tiles of BM x BN (tile t, t + gridDim.x, ...,
// grouped GM tile rows at a time so that concurrent blocks share A and B panels in L2).
// Its warpgroups specialize:
//   - warpgroup 0, the producer, gives most of its registers away (setmaxnreg.dec) and
//     one of its threads issues TMA copies of the A and B tiles of each K step into a
//     ring of STAGES shared-memory stages, each completing on the stage's "full" mbarrier;
//   - warpgroups 1..CONSUMERS each own BM / CONSUMERS rows of the tile: they wait on
//     "full", issue BK / 16 wgmma.m64nBNk16 (B from shared memory, accumulators in
//     registers), and when those have completed arrive on the stage's "empty" mbarrier so
//     the producer may refill it. After the last K step each consumer converts its
//     accumulators to BF16 and stores them while the producer already fills the stages
//     of the block's next tile.
// SK = 2 (level "wgmma_stream_k"; 1 cuts the last full wave too): the tiles of the last,
// partial wave are shared out by K steps instead of whole tiles (stream-K, hopper.cuh's
// gs_work), so no block idles while others finish them; a tile cut between blocks is
// summed through an FP32 workspace.
// BN = 232 (picked per shape on the host, bf16_tile_width: 3000 x 5000 is 528 tiles, four
// full waves of 132, where 256 leaves the fourth 64% full): the epilogue stores three
// 64-column chunks and then the tile's last 64 columns, which overlap the third chunk, so
// every TMA store stays a 64 x 64 box inside the tile (the overlap is written twice, with
// the same values).
// TMA writes each tile in the 128-byte swizzle (a row of BK = 64 bf16 is 128 bytes), which
// the wgmma descriptors name, so the tensor cores read it without bank conflicts.
// Edges: TMA fills out-of-bounds rows and columns with zeros, the stores are guarded; the
// host refuses K % 8 != 0 (a tensor map's row pitch must be a multiple of 16 bytes).
#include "common.cuh"
#include "hopper.cuh"
#include "trace.cuh"
#include "wgmma_bf16_ops.cuh"

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

template <>
struct GsWgmmaBf16<232> {
    static __device__ __forceinline__ void mma(float (&d)[116], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_bf16_n232(d, a, b, acc);
    }
};

template <int BM, int BN, int BK, int STAGES, int CONSUMERS, int GM, int KPIPE, int EPI,
          int SK, bool VEC>
__global__ void __launch_bounds__((CONSUMERS + 1) * 128, 1)
bgemm_wgmma_tma(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
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
        GS_TRACE_LANE(leader);
        GS_TRACE(LANE_START, -1, 0);
        gs_for_each_unit(work, [&](int t, int k0, int k1) {
            int bm, bn;
            gs_group_coords(t, tm, tn, GM, bm, bn);
            GS_TRACE(TILE_BEGIN, t, k0);
            for (int ks = k0; ks < k1; ++ks, ++it) {
                const int s = it % STAGES;
                gs_mbar_wait(&full[s], (it / STAGES) & 1);
                GS_TRACE(DATA_READY, t, ks);
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
                GS_TRACE_IF(KPIPE == 0 || ks > k0, MMA_DONE, t, ks - KPIPE);
            }
            if (KPIPE > 0) {
                gs_wgmma_wait<0>();
                gs_fence_regs(acc);
                if (leader) gs_mbar_arrive(&empty[(it - 1) % STAGES]);
                GS_TRACE(MMA_DONE, t, k1 - 1);
            }
            GS_TRACE_IF(SK && (k0 != 0 || k1 != work.ksteps), FIXUP_BEGIN, t, k0);
            if (SK && !gs_sk_settle<NREG, CONSUMERS>(acc, ws, flags, work, t, k0, k1, c))
                return;  // a contributor: its partial sums are in the workspace
            GS_TRACE_IF(SK && k1 != work.ksteps, FIXUP_DONE, t, k0);
            if (EPI && tma_c) {
                unsigned char* buf = smem + STAGES * STAGE_BYTES + c * 16384;
                gs_store_acc_tma(acc, buf, &tmC, bm * BM + c * 64, bn * BN, 1 + c);  // whole chunks
                if constexpr (NREG % 32 != 0) {
                    // the last 64 columns, from the half of the buffer the last whole chunk
                    // did not use (its store may still be reading the other)
                    constexpr int LAST = NREG - 32;
                    float last[32];
#pragma unroll
                    for (int i = 0; i < 32; ++i) last[i] = acc[LAST + i];
                    gs_store_acc_tma(last, buf + (NREG / 32 % 2) * 8192, &tmC, bm * BM + c * 64,
                                     bn * BN + 2 * LAST, 1 + c);
                }
            } else
                gs_store_acc_bf16(acc, C, M, N, bm * BM + c * 64, bn * BN);
            GS_TRACE(TILE_END, t, k1);
        });
        if (EPI && tma_c && leader) gs_bulk_wait<0>();
        GS_TRACE(LANE_END, -1, 0);
    }
}

// Level "tf32_wgmma" (sm_90a): FP32 inputs multiplied on the tensor cores as TF32, on
// wgmma_tma's pipeline. A (M x K, row-major) and B given as its transpose Bt (N x K,
// row-major): wgmma reads TF32 operands from shared memory only K-major (the PTX ISA has
// no transpose for .tf32), so both are. FP32 accumulation; C (M x N) written as FP32.
//
// The structure is wgmma_tma.cu's: one persistent block per SM walks BM x BN output tiles
// in groups of GM tile rows; warpgroup 0, the producer, gives its registers away and one
// of its threads copies the A (BM x BK) and Bt (BN x BK) tiles of each K step by TMA into
// a ring of STAGES stages, each completing on its "full" mbarrier; warpgroups 1..CONSUMERS
// own 64 rows each, wait on "full", issue BK / 8 wgmma.m64nBNk8.f32.tf32.tf32 from the
// stage, and arrive on its "empty" mbarrier when those completed. SK = 2 shares the last,
// partial wave of tiles out by K steps (stream-K, hopper.cuh's gs_work).
// What changes with 4-byte elements: a 128-byte swizzle row is BK = 32 floats, so a K step
// is half as deep as BF16's and a stage twice the bytes per K; a k8 TF32 wgmma steps 32
// bytes along the row, as a k16 BF16 one does, so the descriptors advance the same way.
// The tensor cores use 10 of a float's 23 mantissa bits: TMA copies the FP32 values as
// they are and wgmma reads them as TF32 (benchmarks/tf32_accuracy.py measures what that
// costs against float64, beside cuBLAS TF32 and FP32).
// Edges: TMA fills out-of-bounds rows and columns with zeros and the stores are guarded;
// the host refuses K % 4 != 0 (a tensor map's row pitch must be a multiple of 16 bytes).
// C is stored from registers, a float2 per lane where N is even: 8 rows of 32 bytes per
// warp instruction, every 32-byte sector written whole.
#include "common.cuh"
#include "hopper.cuh"
#include "trace.cuh"
#include "tf32_wgmma_ops.cuh"

template <int BN>
struct GsWgmmaTf32;
template <>
struct GsWgmmaTf32<256> {
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_tf32_n256(d, a, b, acc);
    }
};
template <>
struct GsWgmmaTf32<192> {
    static __device__ __forceinline__ void mma(float (&d)[96], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_tf32_n192(d, a, b, acc);
    }
};
template <>
struct GsWgmmaTf32<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_tf32_n128(d, a, b, acc);
    }
};

// A warpgroup's m64nN FP32 accumulators stored into row-major C (ldc = N), rows row0..,
// columns col0..; guarded against M and N. Lane layout as in hopper_epilogue.cuh: warp w
// of the group holds rows 16w + lane/4 and +8; registers 4j+{0,1} are columns
// 8j + 2(lane%4) + {0,1} of the first row, 4j+{2,3} the same of the second.
template <int NREG>
__device__ __forceinline__ void gs_store_acc_f32(const float (&d)[NREG], float* __restrict__ C,
                                                 int M, int N, int row0, int col0) {
    const int t = threadIdx.x % 128;
    const int r = row0 + (t / 32) * 16 + (t % 32) / 4;
    const int cb = col0 + 2 * (t % 4);
    const bool pairs = (N % 2) == 0;  // then every pair starts 8-byte aligned
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int rr = r + 8 * h;
        const bool row_in = rr < M;  // a predicate, not a branch around the asm store
        float* dst_row = C + (gs_index)rr * N;
#pragma unroll
        for (int j = 0; j < NREG / 4; ++j) {
            const int c = cb + 8 * j;
            float* dst = dst_row + c;
            if (pairs) {  // one 8-byte store (common.cuh: the build's vectorizer is off)
                gs_st_global2(row_in && c < N, dst, d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            } else {
                if (row_in && c < N) dst[0] = d[4 * j + 2 * h];
                if (row_in && c + 1 < N) dst[1] = d[4 * j + 2 * h + 1];
            }
        }
    }
}

template <int BM, int BN, int BK, int STAGES, int CONSUMERS, int GM, int KPIPE, int SK, bool VEC>
__global__ void __launch_bounds__((CONSUMERS + 1) * 128, 1)
sgemm_wgmma_tf32(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
                 const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
                 float* __restrict__ C, int tma_c, float* __restrict__ ws,
                 int* __restrict__ flags) {
    static_assert(BK * 4 == 128, "a K step must be one 128-byte swizzle row (32 floats)");
    static_assert(BM == 64 * CONSUMERS, "each consumer warpgroup owns 64 rows");
    constexpr int A_BYTES = BM * BK * 4, B_BYTES = BN * BK * 4;
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr int NREG = BN / 2;  // accumulators per thread of a m64nBN tile
    // the register file (64K) shared out: 40 a producer thread, the rest to the consumers
    // in steps of 8 (232 with two consumer warpgroups, as wgmma_tma has)
    constexpr int CREG = (65536 - 40 * 128) / (CONSUMERS * 128) / 8 * 8 > 232
                             ? 232 : (65536 - 40 * 128) / (CONSUMERS * 128) / 8 * 8;
    static_assert(NREG + 24 <= CREG, "the accumulators must fit a consumer's registers");
    (void)tmC;
    (void)tma_c;  // C leaves from registers (an FP32 C has no TMA store here)

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
        gs_setmaxnreg_inc<CREG>();
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
                for (int kk = 0; kk < BK / 8; ++kk)  // 8 floats = 32 bytes = 2 address units
                    GsWgmmaTf32<BN>::mma(acc, da + 2 * kk, db + 2 * kk, (ks > k0 || kk > 0) ? 1 : 0);
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
            gs_store_acc_f32(acc, C, M, N, bm * BM + c * 64, bn * BN);
            GS_TRACE(TILE_END, t, k1);
        });
        GS_TRACE(LANE_END, -1, 0);
    }
}

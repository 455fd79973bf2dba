// Attempts on mma_tma (issue 42), not a level: kernels/cuda/mma_tma.cu with switches that
// benchmarks/kernel_attempts.py times against cuBLAS FP16. With REL = ORD = MINB = 1 and
// CREGS = 232 this is mma_tma's code (the script's control checks that it times like the
// level). The switches:
//   REL   where a consumer frees a stage: 1 after the K step's last mma.sync behind the proxy
//         fence (mma_tma); 2 behind the fence at the start of the last 16-deep step, before
//         the next stage's fragments are loaded (the fence takes the step before's last
//         accumulator as an input so that it is not hoisted; read in the SASS, ptxas still
//         puts MEMBAR.ALL.CTA right behind ldmatrix loads, so this mostly moves the arrival
//         32 mma.sync earlier); 3 after the last mma.sync without the fence (what CUTLASS's
//         register-sourced mainloops do; ptxas may issue the arrival before the last loads
//         of the stage complete, so a race would show as a wrong result under load: the
//         script checks each variant again after a burst).
//   ORD   order of the 32 mma.sync of a 16-deep step: 1 row by row; 2 serpentine (odd rows
//         walk the columns backwards, so consecutive instructions share a B fragment at
//         each row change as well as the A fragment within a row).
//   MINB  persistent blocks per SM (the launch bounds' minimum; the script's grid rule
//         launches MINB x SMs blocks). With 2, each block has half of the register file
//         at launch, so the consumers' setmaxnreg target CREGS must fit: 40 x 128 + CREGS x
//         consumer threads <= 65536 / MINB.
//   CREGS the consumers' setmaxnreg.inc target.
//   SK    stream-K for the last wave (hopper.cuh's gs_work / gs_sk_settle, as wgmma_stream_k):
//         0 off (mma_tma), 1 the last full wave and the remainder, 2 the remainder only.
//         CONSUMERS (consumer warpgroups, each with its own partial-sum slot) must be
//         (BM / WM) x (BN / WN) / 4; the host sizes the workspace by it.
#include "common.cuh"
#include "hopper.cuh"
#include "mma.cuh"

// fence.proxy.async with a register input: not placed before `after` is computed
__device__ __forceinline__ void gs_fence_async_shared_after(float after) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::"f"(after) : "memory");
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GM, int REL, int ORD,
          int MINB, int CREGS, int SK, int CONSUMERS, bool VEC>
__global__ void __launch_bounds__(128 + (BM / WM) * (BN / WN) * 32, MINB)
hgemm_mma_tma_x(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
                const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
                float* __restrict__ C, int tma_c, float* __restrict__ ws, int* __restrict__ flags) {
    constexpr int WARPS_N = BN / WN, CONSUMER_THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MT = WM / 16, NT = WN / 8, KK = BK / 16;
    constexpr int ROW = BK * 2;
    constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;
    static_assert(ROW == 128, "a K step must be one 128-byte swizzle row");
    static_assert(WM % 16 == 0 && WN % 16 == 0, "fragment shape");
    static_assert(REL >= 1 && REL <= 3 && ORD >= 1 && ORD <= 2, "switch values");
    static_assert(KK >= 2 || REL != 2, "REL=2 frees the stage one 16-deep step early");
    static_assert(CONSUMERS * 128 == CONSUMER_THREADS, "CONSUMERS: consumer warpgroups");

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);

    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int tiles = tm * tn, ktiles = GS_CEIL_DIV(K, BK);
    gs_ws_init_barriers<STAGES, CONSUMER_THREADS>(full, empty);
    const GsWork work = gs_work<SK>(tiles, ktiles);

    if (threadIdx.x < 128) {
        gs_setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            gs_ws_produce<BM, BN, BK, STAGES, GM, A_BYTES, STAGE_BYTES>(&tmA, &tmB, smem, full,
                                                                      empty, tm, tn, work);
        return;
    }
    gs_setmaxnreg_inc<CREGS>();
    const int tid = threadIdx.x - 128, warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const int my_tiles = (int)blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int my_dp = (int)blockIdx.x < work.dp_tiles
                          ? (work.dp_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    // K steps this block consumes, all pieces together (SK = 0: my_tiles whole tiles)
    const int total = SK == 0 ? my_tiles * ktiles
                              : my_dp * ktiles + (int)(work.end - work.begin);

    unsigned a_off[KK], b_off[KK];
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
        a_off[kk] = gs_swz<ROW>(wm0 + lane % 16, kk * 2 + lane / 16);
        b_off[kk] = A_BYTES + gs_swz<ROW>(wn0 + (lane / 16) * 8 + lane % 8, kk * 2 + (lane / 8) % 2);
    }
    const unsigned smem_base = gs_smem_addr(smem);
    unsigned a[2][MT][4], b[2][NT / 2][4];
    auto load_frags = [&](int s, int kk, int buf) {
        const unsigned st = smem_base + s * STAGE_BYTES;
#pragma unroll
        for (int i = 0; i < MT; ++i) gs_ldmatrix_x4(a[buf][i], st + a_off[kk] + i * 16 * ROW);
#pragma unroll
        for (int j = 0; j < NT / 2; ++j) gs_ldmatrix_x4(b[buf][j], st + b_off[kk] + j * 16 * ROW);
    };

    int g = 0;  // K steps consumed so far
    // K step g of stage g % STAGES into acc; loads the fragments of step g + 1 (perhaps of
    // the next tile) while this one multiplies, and frees the stage after it
    auto k_step = [&](float (&acc)[MT][NT][4]) {
        const int s = g % STAGES;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            const int cur = kk & 1, nxt = cur ^ 1;
            if (REL == 2 && kk + 1 == KK) {
                // every ldmatrix of stage s was issued in the step before: the fence waits
                // for them, then the stage is free
                gs_fence_async_shared_after(acc[MT - 1][NT - 1][3]);
                gs_mbar_arrive(&empty[s]);
            }
            if (kk + 1 < KK) {
                load_frags(s, kk + 1, nxt);
            } else if (g + 1 < total) {
                const int s1 = (g + 1) % STAGES;
                gs_mbar_wait(&full[s1], ((g + 1) / STAGES) & 1);
                load_frags(s1, 0, nxt);
            }
#pragma unroll
            for (int mi = 0; mi < MT; ++mi)
#pragma unroll
                for (int q = 0; q < NT; ++q) {
                    const int nj = (ORD == 2 && (mi & 1)) ? NT - 1 - q : q;
                    gs_mma_16816(acc[mi][nj], a[cur][mi], b[cur][nj / 2][(nj % 2) * 2],
                                 b[cur][nj / 2][(nj % 2) * 2 + 1]);
                }
            if (kk + 1 == KK && REL != 2) {
                if (REL == 1) gs_fence_async_shared();
                gs_mbar_arrive(&empty[s]);
            }
        }
        ++g;
    };
    auto store = [&](int t, const float (&acc)[MT][NT][4]) {
        int bm, bn;
        gs_group_coords(t, tm, tn, GM, bm, bn);
        const int row0 = bm * BM + wm0 + lane / 4, col0 = bn * BN + wn0 + (lane % 4) * 2;
        gs_store_mma_acc(C, M, N, row0, col0, acc, (N & 1) == 0);
    };

    if (total > 0) {
        gs_mbar_wait(&full[0], 0);
        load_frags(0, 0, 0);
    }
    if constexpr (SK == 0) {
        for (int i = 0; i < my_tiles; ++i) {
            float acc[MT][NT][4] = {};
            for (int kt = 0; kt < ktiles; ++kt) k_step(acc);
            store(blockIdx.x + i * gridDim.x, acc);
        }
    } else {
        constexpr int NREG = MT * NT * 4;
        const int c = tid / 128;
        gs_for_each_unit(work, [&](int t, int k0, int k1) {
            float acc[MT][NT][4] = {};
            for (int kt = k0; kt < k1; ++kt) k_step(acc);
            float(&flat)[NREG] = reinterpret_cast<float(&)[NREG]>(acc);
            if (gs_sk_settle<NREG, CONSUMERS>(flat, ws, flags, work, t, k0, k1, c))
                store(t, acc);
        });
    }
}

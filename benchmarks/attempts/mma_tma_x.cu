// Attempts on mma_tma (issue 42), not a level: kernels/cuda/mma_tma.cu with switches that
// benchmarks/kernel_attempts.py times against cuBLAS FP16. With REL = ORD = MINB = 1,
// CREGS = 232 and OUT16 = 2 (and the level's 3 stages) this is mma_tma's code (the script's
// control checks that it times like the level); with OUT16 = 0 and 4 stages it is the
// level's code before stretch 25, which the variants measured before round 13 keep
// (BEFORE_ROUND_13 in benchmarks/_attempt_variants.py). The switches:
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
// Round 3 (issue 42):
//   WAITAT rows (of MT) of the last 16-deep step's mma.sync issued before the wait on the
//         next stage's "full" barrier and its first ldmatrix loads: 0 before all of them
//         (mma_tma: a late stage stops the warp with 32 mma.sync of this stage unissued);
//         h > 0 issues h x NT of them first, so a late stage is waited on with work queued.
//   WREL  arrivals on "empty": 0 every consumer thread (mma_tma, 256 per stage); 1 one per
//         warp (lane 0, after the warp's last mma.sync of the stage, fence included), the
//         barrier counting warps (8 per stage), as CUTLASS arrives once per warpgroup.
//   PREGS the producer warpgroup's setmaxnreg.dec target (mma_tma 40). A consumer target
//         CREGS of 240 with two consumer warpgroups needs 24 here (24 x 128 + 240 x 256 <=
//         65536).
//   FRAG  the fragments in registers: 1 both operands of the next 16-deep step loaded while
//         this one multiplies (mma_tma, 2 x (MT + NT / 2) x 4 registers); 2 B as in 1, A one
//         row of 16 ahead in a ring of two (the row after the one multiplying), so that a
//         96 x 64 warp tile (192 accumulators) fits 240 registers: 2 x 4 A registers
//         instead of 2 x MT x 4 (40 fragment registers for 96 x 64 against 80). The address
//         of step kk is step 0's XOR kk << 5 (the 128-byte swizzle; stages and the B tile
//         are 1024-aligned), so no offset is kept per step. Offline (NVRTC 13.0) a 192 x 256
//         block of 96 x 64 warp tiles with FRAG 2, CREGS 240, PREGS 24 still spills (64
//         bytes, 18 spill instructions in the K loop): not timed.
// Round 5 (issue 42):
//   OUT16 C's format: 0 FP32 (mma_tma before stretch 25); 1 FP16, as its reference cuBLAS
//         FP16 writes it (the host allocates and checks an FP16 C). Nsight Compute put
//         about 7% of the consumers' time in the FP32 epilogue: at 4096^3 C is 64 MB in
//         FP32, 32 MB in FP16, written at the end of each tile while the tensor pipe waits.
// Round 13 (issue 42, prepared offline in stretch 23):
//   OUT16 2 (mma_tma since stretch 25; its helpers: kernels/cuda/mma_store16.cuh)
//         FP16 C by TMA stores, without waiting for them: each warp writes its 64 x 64
//         tile with 16 stmatrix.x4 (4 words of packed FP16 each; 64 STG.E.64 for FP32,
//         64 STG.E for OUT16 1) into its own 8 KB of shared memory in the 128-byte swizzle
//         the C map reads, and its lane 0 issues two TMA stores (32-row boxes) and goes on
//         to the next tile: the buffer is written again one tile later, after the stores
//         have read it. 64 KB of staging beside STAGES x 48 KB: STAGES 3.
//   OUT16 3 as 2 with 4 KB a warp (STAGES 4 fits): the tile's upper 32 rows staged and
//         stored, then (once that store has read the buffer) the lower 32.
//   (Where the C map cannot be made, N % 8 != 0, OUT16 2 and 3 store as OUT16 1.)
#include "common.cuh"
#include "hopper.cuh"
#include "mma.cuh"
#include "mma_store16.cuh"

// fence.proxy.async with a register input: not placed before `after` is computed
__device__ __forceinline__ void gs_fence_async_shared_after(float after) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::"f"(after) : "memory");
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GM, int REL, int ORD,
          int MINB, int CREGS, int SK, int CONSUMERS, int WAITAT, int WREL, int PREGS, int FRAG,
          int OUT16, bool VEC>
__global__ void __launch_bounds__(128 + (BM / WM) * (BN / WN) * 32, MINB)
hgemm_mma_tma_x(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
                const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
                void* __restrict__ C, int tma_c, float* __restrict__ ws, int* __restrict__ flags) {
    constexpr int WARPS_N = BN / WN, CONSUMER_THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MT = WM / 16, NT = WN / 8, KK = BK / 16;
    constexpr int ROW = BK * 2;
    constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;
    static_assert(ROW == 128, "a K step must be one 128-byte swizzle row");
    static_assert(WM % 16 == 0 && WN % 16 == 0, "fragment shape");
    static_assert(REL >= 1 && REL <= 3 && ORD >= 1 && ORD <= 2, "switch values");
    static_assert(KK >= 2 || REL != 2, "REL=2 frees the stage one 16-deep step early");
    static_assert(CONSUMERS * 128 == CONSUMER_THREADS, "CONSUMERS: consumer warpgroups");
    static_assert(WAITAT >= 0 && WAITAT <= MT && WREL >= 0 && WREL <= 1, "switch values");
    static_assert(FRAG == 1 || (FRAG == 2 && MT % 2 == 0 && ORD == 1 && REL != 2 &&
                                WAITAT < MT),
                  "FRAG 2: rows in pairs, row by row, the stage freed after the step, the "
                  "next stage waited on before the last row");
    static_assert(OUT16 >= 0 && OUT16 <= 3, "switch values");
    static_assert(OUT16 < 2 || (WM == 64 && WN == 64 && SK == 0),
                  "OUT16 2/3: a warp's 64 x 64 tile in two 32-row boxes, whole tiles");
    constexpr int ARRIVALS = WREL ? CONSUMER_THREADS / 32 : CONSUMER_THREADS;
    // OUT16 2/3: a warp's C staging, after the stages (1024-byte aligned: the swizzle)
    constexpr int STG_BYTES = OUT16 == 2 ? 8192 : 4096;

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);

    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int tiles = tm * tn, ktiles = GS_CEIL_DIV(K, BK);
    gs_ws_init_barriers<STAGES, ARRIVALS>(full, empty);
    const GsWork work = gs_work<SK>(tiles, ktiles);

    if (threadIdx.x < 128) {
        gs_setmaxnreg_dec<PREGS>();
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
    // FRAG 1: a[2][MT] (this step's and the next's); FRAG 2: a[2][1], a ring of two rows
    unsigned a[2][FRAG == 1 ? MT : 1][4], b[2][NT / 2][4];
    auto load_frags = [&](int s, int kk, int buf) {
        const unsigned st = smem_base + s * STAGE_BYTES;
        if constexpr (FRAG == 1) {
#pragma unroll
            for (int i = 0; i < MT; ++i) gs_ldmatrix_x4(a[buf][i], st + a_off[kk] + i * 16 * ROW);
        }
#pragma unroll
        for (int j = 0; j < NT / 2; ++j) gs_ldmatrix_x4(b[buf][j], st + b_off[kk] + j * 16 * ROW);
    };
    // FRAG 2's loads: B of step kk, and A row i of step kk into ring slot i % 2
    auto load_b = [&](int s, int kk, int buf) {
        const unsigned st = smem_base + s * STAGE_BYTES;
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            gs_ldmatrix_x4(b[buf][j], (st + b_off[0] + j * 16 * ROW) ^ (unsigned)(kk << 5));
    };
    auto load_a_row = [&](int s, int kk, int i) {
        const unsigned st = smem_base + s * STAGE_BYTES;
        gs_ldmatrix_x4(a[i & 1][0], (st + a_off[0] + i * 16 * ROW) ^ (unsigned)(kk << 5));
    };
    auto release = [&](int s) {
        if (WREL == 0 || lane == 0) {
            if (REL == 1) gs_fence_async_shared();
            gs_mbar_arrive(&empty[s]);
        }
    };

    int g = 0;  // K steps consumed so far
    // K step g of stage g % STAGES into acc; loads the fragments of step g + 1 (perhaps of
    // the next tile) while this one multiplies, and frees the stage after it
    auto k_step = [&](float (&acc)[MT][NT][4]) {
        const int s = g % STAGES;
        const int s1 = (g + 1) % STAGES;
        // the next stage: wait until it is full, then its first B (FRAG 2) or A and B
        // fragments (FRAG 1)
        auto next_stage = [&](int nxt) {
            if (g + 1 < total) {
                gs_mbar_wait(&full[s1], ((g + 1) / STAGES) & 1);
                if constexpr (FRAG == 1) load_frags(s1, 0, nxt);
                else load_b(s1, 0, nxt);
            }
        };
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            const int cur = kk & 1, nxt = cur ^ 1;
            const bool last = kk + 1 == KK;
            if (REL == 2 && last) {
                // every ldmatrix of stage s was issued in the step before: the fence waits
                // for them, then the stage is free
                gs_fence_async_shared_after(acc[MT - 1][NT - 1][3]);
                if (WREL == 0 || lane == 0) gs_mbar_arrive(&empty[s]);
            }
            if (!last) {
                if constexpr (FRAG == 1) load_frags(s, kk + 1, nxt);
                else load_b(s, kk + 1, nxt);
            } else if (WAITAT == 0) {
                next_stage(nxt);
            }
#pragma unroll
            for (int mi = 0; mi < MT; ++mi) {
                if (last && WAITAT > 0 && mi == WAITAT) next_stage(nxt);
                if (FRAG == 2) {
                    // the next row of A: of this step, or row 0 of the next step
                    if (mi + 1 < MT) load_a_row(s, kk, mi + 1);
                    else if (!last) load_a_row(s, kk + 1, 0);
                    else if (g + 1 < total) load_a_row(s1, 0, 0);
                }
#pragma unroll
                for (int q = 0; q < NT; ++q) {
                    const int nj = (ORD == 2 && (mi & 1)) ? NT - 1 - q : q;
                    if constexpr (FRAG == 1) {
                        gs_mma_16816(acc[mi][nj], a[cur][mi], b[cur][nj / 2][(nj % 2) * 2],
                                     b[cur][nj / 2][(nj % 2) * 2 + 1]);
                    } else {
                        gs_mma_16816(acc[mi][nj], a[mi & 1][0], b[cur][nj / 2][(nj % 2) * 2],
                                     b[cur][nj / 2][(nj % 2) * 2 + 1]);
                    }
                }
            }
            if (last && WAITAT == MT) next_stage(nxt);
            if (last && REL != 2) release(s);
        }
        ++g;
    };
    auto store = [&](int t, const float (&acc)[MT][NT][4]) {
        int bm, bn;
        gs_group_coords(t, tm, tn, GM, bm, bn);
        const int row0 = bm * BM + wm0 + lane / 4, col0 = bn * BN + wn0 + (lane % 4) * 2;
        if constexpr (OUT16 >= 2) {
            if (tma_c) {
                const unsigned char* stg_p = smem + STAGES * STAGE_BYTES + warp * STG_BYTES;
                const unsigned stg = gs_smem_addr(stg_p);
                const int r0 = bm * BM + wm0, c0 = bn * BN + wn0;
#pragma unroll
                for (int h = 0; h < (OUT16 == 2 ? 1 : 2); ++h) {
                    // the buffer's last stores have read it (a tile ago, or the half above)
                    if (lane == 0) gs_bulk_wait_read<0>();
                    __syncwarp();
                    gs_stage_acc_f16<OUT16 == 2 ? 4 : 2>(stg, OUT16 == 2 ? 0 : 2 * h, lane, acc);
                    gs_fence_async_shared();  // this thread's stores, for the copy engine
                    __syncwarp();
                    if (lane == 0) {
#pragma unroll
                        for (int b = 0; b < (OUT16 == 2 ? 2 : 1); ++b)
                            gs_tma_store_2d(&tmC, stg_p + 4096 * b, c0, r0 + 32 * (h + b));
                        gs_bulk_commit();
                    }
                }
                return;
            }
        }
        if constexpr (OUT16)
            gs_store_acc_f16(static_cast<unsigned short*>(C), M, N, row0, col0, acc);
        else
            gs_store_mma_acc(static_cast<float*>(C), M, N, row0, col0, acc, (N & 1) == 0);
    };

    if (total > 0) {
        gs_mbar_wait(&full[0], 0);
        if constexpr (FRAG == 1) {
            load_frags(0, 0, 0);
        } else {
            load_b(0, 0, 0);
            load_a_row(0, 0, 0);
        }
    }
    if constexpr (SK == 0) {
        for (int i = 0; i < my_tiles; ++i) {
            float acc[MT][NT][4] = {};
            for (int kt = 0; kt < ktiles; ++kt) k_step(acc);
            store(blockIdx.x + i * gridDim.x, acc);
        }
        // OUT16 2/3: the block's shared memory outlives the reads of its last stores
        if constexpr (OUT16 >= 2)
            if (lane == 0) gs_bulk_wait_read<0>();
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

// Attempts on fp8_deep (issue 42), not a level: kernels/cuda/fp8_deep.cu's kernel as round 6
// left it, with two switches, timed by benchmarks/kernel_attempts.py against cuBLASLt FP8.
// With ORDER = STSM = 0 it was the level's kernel until stretch 18, when the level's row
// scales of A came by TMA (SCT 1: a template parameter, taken and unused here, and one more
// kernel argument, the scales' map, which this kernel does not take: the launch passes it
// and it is ignored). The level's file is included for its helpers; its own template is not
// instantiated here.
//   ORDER 1: the two consumer warpgroups issue their wgmma groups in turn (warpgroup 0's
//         sub-tile, warpgroup 1's, warpgroup 0's next, ...), each waiting on a named
//         barrier for the other's last issue. Nsight Compute put 39% of fp8_deep's samples
//         on the wgmma wait (DeepGEMM 34%) with the same instructions: if both groups are
//         issued at once, the Tensor Cores interleave them and both end late, and both
//         warpgroups then promote while the Tensor Cores idle; issued in turn, one group
//         runs while the other warpgroup promotes.
//   STSM 1: the epilogue writes C's BF16 pairs to shared memory with stmatrix (four 8 x 8
//         matrices per instruction: 16 a thread and tile at BN = 128) in place of 64
//         32-bit st.shared a thread (DeepGEMM's form).
#include "fp8_deep.cu"

// bar.arrive: count this warp on named barrier `id` without waiting
__device__ __forceinline__ void gs_dx_bar_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// C's 128 x BN BF16 results of a warpgroup into its buffer at `cb` by stmatrix, in the
// layout the level's st.shared writes (SWZ_C: 64 x 64 chunks of 128-byte rows, 16-byte unit
// j at j ^ (row % 8); else plain rows of BN columns). Lane i names row i % 8 of matrix i / 8;
// matrices 0 and 1: rows 0-7 and 8-15 of the warp's 16 at 8-column group g, 2 and 3 the
// same at g + 1; register m holds the thread's pair of matrix m.
template <int BN, bool SWZ_C>
__device__ __forceinline__ void gs_dx_stage_c_stmatrix(float (&acc)[2][BN / 2], unsigned cb,
                                                      int t128) {
    constexpr int GROUPS = BN / 8;
    const int lane = t128 % 32, wrow = (t128 / 32) * 16;
    const int rr = wrow + ((lane / 8) % 2) * 8 + lane % 8;  // the row this lane addresses
    const int dg = lane / 16;                               // 0: group g, 1: group g + 1
#pragma unroll
    for (int w = 0; w < 2; ++w) {
#pragma unroll
        for (int g = 0; g < GROUPS; g += 2) {
            const bool pair = g + 1 < GROUPS;
            const int gg = pair ? g + dg : g;
            unsigned addr;
            if constexpr (SWZ_C) {
                const int chunk = w * (BN / 64) + gg / 8, j = gg % 8;
                addr = cb + chunk * 8192 + rr * 128 + ((j ^ (rr & 7)) << 4);
            } else {
                addr = cb + (w * 64 + rr) * BN * 2 + 16 * gg;
            }
            const unsigned r0 = gs_pack_bf16x2(acc[w][4 * g + 0], acc[w][4 * g + 1]);
            const unsigned r1 = gs_pack_bf16x2(acc[w][4 * g + 2], acc[w][4 * g + 3]);
            if (pair) {
                const unsigned r2 = gs_pack_bf16x2(acc[w][4 * g + 4], acc[w][4 * g + 5]);
                const unsigned r3 = gs_pack_bf16x2(acc[w][4 * g + 6], acc[w][4 * g + 7]);
                asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                             ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
            } else {  // an odd last group: two matrices, lanes 0-15 address them
                asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n"
                             ::"r"(addr), "r"(r0), "r"(r1) : "memory");
            }
        }
    }
}

template <int BM, int BN, int BK, int STAGES, int CL, int GW, int WREL, int SCT, int ORDER,
          int STSM, bool VEC>  // SCT: the level's since stretch 18, unused here (the lanes copy)
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(384, 1)
fp8gemm_deep_x(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
             const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
             unsigned short* __restrict__ C, int tma_c, float* __restrict__ ws,
             int* __restrict__ flags, const float* __restrict__ scale_a,
             const float* __restrict__ scale_b) {
    static_assert(BM == 256 && BK == 128, "two warpgroups of two 64-row sub-tiles; K blocks of 128");
    static_assert(BN % 8 == 0 && BN >= 64 && BN <= 128, "one wgmma.m64nBNk32 per sub-tile");
    static_assert(CL == 1 || CL == 2, "clusters of one or two CTAs");
    constexpr int A_BYTES = BM * BK, HALF_A = A_BYTES / 2, B_BYTES = BN * BK;
    constexpr int SC_FLOATS = 272;  // 256 row scales of A, 2 block scales of Bt, padding
    constexpr int C_BYTES = 2 * 64 * BN * 2;  // a warpgroup's two sub-tiles, BF16
    constexpr bool UNIFORM = 128 % BN == 0;  // a tile never crosses a scale block of Bt
    constexpr bool SWZ_C = BN % 64 == 0;     // C in 64 x 64 boxes, 128-byte swizzle
    constexpr int R = BN / 2;                // registers of a sub-tile
    // registers per thread after setmaxnreg: 128 x 56 + 256 x 224 = 64512 of 65536 (the
    // producer's unrolled ring of stages spills at 40)
    constexpr int PRODUCER_REGS = 56, CONSUMER_REGS = 224;

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);
    unsigned char* const a_base = smem;
    unsigned char* const b_base = smem + STAGES * A_BYTES;
    unsigned char* const c_base = b_base + STAGES * B_BYTES;
    float* const sc_base = reinterpret_cast<float*>(c_base + 2 * C_BYTES);

    const int wg = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int ksteps = K / BK, nb_count = GS_CEIL_DIV(N, 128);
    const unsigned rank = CL == 2 ? gs_dp_sreg_cluster_rank() : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gs_mbar_init(&full[s], 1 + 32);  // the TMA bytes' arrival, 32 lanes' scale copies
            gs_mbar_init(&empty[s], (WREL == 2 ? 8 : 2) * CL);  // each consumer warp (WREL 2) or warpgroup of the cluster
        }
        gs_mbar_fence_init();
    }
    if constexpr (CL == 2)
        gs_dp_cluster_sync();  // the peer's barriers exist before any multicast reaches them
    else
        __syncthreads();
    GsDpSchedule<CL> sched{tm * tn};
    // Each tile's K blocks start at stage 0 and go round the ring in rounds of STAGES (the
    // last round's stages past K are passed through empty), so that the stage of every K
    // block is a compile-time constant in the unrolled loops below: its addresses are
    // constants, and the compiler may move the next stage's barrier probe and scale loads
    // up into the current promotion. `uses`: the rounds before, the barriers' parity.
    const int rounds = ksteps / STAGES, tail = ksteps % STAGES;

    if (wg == 0) {
        // ------------------------------------------------------------ producer (warp 0)
        gs_setmaxnreg_dec<PRODUCER_REGS>();
        const int lane = threadIdx.x % 32;
        if (threadIdx.x < 32) {
            if (lane == 0) {
                gs_tma_prefetch_map(&tmA);
                gs_tma_prefetch_map(&tmB);
            }
            GS_TRACE_LANE(lane == 0);
            GS_TRACE(LANE_START, -1, 0);
            int uses = 0, t;
            bool peer;
            while (sched.next(t, peer)) {
                int bm, bn;
                gs_dp_tile(t, tm, tn, GW, bm, bn);
                bool multicast = false;
                if (CL == 2 && peer) {
                    int pm, pn;
                    gs_dp_tile(t ^ 1, tm, tn, GW, pm, pn);
                    multicast = pm == bm;
                }
                // the lane's scale sources: rows bm * BM + lane + 32 j of A (K block ks at
                // + ks * M), and lanes 0 and 1 the tile's two scale blocks of Bt
                const float* pa = scale_a + bm * BM + lane;
                unsigned rows_ok = 0;
#pragma unroll
                for (int j = 0; j < 8; ++j) rows_ok |= (bm * BM + lane + 32 * j < M) << j;
                const int nb = bn * BN / 128 + lane;
                const bool b_ok = lane < 2 && nb < nb_count;
                const float* pb = scale_b + (long long)(b_ok ? nb : 0) * ksteps;
                auto fill = [&](int s, int ks) {
                    gs_mbar_wait(&empty[s], (uses & 1) ^ 1);
                    unsigned char* a_dst = a_base + s * A_BYTES;
                    if (lane == 0) {
                        gs_mbar_arrive_expect_tx(&full[s], A_BYTES + B_BYTES);
                        if (multicast) {
                            gs_dp_tma_load_multicast(a_dst + rank * HALF_A, &tmA, &full[s],
                                                     ks * BK, bm * BM + rank * 128, 0x3);
                        } else {
                            gs_tma_load_2d(a_dst, &tmA, &full[s], ks * BK, bm * BM);
                            gs_tma_load_2d(a_dst + HALF_A, &tmA, &full[s], ks * BK, bm * BM + 128);
                        }
                        gs_tma_load_2d(b_base + s * B_BYTES, &tmB, &full[s], ks * BK, bn * BN);
                    }
                    GS_TRACE_DO(unsigned gs_issued_at = 0; if (gs_tr.samples(ks)) gs_issued_at = gs_tr.clock_lo();)  // the loads' issue, in sampled steps only; recorded after the scales' arrival, which the record held up
                    float* sc = sc_base + s * SC_FLOATS + lane;
                    const float* src = pa + (long long)ks * M;
#pragma unroll
                    for (int j = 0; j < 8; ++j) {
                        const bool ok = (rows_ok >> j) & 1;
                        gs_cp_async4(sc + 32 * j, ok ? src + 32 * j : scale_a, ok);
                    }
                    if (lane < 2) gs_cp_async4(sc + 256, b_ok ? pb + ks : scale_b, b_ok);
                    gs_dp_cp_async_arrive(&full[s]);
                    GS_TRACE_DO(gs_tr.put_p(GS_TR_LOAD_ISSUED, t, ks, true, gs_issued_at);)  // the warp's writer (lane 0) stores; a branch the same in every lane
                };
                auto pass = [&](int s) {  // a stage past K: no data, every arrival
                    gs_mbar_wait(&empty[s], (uses & 1) ^ 1);
                    gs_mbar_arrive(&full[s]);
                    if (lane == 0) gs_mbar_arrive(&full[s]);
                };
                for (int r = 0; r < rounds; ++r, ++uses) {
#pragma unroll
                    for (int s = 0; s < STAGES; ++s) fill(s, r * STAGES + s);
                }
                if (tail) {
#pragma unroll
                    for (int s = 0; s < STAGES; ++s) {
                        if (s < tail)
                            fill(s, rounds * STAGES + s);
                        else
                            pass(s);
                    }
                    ++uses;
                }
            }
            GS_TRACE(LANE_END, -1, 0);
        }
    } else {
        // ------------------------------------------------------------ consumers
        gs_setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;  // wg came from a shuffle: warp-uniform, so are the descriptors
        const int t128 = threadIdx.x % 128;
        const bool leader = t128 == 0;
        const bool releaser = WREL == 2 ? t128 % 32 == 0 : leader;  // who arrives on "empty"
        const int lr = (t128 / 32) * 16 + (t128 % 32) / 4;  // rows lr, lr + 8 of a sub-tile
        unsigned char* const cbuf = c_base + c * C_BYTES;
        float acc[2][R], tmp[R];
        bool my_turn_known = c == 0;  // ORDER 1: warpgroup 0's first group waits for no one
        int uses = 0, t;
        bool peer;
        GS_TRACE_LANE(leader);
        GS_TRACE(LANE_START, -1, 0);
        while (sched.next(t, peer)) {
            int bm, bn;
            gs_dp_tile(t, tm, tn, GW, bm, bn);
            GS_TRACE_C(TILE_BEGIN, t, 0);  // tile events in the K-stage form (trace.cuh, put_c)
            GS_TRACE_DO(const int gs_uses0 = uses;)
            GS_TRACE_DO(unsigned gs_prev_ready = 0, gs_prev_done = 0; int gs_prev_k = -1;)  // the last K step's clocks, recorded while the next step's first wgmma group runs
            const int n0 = bn * BN;
            // 8-column groups of the tile in its first scale block of Bt
            const int first_groups = UNIFORM ? R : min(BN, 128 - n0 % 128) / 8;
#pragma unroll
            for (int w = 0; w < 2; ++w)
#pragma unroll
                for (int i = 0; i < R; ++i) acc[w][i] = 0.f;
            auto release = [&](int s) {  // the stage is free for both CTAs' producers
                if (!releaser) return;
                gs_mbar_arrive(&empty[s]);
                if constexpr (CL == 2) {
                    if (peer)
                        gs_dp_arrive_remote(&empty[s], rank ^ 1);
                    else  // the last, lone tile: the peer has stopped
                        gs_mbar_arrive(&empty[s]);
                }
            };
            auto kblock = [&](int s) {
                gs_mbar_wait(&full[s], uses & 1);
                GS_TRACE_DO(const int gs_k = (uses - gs_uses0) * STAGES + s;)
                GS_TRACE_DO(const bool gs_sampled = gs_tr.samples(gs_k);)
                GS_TRACE_DO(unsigned gs_ready_at = 0; if (gs_sampled) gs_ready_at = gs_tr.clock_lo();)  // a clock read in the sampled steps only (a uniform branch)
                const unsigned sc = gs_smem_addr(sc_base + s * SC_FLOATS);
                float sa[2][2];
#pragma unroll
                for (int w = 0; w < 2; ++w)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        sa[w][h] = gs_dp_lds(sc + 4 * (c * 128 + w * 64 + lr + 8 * h));
                const float sb0 = gs_dp_lds(sc + 4 * 256);
                const float sb1 = UNIFORM ? sb0 : gs_dp_lds(sc + 4 * 257);
                const unsigned long long db = gs_wgmma_desc_sw128(b_base + s * B_BYTES);
#pragma unroll
                for (int w = 0; w < 2; ++w) {
                    const unsigned long long da =
                        gs_wgmma_desc_sw128(a_base + s * A_BYTES + (c * 128 + w * 64) * BK);
                    gs_fence_regs(tmp);
                    if constexpr (ORDER == 1) {  // wait for the other warpgroup's last issue
                        if (!my_turn_known) gs_named_barrier(3 + c, 256);
                        my_turn_known = false;
                    }
                    gs_wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk)  // k32 steps: 32 bytes = 2 address units
                        GsDpWgmma<BN>::run(tmp, da + 2 * kk, db + 2 * kk, kk > 0 ? 1 : 0);
                    gs_wgmma_commit();
                    if constexpr (ORDER == 1) gs_dx_bar_arrive(3 + (c ^ 1), 256);  // its turn
                    GS_TRACE_DO(if (w == 0 && gs_prev_k >= 0) { gs_tr.put_p(GS_TR_DATA_READY, t, gs_prev_k, true, gs_prev_ready); gs_tr.put_p(GS_TR_MMA_DONE, t, gs_prev_k, true, gs_prev_done); })  // the last step's records, in the shadow of this group's products
                    gs_wgmma_wait<0>();
                    gs_fence_regs(tmp);  // tmp is read only after the wait
                    if (w == 1) release(s);
                    const float s00 = sa[w][0] * sb0, s10 = sa[w][1] * sb0;
                    const float s01 = sa[w][0] * sb1, s11 = sa[w][1] * sb1;
#pragma unroll
                    for (int g = 0; g < R / 4; ++g) {
                        const bool first = UNIFORM || g < first_groups;
                        const float r0 = first ? s00 : s01, r1 = first ? s10 : s11;
                        acc[w][4 * g + 0] += tmp[4 * g + 0] * r0;
                        acc[w][4 * g + 1] += tmp[4 * g + 1] * r0;
                        acc[w][4 * g + 2] += tmp[4 * g + 2] * r1;
                        acc[w][4 * g + 3] += tmp[4 * g + 3] * r1;
                    }
                }
                GS_TRACE_DO(gs_prev_k = -1; if (gs_sampled) { gs_prev_ready = gs_ready_at; gs_prev_done = gs_tr.clock_lo(); gs_prev_k = gs_k; })  // MMA_DONE's time; both written in the next step
            };
            for (int r = 0; r < rounds; ++r, ++uses) {
#pragma unroll
                for (int s = 0; s < STAGES; ++s) kblock(s);
            }
            if (tail) {
#pragma unroll
                for (int s = 0; s < STAGES; ++s) {
                    if (s < tail) {
                        kblock(s);
                    } else {  // a stage past K: passed on
                        gs_mbar_wait(&full[s], uses & 1);
                        release(s);
                    }
                }
                ++uses;
            }
            // ---------------------------------------------------------- epilogue
            GS_TRACE_DO(if (gs_prev_k >= 0) { gs_tr.put_p(GS_TR_DATA_READY, t, gs_prev_k, true, gs_prev_ready); gs_tr.put_p(GS_TR_MMA_DONE, t, gs_prev_k, true, gs_prev_done); })  // the tile's last step
            const int row0 = bm * BM + c * 128;
            if (!tma_c) {
                gs_store_acc_bf16(acc[0], C, M, N, row0, n0);
                gs_store_acc_bf16(acc[1], C, M, N, row0 + 64, n0);
                GS_TRACE_C(TILE_END, t, ksteps);
                continue;
            }
            if (leader) gs_bulk_wait_read<0>();  // the last tile's stores have read the buffer
            gs_named_barrier(1 + c, 128);
            const unsigned cb = gs_smem_addr(cbuf);
            if constexpr (STSM == 1) {
                gs_dx_stage_c_stmatrix<BN, SWZ_C>(acc, cb, t128);
            } else {
#pragma unroll
                for (int w = 0; w < 2; ++w)
#pragma unroll
                    for (int g = 0; g < R / 4; ++g)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int rr = lr + 8 * h;
                            unsigned addr;
                            if constexpr (SWZ_C) {  // 64 x 64 chunks, 16-byte unit j at j ^ (row % 8)
                                const int chunk = w * (BN / 64) + g / 8, j = g % 8;
                                addr = cb + chunk * 8192 + rr * 128 + ((j ^ (rr & 7)) << 4) +
                                       4 * (t128 % 4);
                            } else {  // plain rows of BN columns
                                addr = cb + (w * 64 + rr) * BN * 2 + (8 * g + 2 * (t128 % 4)) * 2;
                            }
                            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr),
                                         "r"(gs_pack_bf16x2(acc[w][4 * g + 2 * h],
                                                            acc[w][4 * g + 2 * h + 1]))
                                         : "memory");
                        }
            }
            gs_fence_async_shared();
            gs_named_barrier(1 + c, 128);
            if (leader) {
#pragma unroll
                for (int w = 0; w < 2; ++w) {
                    if constexpr (SWZ_C) {
#pragma unroll
                        for (int ch = 0; ch < BN / 64; ++ch)
                            gs_tma_store_2d(&tmC, cbuf + (w * (BN / 64) + ch) * 8192,
                                            n0 + ch * 64, row0 + w * 64);
                    } else {
                        gs_tma_store_2d(&tmC, cbuf + w * 64 * BN * 2, n0, row0 + w * 64);
                    }
                }
                gs_bulk_commit();
            }
            GS_TRACE_C(TILE_END, t, ksteps);
        }
        if (tma_c && leader) gs_bulk_wait<0>();
        if constexpr (ORDER == 1) {  // warpgroup 1's last arrival is waited for: no barrier left half full
            if (c == 0 && !my_turn_known) gs_named_barrier(3, 256);
        }
        GS_TRACE(LANE_END, -1, 0);
    }
    if constexpr (CL == 2) gs_dp_cluster_sync();  // no CTA leaves while its peer may signal it
}

// Level "fp8_block_scaled" (sm_90a): FP8 E4M3 inputs with block scales in the style of
// DeepGEMM. A (M x K) and Bt (N x K) hold E4M3 bytes, both K-major (wgmma reads 8-bit
// operands only so). Scales, FP32: scale_a[kb * M + m] for row m and the 128-wide K block
// kb (1 x 128 blocks, stored block-major so a warp's rows are adjacent), and
// scale_b[nb * KB + kb] for the 128 x 128 block (nb, kb) of Bt; the value of an element is
// its E4M3 value times its block's scale. C (M x N) is written as BF16.
//
// The pipeline is the one of wgmma_tma (persistent blocks, a TMA producer warpgroup, a
// ring of STAGES stages on full/empty mbarriers, consumer warpgroups of 64 rows). The
// difference is the promotion: the tensor cores accumulate one 128-deep K block (four
// wgmma.m64n128k32 per 128 columns) into temporary FP32 registers with a fresh start, and
// the consumer then adds them, times scale_a of the row and scale_b of the block, into
// its FP32 accumulators. Every 128 of K the sum is rescaled and moved out of the tensor
// cores' (limited-precision) accumulation, which is what keeps FP8 GEMMs accurate over long
// K. A tile of BN = 256 is done as two halves of 128 (one B scale each), so the temporary
// registers hold 64 values, not 128; a tile whose second half lies wholly past N (the
// last tile column when N % 256 is 1..128) issues only its first (SKIP = 1).
// BN = 192 (the host picks it per shape where its waves cost less: N = 2112 = 11 x 192):
// one part of four wgmma.m64n192k32, 96 temporaries. Such a tile starts 0 or 64 columns
// into a 128-column scale block of Bt, so it spans two; each group of 8 columns takes the
// scale of its block, fixed at compile time by a copy of the K loop per start (OFF).
// SCL = 1: the consumers do not load the scales where they need them (an L2 round trip
// the promotion waited for: the top stall of the SCL = 0 loop under ncu); while a K
// block's first half runs, they copy the next block's scales into shared memory with
// cp.async and read this block's from there (the two-temporaries path, KPIPE = 1 with
// BN = 128, keeps the plain loads).
// The epilogue is wgmma_tma's (EPI = 1: through shared memory and TMA stores).
// SK = 2 (level "fp8_stream_k"): the last wave shared out by K blocks, as wgmma_stream_k;
// the partial sums are the promoted (scaled) FP32 accumulators.
// Shapes: K % 128 == 0 (one scale per 128 of K; the host refuses other K); M and N are
// free (TMA zero-fills, the stores are guarded).
#include "common.cuh"
#include "hopper.cuh"
#include "trace.cuh"

__device__ __forceinline__ float gs_lds_f32(unsigned addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

// One 128-deep K block of a consumer's 64 x PW part of the tile into tmp (fresh
// accumulation): PW = 128, a half of a 256-wide tile; PW = 192, a whole 192-wide tile.
template <int PW>
__device__ __forceinline__ void gs_fp8_issue(float (&tmp)[PW / 2], const unsigned char* stage,
                                             int a_off, int b_off) {
    static_assert(PW == 128 || PW == 192, "one wgmma shape per part width");
    const unsigned long long da = gs_wgmma_desc_sw128(stage + a_off);
    const unsigned long long db = gs_wgmma_desc_sw128(stage + b_off);
    gs_fence_regs(tmp);
    gs_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {  // k32 steps: 32 bytes = 2 address units
        if constexpr (PW == 128)
            gs_wgmma_e4m3_n128(tmp, da + 2 * kk, db + 2 * kk, kk > 0 ? 1 : 0);
        else
            gs_wgmma_e4m3_n192(tmp, da + 2 * kk, db + 2 * kk, kk > 0 ? 1 : 0);
    }
    gs_wgmma_commit();
}

// acc += tmp * its scale: the row's (rows r0 and r0 + 8 of the fragment layout: s0, s1)
// times the Bt block's that holds the column. The part's first column is col columns past
// the 128-column block boundary before the tile; register i holds columns 8 (i / 4) + ..,
// so block b = (col + 8 (i / 4)) / 128 of the NB the tile spans. col is a compile-time
// constant at every call (unrolled loops, template arguments), so b is too: s0 and s1
// stay in registers.
template <int R, int NB>
__device__ __forceinline__ void gs_fp8_promote(float* acc, float (&tmp)[R], const float (&s0)[NB],
                                               const float (&s1)[NB], int col) {
    gs_fence_regs(tmp);
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int b = (col + 8 * (i / 4)) / 128;
        acc[i] += tmp[i] * ((i & 2) ? s1[b] : s0[b]);
    }
}

// One unit's K blocks [k0, k1), one at a time: issue a part, wait, promote it; the stage
// is freed after the last part. LIVE of the tile's parts are issued: a tile whose last
// half lies wholly past N (N = 2112 = 8 x 256 + 64: the last tile column) does half the
// work. LIVE and OFF (the tile's first column % 128) are template arguments, not runtime
// values, so that each copy of the loop is straight-line code (a runtime test around a
// wgmma group cost ~5% everywhere).
template <int PW, int NB, int OFF, int LIVE, int SCL, class Scale, class Wait, class Stage,
          class Release, class Fetched, class FetchNext>
__device__ __forceinline__ void gs_fp8_blocks(float* acc, float (&tmp)[PW / 2], int& it, int k0,
                                              int k1, int a_off, int b_off, Scale scale,
                                              Wait wait_full, Stage stage_of, Release release,
                                              Fetched fetched, FetchNext fetch_next) {
    // the scale blocks the issued parts use: one per half, or the NB a whole part spans
    constexpr int USED = PW == 128 ? LIVE : NB;
    for (int ks = k0; ks < k1; ++ks, ++it) {
        float s0[NB], s1[NB];
        if (!SCL) {
#pragma unroll
            for (int b = 0; b < USED; ++b) scale(ks, b, s0[b], s1[b]);
        }
        wait_full(it);
#pragma unroll
        for (int h = 0; h < LIVE; ++h) {
            gs_fp8_issue<PW>(tmp, stage_of(it), a_off, b_off + h * PW * 128);  // PW rows of Bt
            if (SCL && h == 0) {  // while the first part runs: this block's scales,
                fetched(it, s0, s1);  // and the copies of the next's
                fetch_next(ks, it);
            }
            gs_wgmma_wait<0>();
            if (h == LIVE - 1) release(it);
            gs_fp8_promote(acc + h * PW / 2, tmp, s0, s1, OFF + h * PW);
        }
    }
}

template <int BM, int BN, int BK, int STAGES, int CONSUMERS, int GM, int KPIPE, int EPI,
          int SK, int SCL, int SKIP, bool VEC>
__global__ void __launch_bounds__((CONSUMERS + 1) * 128, 1)
fp8gemm_block_scaled(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
                     const __grid_constant__ GsTensorMap tmB,
                     const __grid_constant__ GsTensorMap tmC, unsigned short* __restrict__ C,
                     int tma_c, float* __restrict__ ws, int* __restrict__ flags,
                     const float* __restrict__ scale_a,
                     const float* __restrict__ scale_b) {
    static_assert(BK == 128, "one K step is one 128-wide scale block (and one 128-byte row)");
    static_assert(BM == 64 * CONSUMERS, "each consumer warpgroup owns 64 rows");
    static_assert(BN % 128 == 0 || BN == 192, "halves of 128 columns, or one 192-wide part");
    constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK;
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr int PW = BN % 128 == 0 ? 128 : BN, NP = BN / PW;  // parts of PW columns
    // Bt scale blocks a tile spans: a tile of BN = 192 starts 0 or 64 columns into one
    constexpr int NB = BN % 128 == 0 ? BN / 128 : (BN + 64 + 127) / 128;

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);

    const int wg = threadIdx.x / 128;
    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int tiles = tm * tn, ksteps = K / BK;
    gs_ws_init_barriers<STAGES, CONSUMERS>(full, empty);
    const GsWork work = gs_work<SK>(tiles, ksteps);

    if (wg == 0) {
        // ---------------------------------------------------------------- producer
        gs_setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            gs_ws_produce<BM, BN, BK, STAGES, GM, A_BYTES, STAGE_BYTES>(&tmA, &tmB, smem, full,
                                                                      empty, tm, tn, work);
    } else {
        gs_setmaxnreg_inc<232>();
        const int c = wg - 1;
        const int t128 = threadIdx.x % 128;
        const bool leader = t128 == 0;
        const int nb_count = GS_CEIL_DIV(N, 128);
        float* sc = reinterpret_cast<float*>(smem + STAGES * STAGE_BYTES + EPI * CONSUMERS * 16384) +
                    c * 2 * (64 + NB);  // SCL: two buffers of scales per consumer
        float acc[BN / 2];
        float tmp0[PW / 2], tmp1[64];
        int it = 0;
        GS_TRACE_LANE(leader);
        GS_TRACE(LANE_START, -1, 0);
        gs_for_each_unit(work, [&](int t, int k0, int k1) {
            int bm, bn;
            gs_group_coords(t, tm, tn, GM, bm, bn);
            GS_TRACE_C(TILE_BEGIN, t, k0);  // tile events in the K-stage form (trace.cuh, put_c)
            GS_TRACE_DO(const int gs_it0 = it;)  // the piece's first stage use: K step k0
            const int lr = (t128 / 32) * 16 + (t128 % 32) / 4;  // rows lr, lr + 8 of 64
            const int r0 = bm * BM + c * 64 + lr;
            const bool in0 = r0 < M, in1 = r0 + 8 < M;
            // scale of row r0 (+8) times the B block's scale, for K block ks and the tile's
            // block b
            auto scale = [&](int ks, int b, float& s0, float& s1) {
                const int nb = bn * BN / 128 + b;
                const float sb = nb < nb_count ? __ldg(scale_b + (long long)nb * ksteps + ks) : 0.f;
                s0 = in0 ? __ldg(scale_a + (long long)ks * M + r0) * sb : 0.f;
                s1 = in1 ? __ldg(scale_a + (long long)ks * M + r0 + 8) * sb : 0.f;
            };
            // SCL = 1: the scales of K block ks + 1 are copied (cp.async, no registers held)
            // into one of two shared buffers of the warpgroup while block ks runs, so
            // they are there, not an L2 round trip away, when block ks + 1 is promoted
            // (loaded by the consumers themselves, SCL = 0, the promotion waited for them).
            // Buffer it & 1: 64 row scales of A, then the NB block scales of Bt.
            // The copies of the next piece's first block are issued in this piece's last.
            auto fetch = [&](int tile, int ks, int i) {
                int fm, fn;
                gs_group_coords(tile, tm, tn, GM, fm, fn);
                const int r = fm * BM + c * 64 + t128, nb = fn * BN / 128 + t128 - 64;
                const bool row = t128 < 64, valid = row ? r < M : nb < nb_count;
                const float* src = !valid ? scale_a
                                   : row  ? scale_a + (long long)ks * M + r
                                          : scale_b + (long long)nb * ksteps + ks;
                if (t128 < 64 + NB) gs_cp_async4(sc + (i & 1) * (64 + NB) + t128, src, valid);
                gs_cp_async_commit();
            };
            auto fetched = [&](int i, float (&s0)[NB], float (&s1)[NB]) {
                gs_cp_async_wait<0>();
                gs_named_barrier(5 + c, 128);  // every thread's copies of buffer i & 1 landed
                // ld.shared: sc came from integer arithmetic (gs_align_1024), so plain C++
                // loads would compile to generic LDs
                const unsigned d = gs_smem_addr(sc + (i & 1) * (64 + NB));
                const float a0 = gs_lds_f32(d + 4 * lr), a1 = gs_lds_f32(d + 4 * (lr + 8));
#pragma unroll
                for (int b = 0; b < NB; ++b) {
                    const float sb = gs_lds_f32(d + 4 * (64 + b));
                    s0[b] = a0 * sb;
                    s1[b] = a1 * sb;
                }
            };
            auto stage_of = [&](int i) { return smem + (i % STAGES) * STAGE_BYTES; };
            auto wait_full = [&](int i) { gs_mbar_wait(&full[i % STAGES], (i / STAGES) & 1); };
            auto release = [&](int i) { if (leader) gs_mbar_arrive(&empty[i % STAGES]); };
            GS_TRACE_DO(auto gs_wait_full = [&](int i) { wait_full(i); gs_tr.put_p(GS_TR_DATA_READY, t, k0 + i - gs_it0, false, 0u); };)  // stage use i is K step k0 + i - gs_it0
            GS_TRACE_DO(auto gs_release = [&](int i) { release(i); gs_tr.put_p(GS_TR_MMA_DONE, t, k0 + i - gs_it0, false, 0u); };)
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
            if constexpr (KPIPE == 0 || BN != 128) {
                GS_TRACE_DO(auto& wait_full = gs_wait_full; auto& release = gs_release;)  // the trace build's, in this scope
                if (SCL && it == 0) fetch(t, k0, it);
                auto fetch_next = [&](int ks, int i) {
                    int nt = t, nk0 = ks + 1;
                    if (ks + 1 < k1 || gs_next_unit(work, t, k1, nt, nk0)) fetch(nt, nk0, i + 1);
                };
                const int a_off = c * 64 * BK;
                if constexpr (BN % 128 != 0) {  // one part; its scale blocks by OFF
                    if ((bn * BN) % 128 == 0)
                        gs_fp8_blocks<PW, NB, 0, 1, SCL>(acc, tmp0, it, k0, k1, a_off, A_BYTES,
                                                         scale, wait_full, stage_of, release,
                                                         fetched, fetch_next);
                    else
                        gs_fp8_blocks<PW, NB, 64, 1, SCL>(acc, tmp0, it, k0, k1, a_off, A_BYTES,
                                                          scale, wait_full, stage_of, release,
                                                          fetched, fetch_next);
                } else if (!SKIP || NP == 1 || bn * BN + (NP - 1) * 128 < N) {
                    gs_fp8_blocks<PW, NB, 0, NP, SCL>(acc, tmp0, it, k0, k1, a_off, A_BYTES,
                                                      scale, wait_full, stage_of, release,
                                                      fetched, fetch_next);
                } else {  // the last half past N
                    gs_fp8_blocks<PW, NB, 0, 1, SCL>(acc, tmp0, it, k0, k1, a_off, A_BYTES,
                                                     scale, wait_full, stage_of, release,
                                                     fetched, fetch_next);
                }
            } else {
                GS_TRACE_DO(auto& wait_full = gs_wait_full; auto& release = gs_release;)
                // two temporaries: K block ks runs on the tensor cores while block ks - 1
                // (finished: wait_group 1) is promoted and its stage freed
                float p0[1], p1[1], q0[1], q1[1];
                scale(k0, 0, p0[0], p1[0]);
                wait_full(it);
                gs_fp8_issue<128>(tmp0, stage_of(it), c * 64 * BK, A_BYTES);
                int ks = k0 + 1;
                for (; ks + 1 < k1; ks += 2) {
                    scale(ks, 0, q0[0], q1[0]);
                    wait_full(it + 1);
                    gs_fp8_issue<128>(tmp1, stage_of(it + 1), c * 64 * BK, A_BYTES);
                    gs_wgmma_wait<1>();
                    release(it);
                    gs_fp8_promote(acc, tmp0, p0, p1, 0);
                    scale(ks + 1, 0, p0[0], p1[0]);
                    wait_full(it + 2);
                    gs_fp8_issue<128>(tmp0, stage_of(it + 2), c * 64 * BK, A_BYTES);
                    gs_wgmma_wait<1>();
                    release(it + 1);
                    gs_fp8_promote(acc, tmp1, q0, q1, 0);
                    it += 2;
                }
                if (ks < k1) {  // an even number of K blocks: one more, into tmp1
                    scale(ks, 0, q0[0], q1[0]);
                    wait_full(it + 1);
                    gs_fp8_issue<128>(tmp1, stage_of(it + 1), c * 64 * BK, A_BYTES);
                    gs_wgmma_wait<1>();
                    release(it);
                    gs_fp8_promote(acc, tmp0, p0, p1, 0);
                    gs_wgmma_wait<0>();
                    release(it + 1);
                    gs_fp8_promote(acc, tmp1, q0, q1, 0);
                    it += 2;
                } else {
                    gs_wgmma_wait<0>();
                    release(it);
                    gs_fp8_promote(acc, tmp0, p0, p1, 0);
                    it += 1;
                }
            }
            GS_TRACE_IF(SK && (k0 != 0 || k1 != work.ksteps), FIXUP_BEGIN, t, k0);
            if (SK && !gs_sk_settle<BN / 2, CONSUMERS>(acc, ws, flags, work, t, k0, k1, c))
                return;  // a contributor: its partial sums are in the workspace
            GS_TRACE_IF(SK && k1 != work.ksteps, FIXUP_DONE, t, k0);
            if (EPI && tma_c)
                gs_store_acc_tma(acc, smem + STAGES * STAGE_BYTES + c * 16384, &tmC,
                                 bm * BM + c * 64, bn * BN, 1 + c);
            else
                gs_store_acc_bf16(acc, C, M, N, bm * BM + c * 64, bn * BN);
            GS_TRACE_C(TILE_END, t, k1);
        });
        if (EPI && tma_c && leader) gs_bulk_wait<0>();
        GS_TRACE(LANE_END, -1, 0);
    }
}

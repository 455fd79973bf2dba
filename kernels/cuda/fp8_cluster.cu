// Level "fp8_cluster" (sm_90a): fp8_block_scaled in 2-CTA thread block clusters. Operands,
// scales and C as in fp8_block_scaled: E4M3 A (M x K) and Bt (N x K), K-major; FP32 scales
// scale_a[kb * M + m] (1 x 128) and scale_b[nb * KB + kb] (128 x 128); C written as BF16.
//
// What changes (see wgmma_cluster.cu for the cluster mechanics): the CL CTAs of a cluster
// compute vertically adjacent tiles of one tile column; each producer loads its A tile and
// a BN / CL-row slice of the shared B tile, multicast into every CTA of the cluster, so B
// crosses L2 once per cluster; each consumer frees a stage on the "empty" mbarrier of
// every CTA. In the K loop (KPIPE = 0) the scales of K block ks + 1 are loaded while block
// ks runs on the tensor cores, so their global-load latency leaves the promotion's path.
// Tiles need not be whole scale blocks wide (DeepGEMM's unaligned block sizes): BN = 192
// (N = 2112 = 11 x 192 fills the SMs better than 9 tiles of 256) is done in two halves of
// 96 columns, and a half that straddles two 128-column scale blocks of B picks each
// 8-column group's scale_b by where the block boundary falls.
// Template switches for the tune script: CL = 1 (no cluster); BN = 128, 192 or 256; KPIPE = 0
// (one half at a time), 1 (BN = 128: promote block k - 1 from a second set of temporaries
// while block k runs); PRODREGS / CONSREGS (setmaxnreg targets). (Overlapping the two
// 96-column halves the same way made ptxas serialize every wgmma, C7514: left out.)
// Shapes: K % 128 == 0 (the host refuses other K); M and N are free.
#include "common.cuh"
#include "hopper.cuh"

// m64nHALFk32 E4M3 wgmma with FP32 accumulators (HALF = 128 from hopper.cuh, 96 here).
__device__ __forceinline__ void gs_wgmma_e4m3_n96(float (&d)[48], unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %50, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n96k32.f32.e4m3.e4m3 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
        "}, %48, %49, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        : "l"(da), "l"(db), "r"(accumulate));
}

template <int HALF>
struct GsWgmmaE4m3;
template <>
struct GsWgmmaE4m3<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_e4m3_n128(d, a, b, acc);
    }
};
template <>
struct GsWgmmaE4m3<96> {
    static __device__ __forceinline__ void mma(float (&d)[48], unsigned long long a,
                                               unsigned long long b, int acc) {
        gs_wgmma_e4m3_n96(d, a, b, acc);
    }
};

// One 128-deep K block of a consumer's 64 x HALF part of the tile into tmp (fresh start).
template <int HALF>
__device__ __forceinline__ void gs_fp8_issue(float (&tmp)[HALF / 2], const unsigned char* stage,
                                             int a_off, int b_off) {
    const unsigned long long da = gs_wgmma_desc_sw128(stage + a_off);
    const unsigned long long db = gs_wgmma_desc_sw128(stage + b_off);
    gs_fence_regs(tmp);
    gs_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)  // k32 steps: 32 bytes = 2 address units
        GsWgmmaE4m3<HALF>::mma(tmp, da + 2 * kk, db + 2 * kk, kk > 0 ? 1 : 0);
    gs_wgmma_commit();
}

// The scales of one half and K block: rows r0 and r0 + 8 times the scale_b of the 128-column
// block the half starts in (a) and of the next one (b); columns from `split` on use b.
struct GsHalfScale {
    float a0, a1, b0, b1;
    int split;
};

// acc += tmp * its scale (the row's, times its column group's block's).
template <int HALF>
__device__ __forceinline__ void gs_fp8_promote(float* acc, float (&tmp)[HALF / 2],
                                               const GsHalfScale& s) {
    gs_fence_regs(tmp);
#pragma unroll
    for (int j = 0; j < HALF / 8; ++j) {  // 8 columns: registers 4j .. 4j + 3
        const bool first = HALF == 128 || 8 * j < s.split;
        const float s0 = first ? s.a0 : s.b0, s1 = first ? s.a1 : s.b1;
        acc[4 * j + 0] += tmp[4 * j + 0] * s0;
        acc[4 * j + 1] += tmp[4 * j + 1] * s0;
        acc[4 * j + 2] += tmp[4 * j + 2] * s1;
        acc[4 * j + 3] += tmp[4 * j + 3] * s1;
    }
}

template <int BM, int BN, int BK, int STAGES, int CONSUMERS, int GM, int KPIPE, int EPI, int CL,
          int PRODREGS, int CONSREGS, bool VEC>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__((CONSUMERS + 1) * 128, 1)
fp8gemm_cluster(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
                const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
                unsigned short* __restrict__ C, int tma_c, const float* __restrict__ scale_a,
                const float* __restrict__ scale_b) {
    static_assert(BK == 128, "one K step is one 128-wide scale block (and one 128-byte row)");
    static_assert(BM == 64 * CONSUMERS, "each consumer warpgroup owns 64 rows");
    static_assert(BN == 128 || BN == 192 || BN == 256, "halves of 128 or 96 columns");
    constexpr int HALF = BN % 128 == 0 ? 128 : BN / 2;
    constexpr int NH = BN / HALF, HREG = HALF / 2;
    static_assert(KPIPE != 1 || NH == 1, "KPIPE = 1 pipelines whole K blocks (BN = 128)");
    static_assert(KPIPE == 0 || KPIPE == 1, "KPIPE: 0 or 1");
    constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK;
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);

    const int wg = threadIdx.x / 128;
    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int pairs = GS_CEIL_DIV(tm, CL) * tn, ksteps = K / BK;
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
        const int t128 = threadIdx.x % 128;
        const bool leader = t128 == 0;
        const int nb_count = GS_CEIL_DIV(N, 128);
        const int a_off = c * 64 * BK;
        float acc[BN / 2];
        int it = 0;
        for (int p = gs_cluster_id(); p < pairs; p += gs_cluster_count()) {
            int bm, bn;
            gs_cluster_tile<CL>(p, tm, tn, GM, bm, bn);
            const int r0 = bm * BM + c * 64 + (t128 / 32) * 16 + (t128 % 32) / 4;
            const bool in0 = r0 < M, in1 = r0 + 8 < M;
            // the scales of half h and K block ks
            auto scale = [&](int ks, int h) {
                const int col = bn * BN + h * HALF;
                const int nb = col / 128;
                auto sb = [&](int b) {
                    return b < nb_count ? __ldg(scale_b + (long long)b * ksteps + ks) : 0.f;
                };
                const float sa0 = in0 ? __ldg(scale_a + (long long)ks * M + r0) : 0.f;
                const float sa1 = in1 ? __ldg(scale_a + (long long)ks * M + r0 + 8) : 0.f;
                GsHalfScale s;
                const float ba = sb(nb);
                s.a0 = sa0 * ba;
                s.a1 = sa1 * ba;
                s.split = HALF == 128 ? HALF : (nb + 1) * 128 - col;
                const float bb = (HALF == 128 || s.split >= HALF) ? ba : sb(nb + 1);
                s.b0 = sa0 * bb;
                s.b1 = sa1 * bb;
                return s;
            };
            auto stage_of = [&](int i) { return smem + (i % STAGES) * STAGE_BYTES; };
            auto wait_full = [&](int i) { gs_mbar_wait(&full[i % STAGES], (i / STAGES) & 1); };
            auto release = [&](int i) {
                if (leader) gs_ws_release_cluster<CL>(&empty[i % STAGES]);
            };
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
            if constexpr (KPIPE == 0 || NH > 1) {
                // one half at a time: issue, wait, (free the stage), promote; the next
                // block's scales are loaded while this one runs
                float tmp0[HREG];
                GsHalfScale cur[NH], nxt[NH];
#pragma unroll
                for (int h = 0; h < NH; ++h) nxt[h] = scale(0, h);
                for (int ks = 0; ks < ksteps; ++ks, ++it) {
#pragma unroll
                    for (int h = 0; h < NH; ++h) cur[h] = nxt[h];
                    if (ks + 1 < ksteps) {
#pragma unroll
                        for (int h = 0; h < NH; ++h) nxt[h] = scale(ks + 1, h);
                    }
                    wait_full(it);
#pragma unroll
                    for (int h = 0; h < NH; ++h) {
                        gs_fp8_issue<HALF>(tmp0, stage_of(it), a_off, A_BYTES + h * HALF * BK);
                        gs_wgmma_wait<0>();
                        if (h == NH - 1) release(it);
                        gs_fp8_promote<HALF>(acc + h * HREG, tmp0, cur[h]);
                    }
                }
            } else {
                // BN = 128, two temporaries: K block ks runs on the tensor cores while
                // block ks - 1 (finished: wait_group 1) is promoted and its stage freed
                float tmp0[HREG], tmp1[HREG];
                GsHalfScale p = scale(0, 0), q;
                wait_full(it);
                gs_fp8_issue<HALF>(tmp0, stage_of(it), a_off, A_BYTES);
                int ks = 1;
                for (; ks + 1 < ksteps; ks += 2) {
                    q = scale(ks, 0);
                    wait_full(it + 1);
                    gs_fp8_issue<HALF>(tmp1, stage_of(it + 1), a_off, A_BYTES);
                    gs_wgmma_wait<1>();
                    release(it);
                    gs_fp8_promote<HALF>(acc, tmp0, p);
                    p = scale(ks + 1, 0);
                    wait_full(it + 2);
                    gs_fp8_issue<HALF>(tmp0, stage_of(it + 2), a_off, A_BYTES);
                    gs_wgmma_wait<1>();
                    release(it + 1);
                    gs_fp8_promote<HALF>(acc, tmp1, q);
                    it += 2;
                }
                if (ks < ksteps) {  // an even number of K blocks: one more, into tmp1
                    q = scale(ks, 0);
                    wait_full(it + 1);
                    gs_fp8_issue<HALF>(tmp1, stage_of(it + 1), a_off, A_BYTES);
                    gs_wgmma_wait<1>();
                    release(it);
                    gs_fp8_promote<HALF>(acc, tmp0, p);
                    gs_wgmma_wait<0>();
                    release(it + 1);
                    gs_fp8_promote<HALF>(acc, tmp1, q);
                    it += 2;
                } else {
                    gs_wgmma_wait<0>();
                    release(it);
                    gs_fp8_promote<HALF>(acc, tmp0, p);
                    it += 1;
                }
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

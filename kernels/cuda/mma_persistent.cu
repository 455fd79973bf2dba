// Level "mma_persistent": mma_sync's math (ldmatrix + mma.sync.m16n8k16, swizzled tiles,
// FP16 in, FP32 accumulate) in a persistent kernel. The grid has one block per SM; block b
// computes tiles b, b + gridDim.x, ... in grouped order (GM tile rows walked column by
// column). Its K tiles form ONE cp.async stream across all of its output tiles: while the
// last K tiles of an output tile multiply, the first K tiles of the next are already in
// flight, and the next tile's first fragments load before the epilogue, so the pipeline
// never drains and refills between tiles and the epilogue's stores overlap the copies.
// Shared addresses are set up once: per thread, one swizzled ldmatrix offset per 16-deep
// step (A) and per 16 columns (B), one copy offset per operand; the rest is immediates.
// VEC=false (K or N not a multiple of 8) stages tiles with guarded element-wise loads.
#include "common.cuh"
#include "mma.cuh"
#include "trace.cuh"

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GM, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
hgemm_mma_persistent(int M, int N, int K, const __half* __restrict__ A,
                     const __half* __restrict__ B, float* __restrict__ C) {
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MT = WM / 16, NT = WN / 8, KK = BK / 16;
    constexpr int A_ROW = BK * 2, B_ROW = BN * 2;  // bytes per shared row
    constexpr int A_STAGE = BM * A_ROW, B_STAGE = BK * B_ROW;
    constexpr int A_CPR = BK / 8, B_CPR = BN / 8;  // 16-byte chunks per row
    constexpr int A_CHUNKS = BM * A_CPR / THREADS, B_CHUNKS = BK * B_CPR / THREADS;
    constexpr int A_RSTEP = THREADS / A_CPR, B_RSTEP = THREADS / B_CPR;  // rows per pass
    static_assert(A_CHUNKS * THREADS == BM * A_CPR && B_CHUNKS * THREADS == BK * B_CPR,
                  "every thread copies the same number of 16-byte chunks");
    static_assert(THREADS % A_CPR == 0 && THREADS % B_CPR == 0 && A_RSTEP % 8 == 0 &&
                      B_RSTEP % 8 == 0,
                  "a thread keeps one chunk column and one swizzle phase in every pass");
    static_assert(BK % 64 == 0 && BN % 64 == 0, "swizzle needs rows of 8 chunks or more");
    static_assert(WM % 16 == 0 && WN % 16 == 0 && KK % 2 == 0, "fragment shape");

    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned as_base = gs_smem_addr(smem), bs_base = as_base + STAGES * A_STAGE;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const int tiles_m = GS_CEIL_DIV(M, BM), tiles_n = GS_CEIL_DIV(N, BN);
    const int tiles = tiles_m * tiles_n, ktiles = GS_CEIL_DIV(K, BK);
    const int my_tiles = (int)blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int total = my_tiles * ktiles;  // K tiles this block consumes, all tiles together

    // ---- the copy stream: K tile ld_k of output tile ld_t, issued in order
    const int a_r = tid / A_CPR, a_c = tid % A_CPR, b_r = tid / B_CPR, b_c = tid % B_CPR;
    const unsigned a_dst = gs_swz<A_ROW>(a_r, a_c), b_dst = gs_swz<B_ROW>(b_r, b_c);
    const gs_index a_pass = (gs_index)A_RSTEP * K, b_pass = (gs_index)B_RSTEP * N;
    int ld_t = blockIdx.x, ld_k = 0, ld_row = 0, ld_col = 0;
    auto locate = [&]() {
        int bm, bn;
        gs_group_coords(ld_t, tiles_m, tiles_n, GM, bm, bn);
        ld_row = bm * BM, ld_col = bn * BN;
    };
    if (ld_t < tiles) locate();
    GS_TRACE_LANE(tid == 0);
    auto issue = [&](int s) {  // the next K tile of the stream into stage s
        unsigned char* as = smem + s * A_STAGE + a_dst;
        unsigned char* bs = smem + STAGES * A_STAGE + s * B_STAGE + b_dst;
        const int k0 = ld_k * BK;
        const int ar = ld_row + a_r, ak = k0 + a_c * 8, bk = k0 + b_r, bc = ld_col + b_c * 8;
        if (VEC) {
            const __half* a_src = A + (gs_index)ar * K + ak;
            const __half* b_src = B + (gs_index)bk * N + bc;
#pragma unroll
            for (int p = 0; p < A_CHUNKS; ++p) {
                const bool ok = ar + p * A_RSTEP < M && ak < K;
                gs_cp_async16(as + p * A_RSTEP * A_ROW, ok ? a_src + p * a_pass : A, ok);
            }
#pragma unroll
            for (int p = 0; p < B_CHUNKS; ++p) {
                const bool ok = bk + p * B_RSTEP < K && bc < N;
                gs_cp_async16(bs + p * B_RSTEP * B_ROW, ok ? b_src + p * b_pass : B, ok);
            }
        } else {  // the edge path: one chunk at a time, to keep registers for the loop
#pragma unroll 1
            for (int p = 0; p < A_CHUNKS; ++p) {
                __half* dst = reinterpret_cast<__half*>(as + p * A_RSTEP * A_ROW);
                const int gr = ar + p * A_RSTEP;
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    dst[q] = (gr < M && ak + q < K) ? A[(gs_index)gr * K + ak + q] : __half(0.f);
            }
#pragma unroll 1
            for (int p = 0; p < B_CHUNKS; ++p) {
                __half* dst = reinterpret_cast<__half*>(bs + p * B_RSTEP * B_ROW);
                const int gr = bk + p * B_RSTEP;
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    dst[q] = (gr < K && bc + q < N) ? B[(gs_index)gr * N + bc + q] : __half(0.f);
            }
        }
        if (++ld_k == ktiles) {  // the stream moves on to this block's next output tile
            ld_k = 0;
            ld_t += gridDim.x;
            if (ld_t < tiles) locate();
        }
    };

    // ---- fragments: lane offsets inside a stage, set up once (rows are multiples of 8
    // apart from the lane's own, so the lane's swizzle phase is lane % 8 everywhere)
    unsigned a_off[KK], b_off[NT / 2];
#pragma unroll
    for (int kk = 0; kk < KK; ++kk)  // A rows wm0 + lane%16 (+16 i), chunk 2 kk + lane/16
        a_off[kk] = gs_swz<A_ROW>(wm0 + lane % 16, kk * 2 + lane / 16);
#pragma unroll
    for (int j = 0; j < NT / 2; ++j)  // B rows (lane/8 % 2)*8 + lane%8 (+16 kk), n half lane/16
        b_off[j] = gs_swz<B_ROW>(((lane / 8) % 2) * 8 + lane % 8, (wn0 + j * 16) / 8 + lane / 16);
    unsigned a[2][MT][4], b[2][NT / 2][4];  // fragments of step kk and kk+1
    auto load_frags = [&](int s, int kk, int buf) {
        const unsigned as = as_base + s * A_STAGE, bs = bs_base + s * B_STAGE;
#pragma unroll
        for (int i = 0; i < MT; ++i) gs_ldmatrix_x4(a[buf][i], as + a_off[kk] + i * 16 * A_ROW);
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            gs_ldmatrix_x4_trans(b[buf][j], bs + b_off[j] + kk * 16 * B_ROW);
    };

#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        GS_TRACE_IF(s < total, LOAD_ISSUED, ld_t, ld_k);
        if (s < total) issue(s);
        gs_cp_async_commit();  // one group per stage, empty or not, keeps the count exact
    }
    gs_cp_async_wait<STAGES - 1>();
    __syncthreads();
    GS_TRACE_IF(total > 0, DATA_READY, blockIdx.x, 0);
    if (total > 0) load_frags(0, 0, 0);

    int g = 0;  // K tiles consumed so far
    for (int i = 0; i < my_tiles; ++i) {
        float acc[MT][NT][4] = {};
        GS_TRACE_DO(const int gs_tile = blockIdx.x + i * gridDim.x;)
        GS_TRACE(TILE_BEGIN, gs_tile, 0);
        for (int kt = 0; kt < ktiles; ++kt, ++g) {
            GS_TRACE_SPLIT(gs_tr.samples(kt) || gs_tr.samples(kt + 1 < ktiles ? kt + 1 : 0) || gs_tr.samples(ld_k));  // a step its records name is sampled (ld_k: the copy it issues): the copy with the records (nvrtc.split_regions)
            const int s = g % STAGES;
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const int cur = kk & 1, nxt = cur ^ 1;
                if (kk + 1 < KK) {
                    load_frags(s, kk + 1, nxt);
                } else if (g + 1 < total) {
                    // stage s's last fragments are in registers: after this barrier it is
                    // refilled with K tile g + STAGES of the stream (the next output tile's,
                    // near the end of this one), and K tile g+1's first fragments load
                    gs_cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    GS_TRACE(DATA_READY, kt + 1 < ktiles ? gs_tile : gs_tile + (int)gridDim.x, kt + 1 < ktiles ? kt + 1 : 0);  // step g + 1's, in step g's last part
                    GS_TRACE_IF(g + STAGES < total, LOAD_ISSUED, ld_t, ld_k);
                    if (g + STAGES < total) issue(s);
                    gs_cp_async_commit();
                    load_frags((g + 1) % STAGES, 0, nxt);
                }
#pragma unroll
                for (int mi = 0; mi < MT; ++mi)
#pragma unroll
                    for (int nj = 0; nj < NT; ++nj)
                        gs_mma_16816(acc[mi][nj], a[cur][mi], b[cur][nj / 2][(nj % 2) * 2],
                                     b[cur][nj / 2][(nj % 2) * 2 + 1]);
            }
            GS_TRACE(MMA_DONE, gs_tile, kt);
            GS_TRACE_SPLIT_END();
        }
        // epilogue of output tile i, while the stream's copies for tile i+1 are in flight
        int bm, bn;
        gs_group_coords(blockIdx.x + i * gridDim.x, tiles_m, tiles_n, GM, bm, bn);
        const int row0 = bm * BM + wm0 + lane / 4, col0 = bn * BN + wn0 + (lane % 4) * 2;
        gs_store_mma_acc(C, M, N, row0, col0, acc, VEC);
        GS_TRACE(TILE_END, gs_tile, ktiles);
    }
    gs_cp_async_wait<0>();
}

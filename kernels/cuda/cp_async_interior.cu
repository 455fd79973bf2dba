// Level "cp_async_interior": cp_async with guard-free interior blocks. A block whose tile
// lies wholly inside C, with K a multiple of BK, can never copy outside A or B, so its main
// loop is instantiated without any bounds check: one source pointer per operand walks the
// rows by adding a row step, the copies use immediate offsets, and nothing selects a
// fallback address. Blocks on the edge of C (and every block when K is not a multiple of
// BK) run the guarded loop of cp_async. Both loops are one function template, instantiated
// twice (GUARDED false and true); the choice is one branch per block. Otherwise as cp_async.
// (A template rather than a generic lambda: NVRTC 13.0 treats a generic lambda's call
// operator as a host function and refuses it when compiling to a cubin.) A K step's 128
// FMAs run in serpentine order (gs_outer_product_serpentine).
#include "common.cuh"
#include "trace.cuh"

// acc += rm x rn as gs_outer_product, the thread's rows in turn, odd rows right to left: the
// last B value of a row is the first of the next. Measured against row by row (benchmarks/
// attempts/cp_async_interior_x.cu, ORD 1; NVRTC 13.0, H200): 251 registers instead of 255,
// 94.5 -> 95.8% of cuBLAS FP32 at 4096^3, 95.1 -> 97.5% at 8192^3 (docs/perf-notes.md,
// issue 42 round 7).
template <int MI, int NJ>
__device__ __forceinline__ void gs_outer_product_serpentine(const float (&rm)[MI],
                                                            const float (&rn)[NJ],
                                                            float (&acc)[MI][NJ]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj) {
            const int j = (i & 1) ? NJ - 1 - jj : jj;
            acc[i][j] += rm[i] * rn[j];
        }
}

template <bool G, int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM,
          int TN, int STAGES, int GM, bool VEC>
__device__ __forceinline__ void gs_cp_async_interior_body(int M, int N, int K,
                                                          const float* __restrict__ A,
                                                          const float* __restrict__ B,
                                                          float* __restrict__ C) {
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    constexpr int LANE_COLS = WSUBN / TN;
    static_assert((WSUBM / TM) * LANE_COLS == 32, "a sub-tile must hold exactly one warp");
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int LDA = BM + 4;
    constexpr int B_VECS = BK * BN / 4 / THREADS;   // 16-byte copies per thread (VEC)
    static_assert(B_VECS * THREADS * 4 == BK * BN, "loader");
    static_assert(STAGES >= 2, "a pipeline needs two stages at least");
    static_assert(BK % 8 == 0 && BM % (THREADS / 8) == 0 && THREADS % (BN / 4) == 0,
                  "copy mappings");

    extern __shared__ __align__(16) float smem[];
    float* As = smem;                      // STAGES x BK x LDA
    float* Bs = smem + STAGES * BK * LDA;  // STAGES x BK x BN
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int bx, by;
    gs_block_coords<GM>(bx, by);
    const int block_row = by * BM, block_col = bx * BN;
    const int m0 = (warp / WARPS_N) * WM + (lane / LANE_COLS) * TM;
    const int n0 = (warp % WARPS_N) * WN + (lane % LANE_COLS) * TN;

    // Copy addressing, set up once: one source pointer per operand advanced by k0, so the
    // loop keeps few address registers live. A: a warp covers 4 rows x 8 consecutive k
    // (whole 32-byte sectors), which land on 32 different banks of the transposed tile.
    constexpr int A_ROWS = THREADS / 8, B_ROWS = THREADS / (BN / 4);
    const float* a_src = A + (gs_index)(block_row + tid / 8) * K + tid % 8;
    const gs_index a_step = (gs_index)A_ROWS * K;
    const int a_rows_left = M - block_row - tid / 8, a_k = tid % 8;
    const int a_dst = (tid % 8) * LDA + tid / 8;
    const int b_row = tid / (BN / 4), b_col = (tid % (BN / 4)) * 4;
    const float* b_src = B + (gs_index)b_row * N + block_col + b_col;
    const bool b_col_ok = block_col + b_col < N;
    const gs_index b_pass = (gs_index)B_ROWS * N;
    const int b_dst = b_row * BN + b_col;

    auto issue_tile = [&](int k0, int s) {
        float* as = As + s * BK * LDA + a_dst;
        float* bs = Bs + s * BK * BN;
        if (!G) {  // interior: every copy is in range
            const float* a = a_src + k0;
#pragma unroll
            for (int j = 0; j < BM / A_ROWS; ++j, a += a_step)
#pragma unroll
                for (int h = 0; h < BK / 8; ++h)
                    gs_cp_async4(as + 8 * h * LDA + j * A_ROWS, a + 8 * h, true);
            const float* b = b_src + (gs_index)k0 * N;
#pragma unroll
            for (int p = 0; p < B_VECS; ++p, b += b_pass)
                gs_cp_async16(bs + b_dst + p * B_ROWS * BN, b, true);
        } else {
#pragma unroll
            for (int h = 0; h < BK / 8; ++h)
#pragma unroll
                for (int j = 0; j < BM / A_ROWS; ++j) {
                    const bool ok = j * A_ROWS < a_rows_left && k0 + 8 * h + a_k < K;
                    gs_cp_async4(as + 8 * h * LDA + j * A_ROWS,
                                 ok ? a_src + j * a_step + k0 + 8 * h : A, ok);
                }
            if (VEC) {
#pragma unroll
                for (int p = 0; p < B_VECS; ++p) {
                    const bool ok = k0 + b_row + p * B_ROWS < K && b_col_ok;
                    gs_cp_async16(bs + b_dst + p * B_ROWS * BN,
                                  ok ? b_src + (gs_index)(k0 + p * B_ROWS) * N : B, ok);
                }
            } else {
#pragma unroll
                for (int p = 0; p < B_VECS * 4; ++p) {
                    const int e = tid + p * THREADS, r = e / BN, c = e % BN;
                    const int gr = k0 + r, gc = block_col + c;
                    const bool ok = gr < K && gc < N;
                    gs_cp_async4(&bs[r * BN + c], ok ? &B[(gs_index)gr * N + gc] : B, ok);
                }
            }
        }
    };

    float acc[WMITER * TM][WNITER * TN] = {};
    float rm[2][WMITER * TM], rn[2][WNITER * TN];  // fragments of step k and k+1
    const int tiles = GS_CEIL_DIV(K, BK);
    GS_TRACE_LANE(tid == 0);
    GS_TRACE(TILE_BEGIN, GS_TRACE_BLOCK_TILE, 0);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        GS_TRACE_IF(s < tiles, LOAD_ISSUED, GS_TRACE_BLOCK_TILE, s);
        if (s < tiles) issue_tile(s * BK, s);
        gs_cp_async_commit();  // one group per stage, empty or not, keeps the count exact
    }
    gs_cp_async_wait<STAGES - 1>();  // tile 0 has landed (this thread's copies)
    __syncthreads();                 // ... and everyone's
    GS_TRACE(DATA_READY, GS_TRACE_BLOCK_TILE, 0);
    gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(As, Bs, 0, m0, n0, rm[0],
                                                                  rn[0]);
    for (int t = 0; t < tiles; ++t) {
        GS_TRACE_SPLIT(gs_tr.samples(t) || gs_tr.samples(t + 1) || gs_tr.samples(t + STAGES));  // a sampled step: the copy with the records (nvrtc.split_regions)
        const int s = t % STAGES;
        const float* as = As + s * BK * LDA;
        const float* bs = Bs + s * BK * BN;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) {
                gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
                    as, bs, k + 1, m0, n0, rm[(k + 1) & 1], rn[(k + 1) & 1]);
            } else if (t + 1 < tiles) {
                // Last step of the tile: its fragments are already in registers, so
                // after this barrier nobody reads stage s again. Refill it with tile
                // t+STAGES; fetch tile t+1's first fragments while this step's FMAs run.
                gs_cp_async_wait<STAGES - 2>();  // tile t+1 has landed
                __syncthreads();
                GS_TRACE(DATA_READY, GS_TRACE_BLOCK_TILE, t + 1);  // in the last step of tile t
                GS_TRACE_IF(t + STAGES < tiles, LOAD_ISSUED, GS_TRACE_BLOCK_TILE, t + STAGES);
                if (t + STAGES < tiles) issue_tile((t + STAGES) * BK, s);
                gs_cp_async_commit();
                const int s1 = (t + 1) % STAGES;
                gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
                    As + s1 * BK * LDA, Bs + s1 * BK * BN, 0, m0, n0, rm[(k + 1) & 1],
                    rn[(k + 1) & 1]);
            }
            gs_outer_product_serpentine(rm[k & 1], rn[k & 1], acc);
        }
        GS_TRACE(MMA_DONE, GS_TRACE_BLOCK_TILE, t);
        GS_TRACE_SPLIT_END();
    }
    gs_warp_tile_store<VEC, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(C, M, N, block_row + m0,
                                                                 block_col + n0, acc);
    GS_TRACE(TILE_END, GS_TRACE_BLOCK_TILE, tiles);
}

template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM, int TN,
          int STAGES, int MINB, int GM, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
sgemm_cp_async_interior(int M, int N, int K, const float* __restrict__ A,
                        const float* __restrict__ B, float* __restrict__ C) {
    int bx, by;
    gs_block_coords<GM>(bx, by);
    // interior: the whole tile inside C and K a multiple of BK (the copies need no guard)
    const bool interior = VEC && (by + 1) * BM <= M && (bx + 1) * BN <= N && K % BK == 0;
    if (interior)
        gs_cp_async_interior_body<false, BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, STAGES,
                                  GM, VEC>(M, N, K, A, B, C);
    else
        gs_cp_async_interior_body<true, BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, STAGES,
                                  GM, VEC>(M, N, K, A, B, C);
}

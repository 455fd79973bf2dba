// Attempts on cp_async_interior (issue 42), not a level: kernels/cuda/cp_async_interior.cu's
// kernel as it was before round 7, with two switches, timed by benchmarks/kernel_attempts.py
// beside cuBLAS FP32. SPREAD = 0 and ORD = 0 is that kernel; SPREAD = 0 and ORD = 1 compiles to
// the level's SASS since round 7 (a test holds it).
//   SPREAD  where an interior block issues the copies that refill a stage (12 a thread at the
//           level's tile: 8 4-byte copies of A, 4 16-byte copies of B). 0: all of them at
//           once, right after the barrier that ends tile t, as the level; n >= 1: the copies
//           of the stage freed at the end of tile t - 1 in n bursts over tile t's K steps
//           (burst b at step b x ((BK - 1) / n)), committed with the last, before the wait
//           that ends tile t (the group count stays the level's: tile t + 1 has landed when
//           tile t ends). Nsight Compute had the level's LSU throttle stalls at 0.08 an
//           issued instruction against cuBLAS's 0.002 (docs/perf-notes.md, round 6); bursts
//           apart are what would keep the queue short. A copy inside a step costs address
//           arithmetic the level's refill does not pay (its registers are tight there).
//   ORD     the order of a K step's 128 FMAs. 0: the thread's rows in turn, each across its
//           columns (the level before round 7); 1: the same, odd rows right to left (the
//           level since: measured 94.5 -> 95.8% at 4096^3, 95.1 -> 97.5% at 8192^3; the last
//           column's B
//           value is used by two FMAs in a row at each turn); 2: columns in turn, each down
//           the rows (each B value in 16 FMAs running, each A value once in 16).
// The guarded blocks (edge tiles, K not a multiple of BK) run the level's loop unchanged.
#include "common.cuh"

template <int ORD, int MI, int NJ>
__device__ __forceinline__ void gs_cpix_outer(const float (&rm)[MI], const float (&rn)[NJ],
                                              float (&acc)[MI][NJ]) {
    if (ORD == 2) {
#pragma unroll
        for (int j = 0; j < NJ; ++j)
#pragma unroll
            for (int i = 0; i < MI; ++i) acc[i][j] += rm[i] * rn[j];
    } else {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int jj = 0; jj < NJ; ++jj) {
                const int j = (ORD == 1 && (i & 1)) ? NJ - 1 - jj : jj;
                acc[i][j] += rm[i] * rn[j];
            }
    }
}

template <bool G, int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM,
          int TN, int STAGES, int GM, bool VEC, int SPREAD, int ORD>
__device__ __forceinline__ void gs_cpix_body(int M, int N, int K, const float* __restrict__ A,
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
    static_assert(ORD >= 0 && ORD <= 2 && SPREAD >= 0, "switches");

    extern __shared__ __align__(16) float smem[];
    float* As = smem;                      // STAGES x BK x LDA
    float* Bs = smem + STAGES * BK * LDA;  // STAGES x BK x BN
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int bx, by;
    gs_block_coords<GM>(bx, by);
    const int block_row = by * BM, block_col = bx * BN;
    const int m0 = (warp / WARPS_N) * WM + (lane / LANE_COLS) * TM;
    const int n0 = (warp % WARPS_N) * WN + (lane % LANE_COLS) * TN;

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

    // SPREAD: the refill's copies in SPREAD bursts over a tile's K steps (interior blocks)
    constexpr bool SP = SPREAD >= 1 && !G;
    constexpr int A_PIECES = (BM / A_ROWS) * (BK / 8), PIECES = A_PIECES + B_VECS;
    constexpr int BURSTS = SPREAD < 1 ? 1 : SPREAD;
    constexpr int PER_BURST = (PIECES + BURSTS - 1) / BURSTS;
    constexpr int GAP = (BK - 1) / BURSTS;  // steps between bursts
    static_assert(!SP || (GAP >= 1 && (BURSTS - 1) * GAP < BK - 1), "SPREAD: too many bursts");
    const float* a_run = a_src;
    const float* b_run = b_src;

    float acc[WMITER * TM][WNITER * TN] = {};
    float rm[2][WMITER * TM], rn[2][WNITER * TN];  // fragments of step k and k+1
    const int tiles = GS_CEIL_DIV(K, BK);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        if (s < tiles) issue_tile(s * BK, s);
        gs_cp_async_commit();  // one group per stage, empty or not, keeps the count exact
    }
    gs_cp_async_wait<STAGES - 1>();  // tile 0 has landed (this thread's copies)
    __syncthreads();                 // ... and everyone's
    gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(As, Bs, 0, m0, n0, rm[0],
                                                                  rn[0]);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        const float* as = As + s * BK * LDA;
        const float* bs = Bs + s * BK * BN;
        // SPREAD: tile t - 1 + STAGES into the stage tile t - 1 freed
        const bool refill = SP && t >= 1 && t - 1 + STAGES < tiles;
        const int sr = (t + STAGES - 1) % STAGES;
        float* ras = As + sr * BK * LDA + a_dst;
        float* rbs = Bs + sr * BK * BN + b_dst;
        if (SP && refill) {
            a_run = a_src + (t - 1 + STAGES) * BK;
            b_run = b_src + (gs_index)((t - 1 + STAGES) * BK) * N;
        }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (SP && k % GAP == 0 && k / GAP < BURSTS) {
                if (refill) {
#pragma unroll
                    for (int q = (k / GAP) * PER_BURST;
                         q < PIECES && q < (k / GAP + 1) * PER_BURST; ++q) {
                        if (q < A_PIECES) {
                            const int j = q / (BK / 8), h = q % (BK / 8);
                            gs_cp_async4(ras + 8 * h * LDA + j * A_ROWS,
                                         a_run + j * a_step + 8 * h, true);
                        } else {
                            const int p = q - A_PIECES;
                            gs_cp_async16(rbs + p * B_ROWS * BN, b_run + p * b_pass, true);
                        }
                    }
                }
                if (k / GAP == BURSTS - 1 && t >= 1) gs_cp_async_commit();
            }
            if (k + 1 < BK) {
                gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
                    as, bs, k + 1, m0, n0, rm[(k + 1) & 1], rn[(k + 1) & 1]);
            } else if (t + 1 < tiles) {
                // Last step of the tile: its fragments are already in registers, so
                // after this barrier nobody reads stage s again. Refill it with tile
                // t+STAGES (SPREAD: during the next tile); fetch tile t+1's first
                // fragments while this step's FMAs run.
                gs_cp_async_wait<STAGES - 2>();  // tile t+1 has landed
                __syncthreads();
                if (!SP) {
                    if (t + STAGES < tiles) issue_tile((t + STAGES) * BK, s);
                    gs_cp_async_commit();
                }
                const int s1 = (t + 1) % STAGES;
                gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
                    As + s1 * BK * LDA, Bs + s1 * BK * BN, 0, m0, n0, rm[(k + 1) & 1],
                    rn[(k + 1) & 1]);
            }
            gs_cpix_outer<ORD>(rm[k & 1], rn[k & 1], acc);
        }
    }
    gs_warp_tile_store<VEC, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(C, M, N, block_row + m0,
                                                                 block_col + n0, acc);
}

template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM, int TN,
          int STAGES, int MINB, int GM, int SPREAD, int ORD, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
sgemm_cp_async_interior_x(int M, int N, int K, const float* __restrict__ A,
                          const float* __restrict__ B, float* __restrict__ C) {
    int bx, by;
    gs_block_coords<GM>(bx, by);
    // interior: the whole tile inside C and K a multiple of BK (the copies need no guard)
    const bool interior = VEC && (by + 1) * BM <= M && (bx + 1) * BN <= N && K % BK == 0;
    if (interior)
        gs_cpix_body<false, BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, STAGES, GM, VEC,
                     SPREAD, ORD>(M, N, K, A, B, C);
    else
        gs_cpix_body<true, BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, STAGES, GM, VEC,
                     SPREAD, ORD>(M, N, K, A, B, C);
}

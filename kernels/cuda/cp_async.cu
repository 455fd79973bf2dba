// Level "cp_async": warp_tiling.cu's math fed by a multi-stage cp.async pipeline.
// Global -> shared copies go through cp.async (no register staging, no thread waits on a
// load), into a ring of STAGES shared buffers: up to STAGES-1 K tiles are in flight while
// one is computed. The fragments of the next k step are loaded while the current one is
// computed, across tile boundaries too: the one barrier per tile sits before the tile's
// last step, so the first shared loads of the next tile overlap that step's FMAs. A is copied element by element (4-byte cp.async) into its transposed,
// padded layout: lanes of a warp cover 4 rows x 8 k, which lands on 32 distinct banks.
// (BK must be a multiple of 8.)
// B rows go as 16-byte copies on the VEC path. Out-of-range elements are zero-filled by
// the copy itself (src-size 0).
#include "common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM, int TN,
          int STAGES, int MINB, int SWZ, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
sgemm_cp_async(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C) {
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    constexpr int LANE_COLS = WSUBN / TN;
    static_assert((WSUBM / TM) * LANE_COLS == 32, "a sub-tile must hold exactly one warp");
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int LDA = BM + 4;
    constexpr int A_ELEMS = BM * BK / THREADS;      // 4-byte copies per thread
    constexpr int B_VECS = BK * BN / 4 / THREADS;   // 16-byte copies per thread (VEC)
    static_assert(A_ELEMS * THREADS == BM * BK && B_VECS * THREADS * 4 == BK * BN, "loader");
    static_assert(STAGES >= 2, "a pipeline needs two stages at least");
    static_assert(BK % 8 == 0 && THREADS % 8 == 0 && BM % (THREADS / 8) == 0, "A copy mapping");

    extern __shared__ __align__(16) float smem[];
    float* As = smem;                      // STAGES x BK x LDA
    float* Bs = smem + STAGES * BK * LDA;  // STAGES x BK x BN
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int bx, by;
    gs_block_coords<SWZ>(bx, by);
    const int block_row = by * BM, block_col = bx * BN;
    const int m0 = (warp / WARPS_N) * WM + (lane / LANE_COLS) * TM;
    const int n0 = (warp % WARPS_N) * WN + (lane % LANE_COLS) * TN;

    auto issue_tile = [&](int k0, int s) {
        float* as = As + s * BK * LDA;
        float* bs = Bs + s * BK * BN;
#pragma unroll
        for (int p = 0; p < A_ELEMS; ++p) {
            // a warp covers 4 rows x 8 consecutive k: whole 32-byte sectors in global
            // memory, and banks (4 * k + row) % 32 all different in the transposed tile
            constexpr int ROWS = THREADS / 8;  // rows one pass covers
            const int r = tid / 8 + (p % (BM / ROWS)) * ROWS;
            const int c = (p / (BM / ROWS)) * 8 + tid % 8;
            const int gr = block_row + r, gc = k0 + c;
            const bool ok = gr < M && gc < K;
            gs_cp_async4(&as[c * LDA + r], ok ? &A[(gs_index)gr * K + gc] : A, ok);
        }
        if (VEC) {
#pragma unroll
            for (int p = 0; p < B_VECS; ++p) {
                const int e = tid + p * THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;
                const int gr = k0 + r, gc = block_col + c;
                const bool ok = gr < K && gc < N;
                gs_cp_async16(&bs[r * BN + c], ok ? &B[(gs_index)gr * N + gc] : B, ok);
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
    };

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
    gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(As, Bs, 0, m0, n0, rm[0], rn[0]);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        const float* as = As + s * BK * LDA;
        const float* bs = Bs + s * BK * BN;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) {
                gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
                    as, bs, k + 1, m0, n0, rm[(k + 1) & 1], rn[(k + 1) & 1]);
            } else if (t + 1 < tiles) {
                // Last step of the tile: its fragments are already in registers, so after
                // this barrier nobody reads stage s again. Refill it with tile t+STAGES, and
                // fetch the first fragments of tile t+1 while this step's FMAs run.
                gs_cp_async_wait<STAGES - 2>();  // tile t+1 has landed
                __syncthreads();
                if (t + STAGES < tiles) issue_tile((t + STAGES) * BK, s);
                gs_cp_async_commit();
                const int s1 = (t + 1) % STAGES;
                gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
                    As + s1 * BK * LDA, Bs + s1 * BK * BN, 0, m0, n0, rm[(k + 1) & 1],
                    rn[(k + 1) & 1]);
            }
            gs_outer_product(rm[k & 1], rn[k & 1], acc);
        }
    }
    gs_warp_tile_store<VEC, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(C, M, N, block_row + m0,
                                                                 block_col + n0, acc);
}

// Attempts on wmma (issue 42), not a level: kernels/cuda/wmma.cu with switches that
// benchmarks/kernel_attempts.py times against cuBLAS FP16. With LEAN = LB = 1 the main
// loop is wmma's (the script's control checks that it times like the level).
//   LEAN  1: wmma's loader (every copy's row, column, bounds and 64-bit address computed
//         in the loop: 188 of the K loop's 285 instructions are neither HMMA nor LDSM nor
//         LDGSTS in the SASS); 2: blocks whose tile lies wholly inside C with K a multiple of
//         BK run a second copy of the loop, cp_async_interior's way: one source pointer per
//         operand stepped by a constant per K tile, copies at immediate offsets, no guard,
//         the ring's read and write stages counted instead of taken modulo STAGES; edge
//         blocks run LEAN 1's loop.
//   LB    the launch bounds' minimum blocks per SM, plus one (1: none given, as wmma, 124
//         registers, two blocks of 8 warps per SM; with LEAN = 2 and none given the kernel
//         takes 143, one block per SM, so LB = 3 (two blocks, at most 128) goes with it).
//   FB    (issue 42, round 3) 1: each 16-deep step loads its fragments, then multiplies
//         (wmma; ptxas hoists some loads within a K tile, none across the barrier); 2: the
//         fragments of step kk + 1 are loaded while step kk multiplies, across K tiles too:
//         the one barrier per K tile moves before the tile's last step, where every warp
//         has its fragments of the tile in registers, so the stage just read is refilled at
//         once and all STAGES stages hold K tiles in flight (FB 1: STAGES - 1), and the next
//         tile's first fragments load while the last step multiplies. 3: as 2 without the
//         second set of fragments (each step loads its own, as FB 1; the barrier comes after
//         the last step's loads): all STAGES stages in flight for FB 1's registers.
//   GM    (issue 42, round 14) the grouped block order of common.cuh, GM block rows at a
//         time; 1: the grid's own order (wmma's).
#include "common.cuh"
#include <cuda_fp16.h>
#include <mma.h>

template <bool G, int BM, int BN, int BK, int WM, int WN, int STAGES, int LEAN, int FB,
          bool VEC>
__device__ __forceinline__ void gs_wmma_x_body(int M, int N, int K,
                                               const __half* __restrict__ A,
                                               const __half* __restrict__ B,
                                               float* __restrict__ C, int bx, int by) {
    using namespace nvcuda;
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int FM = WM / 16, FN = WN / 16;
    constexpr int LDA = BK + 8, LDB = BN + 8;
    constexpr int A_VECS = BM * BK / 8 / THREADS, B_VECS = BK * BN / 8 / THREADS;
    static_assert(A_VECS * THREADS * 8 == BM * BK && B_VECS * THREADS * 8 == BK * BN, "loader");
    static_assert(BK % 16 == 0 && WM % 16 == 0 && WN % 16 == 0, "fragment shape");
    static_assert(THREADS % (BK / 8) == 0 && THREADS % (BN / 8) == 0, "copy mappings");
    constexpr int A_ROWS = THREADS / (BK / 8), B_ROWS = THREADS / (BN / 8);  // rows per pass

    extern __shared__ __align__(128) unsigned char smem_raw[];
    __half* As = reinterpret_cast<__half*>(smem_raw);  // STAGES x BM x LDA
    __half* Bs = As + STAGES * BM * LDA;                // STAGES x BK x LDB
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int block_row = by * BM, block_col = bx * BN;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

    // the interior loader's setup: this thread's first copy of each operand
    const __half* a_src = A + (gs_index)(block_row + tid / (BK / 8)) * K + (tid % (BK / 8)) * 8;
    const __half* b_src = B + (gs_index)(tid / (BN / 8)) * N + block_col + (tid % (BN / 8)) * 8;
    const int a_dst = (tid / (BK / 8)) * LDA + (tid % (BK / 8)) * 8;
    const int b_dst = (tid / (BN / 8)) * LDB + (tid % (BN / 8)) * 8;
    const gs_index a_pass = (gs_index)A_ROWS * K, b_pass = (gs_index)B_ROWS * N;
    const gs_index b_tile = (gs_index)BK * N;
    const __half* a_next = a_src;
    const __half* b_next = b_src;

    auto issue_tile = [&](int k0, int s) {
        __half* as = As + s * BM * LDA;
        __half* bs = Bs + s * BK * LDB;
        if (!G) {  // tiles are issued in order: the source pointers step by one tile
            const __half* a = a_next;
#pragma unroll
            for (int p = 0; p < A_VECS; ++p, a += a_pass)
                gs_cp_async16(as + a_dst + p * A_ROWS * LDA, a, true);
            const __half* b = b_next;
#pragma unroll
            for (int p = 0; p < B_VECS; ++p, b += b_pass)
                gs_cp_async16(bs + b_dst + p * B_ROWS * LDB, b, true);
            a_next += BK;
            b_next += b_tile;
            return;
        }
#pragma unroll
        for (int p = 0; p < A_VECS; ++p) {
            const int e = tid + p * THREADS, r = e / (BK / 8), c = (e % (BK / 8)) * 8;
            const int gr = block_row + r, gc = k0 + c;
            if (VEC) {
                const bool ok = gr < M && gc < K;
                gs_cp_async16(&as[r * LDA + c], ok ? &A[(gs_index)gr * K + gc] : A, ok);
            } else {
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    as[r * LDA + c + q] = (gr < M && gc + q < K) ? A[(gs_index)gr * K + gc + q]
                                                                 : __float2half(0.f);
            }
        }
#pragma unroll
        for (int p = 0; p < B_VECS; ++p) {
            const int e = tid + p * THREADS, r = e / (BN / 8), c = (e % (BN / 8)) * 8;
            const int gr = k0 + r, gc = block_col + c;
            if (VEC) {
                const bool ok = gr < K && gc < N;
                gs_cp_async16(&bs[r * LDB + c], ok ? &B[(gs_index)gr * N + gc] : B, ok);
            } else {
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    bs[r * LDB + c + q] = (gr < K && gc + q < N) ? B[(gs_index)gr * N + gc + q]
                                                                 : __float2half(0.f);
            }
        }
    };

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

    const int tiles = GS_CEIL_DIV(K, BK);
    if constexpr (FB == 1) {
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < tiles) issue_tile(s * BK, s);
            gs_cp_async_commit();
        }
        int s_read = 0, s_write = STAGES - 1;  // the interior loop's ring positions
        for (int t = 0; t < tiles; ++t) {
            gs_cp_async_wait<STAGES - 2>();
            __syncthreads();
            const int next = t + STAGES - 1;
            if (next < tiles) issue_tile(next * BK, G ? next % STAGES : s_write);
            gs_cp_async_commit();
            const int sr = G ? t % STAGES : s_read;
            if (!G) {
                s_read = s_read + 1 == STAGES ? 0 : s_read + 1;
                s_write = s_write + 1 == STAGES ? 0 : s_write + 1;
            }
            const __half* as = As + sr * BM * LDA;
            const __half* bs = Bs + sr * BK * LDB;
#pragma unroll
            for (int kk = 0; kk < BK; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[FM];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[FN];
#pragma unroll
                for (int i = 0; i < FM; ++i)
                    wmma::load_matrix_sync(fa[i], as + (wm0 + i * 16) * LDA + kk, LDA);
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    wmma::load_matrix_sync(fb[j], bs + kk * LDB + wn0 + j * 16, LDB);
#pragma unroll
                for (int i = 0; i < FM; ++i)
#pragma unroll
                    for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
        }
    } else {
        // FB 2: every stage holds a K tile in flight; the fragments of step kk + 1 load
        // while step kk multiplies, and at a tile's last step the next tile's first
        // fragments, after the one barrier per K tile, which now also frees the stage just
        // read (all its fragments are in registers) for the tile STAGES ahead
        using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
        using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
        constexpr int KK = BK / 16;
        static_assert(KK % 2 == 0 && FB >= 2 && FB <= 3, "FB 2: a tile's first step in buffer 0");
        FragA fa[2][FM];
        FragB fb[2][FN];
        auto load = [&](int stage, int kk, int buf) {
            const __half* as = As + stage * BM * LDA;
            const __half* bs = Bs + stage * BK * LDB;
#pragma unroll
            for (int i = 0; i < FM; ++i)
                wmma::load_matrix_sync(fa[buf][i], as + (wm0 + i * 16) * LDA + kk * 16, LDA);
#pragma unroll
            for (int j = 0; j < FN; ++j)
                wmma::load_matrix_sync(fb[buf][j], bs + kk * 16 * LDB + wn0 + j * 16, LDB);
        };
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            if (s < tiles) issue_tile(s * BK, s);
            gs_cp_async_commit();
        }
        gs_cp_async_wait<STAGES - 1>();
        __syncthreads();
        if (FB == 2) load(0, 0, 0);
        int sr = 0;  // the stage of tile t (the interior loop counts it)
        // tile t + 1 landed and stage sr read by every warp: refill sr with tile t + STAGES
        auto turn = [&](int t) {
            gs_cp_async_wait<STAGES - 2>();
            __syncthreads();
            const int ahead = t + STAGES;
            if (ahead < tiles) issue_tile(ahead * BK, sr);
            gs_cp_async_commit();
        };
        for (int t = 0; t < tiles; ++t) {
            if (G) sr = t % STAGES;
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const int cur = FB == 2 ? kk & 1 : 0, nxt = cur ^ 1;
                if (FB == 3) {  // this step's fragments, then (last step) the barrier
                    load(sr, kk, 0);
                    if (kk + 1 == KK && t + 1 < tiles) turn(t);
                } else if (kk + 1 < KK) {
                    load(sr, kk + 1, nxt);
                } else if (t + 1 < tiles) {
                    turn(t);
                    load(sr + 1 == STAGES ? 0 : sr + 1, 0, nxt);
                }
#pragma unroll
                for (int i = 0; i < FM; ++i)
#pragma unroll
                    for (int j = 0; j < FN; ++j)
                        wmma::mma_sync(acc[i][j], fa[cur][i], fb[cur][j], acc[i][j]);
            }
            if (!G) sr = sr + 1 == STAGES ? 0 : sr + 1;
        }
    }

    gs_cp_async_wait<0>();
    __syncthreads();
    float* scratch = reinterpret_cast<float*>(smem_raw) + warp * 16 * 16;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) {
            const int r0 = block_row + wm0 + i * 16, c0 = block_col + wn0 + j * 16;
            if (r0 >= M || c0 >= N) continue;
            if (VEC && r0 + 16 <= M && c0 + 16 <= N) {
                wmma::store_matrix_sync(C + (gs_index)r0 * N + c0, acc[i][j], N,
                                        wmma::mem_row_major);
            } else {
                wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
                __syncwarp();
                for (int e = lane; e < 256; e += 32) {
                    const int r = r0 + e / 16, c = c0 + e % 16;
                    if (r < M && c < N) C[(gs_index)r * N + c] = scratch[e];
                }
                __syncwarp();
            }
        }
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int LEAN, int LB, int FB,
          int GM, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, LB - 1)
hgemm_wmma_x(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
             float* __restrict__ C) {
    int bx, by;
    gs_block_coords<GM>(bx, by);
    const bool interior = LEAN == 2 && VEC && (by + 1) * BM <= M && (bx + 1) * BN <= N &&
                          K % BK == 0;
    if (interior)
        gs_wmma_x_body<false, BM, BN, BK, WM, WN, STAGES, LEAN, FB, VEC>(M, N, K, A, B, C, bx,
                                                                          by);
    else
        gs_wmma_x_body<true, BM, BN, BK, WM, WN, STAGES, LEAN, FB, VEC>(M, N, K, A, B, C, bx,
                                                                         by);
}

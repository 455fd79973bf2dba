// Attempt source (issue 42, round 16; not a level): wmma's math (kernels/cuda/wmma.cu: a
// block tile of (BM/WM) x (BN/WN) warps of WM x WN, K tiles of BK halves in a ring of STAGES
// padded cp.async buffers, the one barrier per K tile after the tile's last fragments are
// loaded so every buffer holds a K tile in flight) in a persistent kernel, as
// mma_persistent is mma_sync's: one block per SM walks its output tiles in grouped order
// (GM tile rows walked column by column), and their K tiles form one copy stream, so the
// next output tile's first K tiles are in flight while this one's last ones multiply and
// its C is stored. The level pays a block's prologue (its first K tiles waited for) and,
// with every block of a wave ending together, its epilogue's stores in one burst; here
// only the first tile of a block waits.
// Edge fragments of C go through a warp's own 1 KB after the ring (the ring's buffers hold
// the next tile's copies by then). VEC=false (K or N not a multiple of 8) stages tiles with
// guarded element-wise loads.
#include "common.cuh"
#include "trace.cuh"
#include <cuda_fp16.h>
#include <mma.h>

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GM, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
hgemm_wmma_p(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
             float* __restrict__ C) {
    using namespace nvcuda;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int FM = WM / 16, FN = WN / 16, KK = BK / 16;
    constexpr int LDA = BK + 8, LDB = BN + 8;  // padded rows, in halves
    constexpr int A_VECS = BM * BK / 8 / THREADS, B_VECS = BK * BN / 8 / THREADS;
    constexpr int A_ROWS = THREADS / (BK / 8), B_ROWS = THREADS / (BN / 8);  // rows per pass
    static_assert(A_VECS * THREADS * 8 == BM * BK && B_VECS * THREADS * 8 == BK * BN, "loader");
    static_assert(THREADS % (BK / 8) == 0 && THREADS % (BN / 8) == 0, "copy passes");
    static_assert(BK % 16 == 0 && WM % 16 == 0 && WN % 16 == 0, "fragment shape");

    extern __shared__ __align__(128) unsigned char smem_raw[];
    __half* As = reinterpret_cast<__half*>(smem_raw);  // STAGES x BM x LDA
    __half* Bs = As + STAGES * BM * LDA;                // STAGES x BK x LDB
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    float* scratch = reinterpret_cast<float*>(Bs + STAGES * BK * LDB) + warp * 16 * 16;
    const int tiles_m = GS_CEIL_DIV(M, BM), tiles_n = GS_CEIL_DIV(N, BN);
    const int tiles = tiles_m * tiles_n, ktiles = GS_CEIL_DIV(K, BK);
    const int my_tiles = (int)blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int total = my_tiles * ktiles;  // K tiles this block consumes, all tiles together

    // ---- the copy stream: K tile ld_k of output tile ld_t, issued in order. Each operand's
    // source is one pointer stepped by a K tile (set again at a new output tile, with the
    // rows and columns that lie inside C as bits); a K tile of an output tile inside C and
    // inside K is copied without tests, as the level's interior blocks copy.
    const int a_r = tid / (BK / 8), a_c = (tid % (BK / 8)) * 8;
    const int b_r = tid / (BN / 8), b_c = (tid % (BN / 8)) * 8;
    const gs_index a_pass = (gs_index)A_ROWS * K, b_pass = (gs_index)B_ROWS * N;
    int ld_t = blockIdx.x, ld_k = 0, ld_row = 0, ld_col = 0;
    const __half* a_src = A;
    const __half* b_src = B;
    unsigned a_rows_ok = 0;  // bit p: row a_r + p * A_ROWS of the tile lies inside C
    bool b_col_ok = false;   // this thread's 8 columns of B lie inside C
    bool interior = false;   // the whole output tile lies inside C
    auto locate = [&]() {
        int bm, bn;
        gs_group_coords(ld_t, tiles_m, tiles_n, GM, bm, bn);
        ld_row = bm * BM, ld_col = bn * BN;
        a_src = A + (gs_index)(ld_row + a_r) * K + a_c;
        b_src = B + (gs_index)b_r * N + ld_col + b_c;
        a_rows_ok = 0;
#pragma unroll
        for (int p = 0; p < A_VECS; ++p) a_rows_ok |= (unsigned)(ld_row + a_r + p * A_ROWS < M) << p;
        b_col_ok = ld_col + b_c < N;
        interior = ld_row + BM <= M && ld_col + BN <= N;
    };
    if (ld_t < tiles) locate();
    auto issue = [&](int s) {  // the next K tile of the stream into buffer s
        __half* as = As + s * BM * LDA;
        __half* bs = Bs + s * BK * LDB;
        const int k0 = ld_k * BK;
        if constexpr (VEC) {
            const __half* a = a_src;
            const __half* b = b_src;
            if (interior && k0 + BK <= K) {  // the whole K tile inside A and B: no tests
#pragma unroll
                for (int p = 0; p < A_VECS; ++p, a += a_pass)
                    gs_cp_async16(as + (a_r + p * A_ROWS) * LDA + a_c, a, true);
#pragma unroll
                for (int p = 0; p < B_VECS; ++p, b += b_pass)
                    gs_cp_async16(bs + (b_r + p * B_ROWS) * LDB + b_c, b, true);
            } else {
#pragma unroll 1
                for (int p = 0; p < A_VECS; ++p, a += a_pass) {
                    const bool ok = ((a_rows_ok >> p) & 1) && k0 + a_c < K;
                    gs_cp_async16(as + (a_r + p * A_ROWS) * LDA + a_c, ok ? a : A, ok);
                }
#pragma unroll 1
                for (int p = 0; p < B_VECS; ++p, b += b_pass) {
                    const bool ok = b_col_ok && k0 + b_r + p * B_ROWS < K;
                    gs_cp_async16(bs + (b_r + p * B_ROWS) * LDB + b_c, ok ? b : B, ok);
                }
            }
            a_src += BK;
            b_src += (gs_index)BK * N;
        } else {  // element by element, a chunk at a time (not unrolled: registers)
#pragma unroll 1
            for (int p = 0; p < A_VECS; ++p) {
                const int r = a_r + p * A_ROWS, gr = ld_row + r, gc = k0 + a_c;
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    as[r * LDA + a_c + q] =
                        (gr < M && gc + q < K) ? A[(gs_index)gr * K + gc + q] : __half(0.f);
            }
#pragma unroll 1
            for (int p = 0; p < B_VECS; ++p) {
                const int r = b_r + p * B_ROWS, gr = k0 + r, gc = ld_col + b_c;
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    bs[r * LDB + b_c + q] =
                        (gr < K && gc + q < N) ? B[(gs_index)gr * N + gc + q] : __half(0.f);
            }
        }
        if (++ld_k == ktiles) {  // the stream moves on to this block's next output tile
            ld_k = 0;
            ld_t += gridDim.x;
            if (ld_t < tiles) locate();
        }
    };

#pragma unroll
    for (int s = 0; s < STAGES; ++s) {  // every buffer: a K tile in flight
        if (s < total) issue(s);
        gs_cp_async_commit();  // one group per buffer, empty or not, keeps the count exact
    }
    gs_cp_async_wait<STAGES - 1>();
    __syncthreads();

    int g = 0, sr = 0;  // K tiles consumed so far; the buffer of K tile g
    for (int i = 0; i < my_tiles; ++i) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
        for (int fi = 0; fi < FM; ++fi)
#pragma unroll
            for (int fj = 0; fj < FN; ++fj) wmma::fill_fragment(acc[fi][fj], 0.f);
        for (int kt = 0; kt < ktiles; ++kt, ++g) {
            const __half* as = As + sr * BM * LDA;
            const __half* bs = Bs + sr * BK * LDB;
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                FragA fa[FM];
                FragB fb[FN];
#pragma unroll
                for (int fi = 0; fi < FM; ++fi)
                    wmma::load_matrix_sync(fa[fi], as + (wm0 + fi * 16) * LDA + kk * 16, LDA);
#pragma unroll
                for (int fj = 0; fj < FN; ++fj)
                    wmma::load_matrix_sync(fb[fj], bs + kk * 16 * LDB + wn0 + fj * 16, LDB);
                if (kk + 1 == KK && g + 1 < total) {
                    // every warp holds K tile g's last fragments after this barrier: buffer
                    // sr takes K tile g + STAGES of the stream (near a tile's end, the next
                    // output tile's) while the last step multiplies
                    gs_cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    if (g + STAGES < total) issue(sr);
                    gs_cp_async_commit();
                }
#pragma unroll
                for (int fi = 0; fi < FM; ++fi)
#pragma unroll
                    for (int fj = 0; fj < FN; ++fj)
                        wmma::mma_sync(acc[fi][fj], fa[fi], fb[fj], acc[fi][fj]);
            }
            sr = sr + 1 == STAGES ? 0 : sr + 1;
        }
        // epilogue of output tile i, while the stream's copies for tile i + 1 are in flight:
        // whole fragments straight to C, edge ones through the warp's scratch
        int bm, bn;
        gs_group_coords(blockIdx.x + i * gridDim.x, tiles_m, tiles_n, GM, bm, bn);
#pragma unroll
        for (int fi = 0; fi < FM; ++fi)
#pragma unroll
            for (int fj = 0; fj < FN; ++fj) {
                const int r0 = bm * BM + wm0 + fi * 16, c0 = bn * BN + wn0 + fj * 16;
                if (r0 >= M || c0 >= N) continue;
                if (VEC && r0 + 16 <= M && c0 + 16 <= N) {
                    wmma::store_matrix_sync(C + (gs_index)r0 * N + c0, acc[fi][fj], N,
                                            wmma::mem_row_major);
                } else {
                    wmma::store_matrix_sync(scratch, acc[fi][fj], 16, wmma::mem_row_major);
                    __syncwarp();
                    for (int e = lane; e < 256; e += 32) {
                        const int r = r0 + e / 16, c = c0 + e % 16;
                        if (r < M && c < N) C[(gs_index)r * N + c] = scratch[e];
                    }
                    __syncwarp();
                }
            }
    }
    gs_cp_async_wait<0>();
}

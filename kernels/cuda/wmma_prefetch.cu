// Level "wmma_prefetch": wmma's WMMA-API kernel with the pipelining of mma_sync. The
// fragments of the next 16-deep step are loaded (load_matrix_sync) while the current
// step's mma_syncs run, across K tiles too: the one barrier per K tile sits before the
// tile's last step, whose fragments are already in registers, so the next tile's first
// fragment loads overlap that step's math. Blocks are walked in grouped order (SWZ block
// rows column by column) so that blocks running together share A rows and B columns in L2.
// Otherwise as wmma: 16x16x16 fragments, cp.async ring of STAGES, rows padded by 8 halves.
// VEC=false (K or N not a multiple of 8) stages the tiles with guarded element-wise
// loads; edge fragments of C go through shared memory and guarded stores.
#include "common.cuh"
#include <cuda_fp16.h>
#include <mma.h>

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SWZ, int MINB, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
hgemm_wmma_prefetch(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
           float* __restrict__ C) {
    using namespace nvcuda;
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int FM = WM / 16, FN = WN / 16;  // fragments per warp tile
    constexpr int LDA = BK + 8, LDB = BN + 8;  // padded rows, in halves
    constexpr int A_VECS = BM * BK / 8 / THREADS, B_VECS = BK * BN / 8 / THREADS;
    static_assert(A_VECS * THREADS * 8 == BM * BK && B_VECS * THREADS * 8 == BK * BN, "loader");
    static_assert(BK % 16 == 0 && WM % 16 == 0 && WN % 16 == 0, "fragment shape");

    extern __shared__ __align__(128) unsigned char smem_raw[];
    __half* As = reinterpret_cast<__half*>(smem_raw);  // STAGES x BM x LDA
    __half* Bs = As + STAGES * BM * LDA;                // STAGES x BK x LDB
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int bx, by;
    gs_block_coords<SWZ>(bx, by);
    const int block_row = by * BM, block_col = bx * BN;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

    auto issue_tile = [&](int k0, int s) {
        __half* as = As + s * BM * LDA;
        __half* bs = Bs + s * BK * LDB;
#pragma unroll(VEC ? A_VECS : 1)  // the edge path: one chunk at a time (registers)
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
#pragma unroll(VEC ? B_VECS : 1)
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

    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
    FragA fa[2][FM];  // fragments of step kk and kk+1
    FragB fb[2][FN];
    auto load_frags = [&](int s, int kk, int buf) {
        const __half* as = As + s * BM * LDA;
        const __half* bs = Bs + s * BK * LDB;
#pragma unroll
        for (int i = 0; i < FM; ++i)
            wmma::load_matrix_sync(fa[buf][i], as + (wm0 + i * 16) * LDA + kk * 16, LDA);
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma::load_matrix_sync(fb[buf][j], bs + kk * 16 * LDB + wn0 + j * 16, LDB);
    };

    const int tiles = GS_CEIL_DIV(K, BK);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        if (s < tiles) issue_tile(s * BK, s);
        gs_cp_async_commit();  // one group per stage, empty or not, keeps the count exact
    }
    gs_cp_async_wait<STAGES - 1>();
    __syncthreads();
    load_frags(0, 0, 0);
    constexpr int KK = BK / 16;
    static_assert(KK % 2 == 0, "the fragment buffers alternate across tiles");
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            const int cur = kk & 1, nxt = cur ^ 1;
            if (kk + 1 < KK) {
                load_frags(s, kk + 1, nxt);
            } else if (t + 1 < tiles) {
                // stage s's last fragments are in registers: after this barrier it is
                // refilled, and tile t+1's first fragments load under this step's math
                gs_cp_async_wait<STAGES - 2>();
                __syncthreads();
                if (t + STAGES < tiles) issue_tile((t + STAGES) * BK, s);
                gs_cp_async_commit();
                load_frags((t + 1) % STAGES, 0, nxt);
            }
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    wmma::mma_sync(acc[i][j], fa[cur][i], fb[cur][j], acc[i][j]);
        }
    }

    // Epilogue. Whole fragments on the VEC path go straight to C; edge fragments are staged
    // in this warp's slice of shared memory and written element by element with guards.
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

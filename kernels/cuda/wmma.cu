// Level "wmma" (seed L6): Tensor Cores through the WMMA API. FP16 A and B, FP32
// accumulation and FP32 C. The block tile is BM x BN; its (BM/WM) x (BN/WN) warps each own
// a WM x WN warp tile of 16x16 accumulator fragments. K tiles of BK halves are staged by
// 16-byte cp.async in a ring of STAGES shared buffers (STAGES-1 tiles in flight), rows
// padded by 8 halves so that the fragment loads (ldmatrix) of the 8 rows of a 16-byte
// column hit 8 different bank groups.
// VEC=false (K or N not a multiple of 8) stages the tiles with guarded element-wise
// loads instead; edge fragments of C go through shared memory and guarded stores.
#include "common.cuh"
#include "trace.cuh"
#include <cuda_fp16.h>
#include <mma.h>

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
hgemm_wmma(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
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
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

    auto issue_tile = [&](int k0, int s) {
        __half* as = As + s * BM * LDA;
        __half* bs = Bs + s * BK * LDB;
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
    GS_TRACE_T0_LANE();  // thread 0 of the block
    GS_TRACE_T0(TILE_BEGIN, GS_TRACE_OWN_TILE, 0);
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        GS_TRACE_T0_IF(s < tiles, LOAD_ISSUED, GS_TRACE_OWN_TILE, s);
        if (s < tiles) issue_tile(s * BK, s);
        gs_cp_async_commit();
    }
    GS_TRACE_DO(int gs_kn = 0;)  // the next step with a record kept (its own or step t + STAGES - 1's)
    GS_TRACE_DO(const auto gs_next = [](unsigned t) { const unsigned m = gs_trace.stage_mask, d = STAGES - 1; return ((t + 3u + d) & m) <= 2u + d ? t + 1u : ((t + 2u + d) | m) - 1u - d; };)
    for (int t = 0; t < tiles; ++t) {
        GS_TRACE_SPLIT(t == gs_kn);  // that step: the copy with the records (nvrtc.split_regions)
        gs_cp_async_wait<STAGES - 2>();
        __syncthreads();
        GS_TRACE_T0(DATA_READY, GS_TRACE_OWN_TILE, t);
        const int next = t + STAGES - 1;
        GS_TRACE_T0_IF(next < tiles, LOAD_ISSUED, GS_TRACE_OWN_TILE, next);
        if (next < tiles) issue_tile(next * BK, next % STAGES);
        gs_cp_async_commit();
        const __half* as = As + (t % STAGES) * BM * LDA;
        const __half* bs = Bs + (t % STAGES) * BK * LDB;
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
        GS_TRACE_T0(MMA_DONE, GS_TRACE_OWN_TILE, t);  // issued: the next barrier is where they are done
        GS_TRACE_DO(gs_kn = (int)gs_next((unsigned)t);)
        GS_TRACE_SPLIT_END();
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
    GS_TRACE_T0(TILE_END, GS_TRACE_OWN_TILE, tiles);
}

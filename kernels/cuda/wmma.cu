// Level "wmma" (seed L6): Tensor Cores through the WMMA API. FP16 A and B, FP32
// accumulation and FP32 C. The block tile is BM x BN; its (BM/WM) x (BN/WN) warps each own
// a WM x WN warp tile of 16x16 accumulator fragments. K tiles of BK halves are staged by
// 16-byte cp.async in a ring of STAGES shared buffers, rows padded by 8 halves so that the
// fragment loads (ldmatrix) of the 8 rows of a 16-byte column hit 8 different bank groups.
// All STAGES buffers hold K tiles in flight: the one barrier per K tile comes after the
// tile's last fragments are in registers (before its last 16-deep step multiplies), so the
// buffer just read is refilled at once with the tile STAGES ahead.
// Blocks whose tile lies wholly inside C, with K a multiple of BK, copy as cp_async_interior's
// interior blocks do: one source pointer per operand, stepped by a constant per K tile, the
// destinations set up once, no bounds test, the ring's buffer counted instead of taken
// modulo STAGES. The other blocks test every copy; VEC=false (K or N not a multiple of 8)
// stages their tiles with guarded element-wise loads. Both are one body, instantiated twice
// (G false and true) and chosen once per block. Edge fragments of C go through shared
// memory and guarded stores.
#include "common.cuh"
#include "trace.cuh"
#include <cuda_fp16.h>
#include <mma.h>

template <bool G, int BM, int BN, int BK, int WM, int WN, int STAGES, bool VEC>
__device__ __forceinline__ void gs_wmma_body(int M, int N, int K, const __half* __restrict__ A,
                                             const __half* __restrict__ B,
                                             float* __restrict__ C) {
    using namespace nvcuda;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int FM = WM / 16, FN = WN / 16, KK = BK / 16;  // fragments per warp tile, steps
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
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

    // the interior copies: this thread's first chunk of each operand, stepped per K tile
    const __half* a_next = A + (gs_index)(block_row + tid / (BK / 8)) * K + (tid % (BK / 8)) * 8;
    const __half* b_next = B + (gs_index)(tid / (BN / 8)) * N + block_col + (tid % (BN / 8)) * 8;
    const int a_dst = (tid / (BK / 8)) * LDA + (tid % (BK / 8)) * 8;
    const int b_dst = (tid / (BN / 8)) * LDB + (tid % (BN / 8)) * 8;
    const gs_index a_pass = (gs_index)A_ROWS * K, b_pass = (gs_index)B_ROWS * N;

    auto issue_tile = [&](int k0, int s) {  // K tile k0 / BK into buffer s (in order)
        __half* as = As + s * BM * LDA;
        __half* bs = Bs + s * BK * LDB;
        if constexpr (!G) {
            const __half* a = a_next;
#pragma unroll
            for (int p = 0; p < A_VECS; ++p, a += a_pass)
                gs_cp_async16(as + a_dst + p * A_ROWS * LDA, a, true);
            const __half* b = b_next;
#pragma unroll
            for (int p = 0; p < B_VECS; ++p, b += b_pass)
                gs_cp_async16(bs + b_dst + p * B_ROWS * LDB, b, true);
            a_next += BK;
            b_next += (gs_index)BK * N;
        } else if constexpr (VEC) {  // an edge block: every 16-byte copy tested
#pragma unroll
            for (int p = 0; p < A_VECS; ++p) {
                const int e = tid + p * THREADS, r = e / (BK / 8), c = (e % (BK / 8)) * 8;
                const int gr = block_row + r, gc = k0 + c;
                const bool ok = gr < M && gc < K;
                gs_cp_async16(&as[r * LDA + c], ok ? &A[(gs_index)gr * K + gc] : A, ok);
            }
#pragma unroll
            for (int p = 0; p < B_VECS; ++p) {
                const int e = tid + p * THREADS, r = e / (BN / 8), c = (e % (BN / 8)) * 8;
                const int gr = k0 + r, gc = block_col + c;
                const bool ok = gr < K && gc < N;
                gs_cp_async16(&bs[r * LDB + c], ok ? &B[(gs_index)gr * N + gc] : B, ok);
            }
        } else {  // K or N not a multiple of 8: element by element, a chunk at a time (the
                  // loop not unrolled, so its loads do not take the accumulators' registers)
#pragma unroll 1
            for (int p = 0; p < A_VECS; ++p) {
                const int e = tid + p * THREADS, r = e / (BK / 8), c = (e % (BK / 8)) * 8;
                const int gr = block_row + r, gc = k0 + c;
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    as[r * LDA + c + q] =
                        (gr < M && gc + q < K) ? A[(gs_index)gr * K + gc + q] : __half(0.f);
            }
#pragma unroll 1
            for (int p = 0; p < B_VECS; ++p) {
                const int e = tid + p * THREADS, r = e / (BN / 8), c = (e % (BN / 8)) * 8;
                const int gr = k0 + r, gc = block_col + c;
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    bs[r * LDB + c + q] =
                        (gr < K && gc + q < N) ? B[(gs_index)gr * N + gc + q] : __half(0.f);
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
    for (int s = 0; s < STAGES; ++s) {  // every buffer: a K tile in flight
        GS_TRACE_T0_IF(s < tiles, LOAD_ISSUED, GS_TRACE_OWN_TILE, s);
        if (s < tiles) issue_tile(s * BK, s);
        gs_cp_async_commit();
    }
    gs_cp_async_wait<STAGES - 1>();
    __syncthreads();
    GS_TRACE_T0(DATA_READY, GS_TRACE_OWN_TILE, 0);
    int sr = 0;  // the buffer of tile t
    GS_TRACE_DO(int gs_kn = 0;)  // the next step with a record kept (its own, t + 1's or t + STAGES's)
    GS_TRACE_DO(const auto gs_next = [](unsigned t) { const unsigned m = gs_trace.stage_mask, d = STAGES; return ((t + 3u + d) & m) <= 2u + d ? t + 1u : ((t + 2u + d) | m) - 1u - d; };)
    for (int t = 0; t < tiles; ++t) {
        GS_TRACE_SPLIT(t == gs_kn);  // that step: the copy with the records (nvrtc.split_regions)
        if constexpr (G) sr = t % STAGES;
        const __half* as = As + sr * BM * LDA;
        const __half* bs = Bs + sr * BK * LDB;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            FragA fa[FM];
            FragB fb[FN];
#pragma unroll
            for (int i = 0; i < FM; ++i)
                wmma::load_matrix_sync(fa[i], as + (wm0 + i * 16) * LDA + kk * 16, LDA);
#pragma unroll
            for (int j = 0; j < FN; ++j)
                wmma::load_matrix_sync(fb[j], bs + kk * 16 * LDB + wn0 + j * 16, LDB);
            if (kk + 1 == KK && t + 1 < tiles) {
                // every warp holds tile t's last fragments after this barrier: buffer sr
                // takes the tile STAGES ahead while the last step multiplies
                gs_cp_async_wait<STAGES - 2>();
                __syncthreads();
                GS_TRACE_T0(DATA_READY, GS_TRACE_OWN_TILE, t + 1);
                const int ahead = t + STAGES;
                GS_TRACE_T0_IF(ahead < tiles, LOAD_ISSUED, GS_TRACE_OWN_TILE, ahead);
                if (ahead < tiles) issue_tile(ahead * BK, sr);
                gs_cp_async_commit();
            }
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        GS_TRACE_T0(MMA_DONE, GS_TRACE_OWN_TILE, t);  // issued: the next barrier is where they are done
        if constexpr (!G) sr = sr + 1 == STAGES ? 0 : sr + 1;
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

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
hgemm_wmma(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
           float* __restrict__ C) {
    // interior: the whole tile inside C and K a multiple of BK (the copies need no guard)
    const bool interior = VEC && (int)(blockIdx.y + 1) * BM <= M &&
                          (int)(blockIdx.x + 1) * BN <= N && K % BK == 0;
    if (interior)
        gs_wmma_body<false, BM, BN, BK, WM, WN, STAGES, VEC>(M, N, K, A, B, C);
    else
        gs_wmma_body<true, BM, BN, BK, WM, WN, STAGES, VEC>(M, N, K, A, B, C);
}

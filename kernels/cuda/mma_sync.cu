// Level "mma_sync": the best pre-Hopper Tensor Core kernel. FP16 A and B, FP32
// accumulation. Instead of the WMMA API it issues the warp-level instructions itself:
// ldmatrix loads fragments from shared memory (x4: four 8x8 matrices per instruction;
// .trans for B, which is stored k-major) and mma.sync.m16n8k16 multiplies them.
// Tiles arrive by 16-byte cp.async in a ring of STAGES shared buffers; the fragments of
// the next 16-deep step are loaded while the current one multiplies, across tiles too. Shared rows are
// swizzled instead of padded: the 16-byte chunk c of row r is stored at chunk c ^ (r % 8)
// (CuTe's Swizzle<3,4,3>), so the 8 row addresses of every ldmatrix phase and of every
// copy hit 8 different bank groups.
// VEC=false (K or N not a multiple of 8) stages tiles with guarded element-wise loads.
// Blocks whose tile lies wholly inside C, with K a multiple of BK, copy as cp_async_interior's
// interior blocks do: one source pointer per operand, stepped a row pass at a time, the
// swizzled destinations set up once (a pass moves a thread by a multiple of 8 rows, so its
// chunk keeps its swizzle phase), no bounds test; the other blocks run the guarded copies.
// Both are one body, instantiated twice (G false and true) and chosen once per block.
#include "common.cuh"
#include "mma.cuh"
#include "trace.cuh"

template <bool G, int BM, int BN, int BK, int WM, int WN, int STAGES, bool VEC>
__device__ __forceinline__ void gs_mma_sync_body(int M, int N, int K,
                                                 const __half* __restrict__ A,
                                                 const __half* __restrict__ B,
                                                 float* __restrict__ C, int bx, int by) {
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MT = WM / 16, NT = WN / 8;  // m16 and n8 tiles per warp
    constexpr int A_ROW = BK * 2, B_ROW = BN * 2;  // bytes per shared row
    constexpr int A_CHUNKS = BM * BK / 8 / THREADS, B_CHUNKS = BK * BN / 8 / THREADS;
    constexpr int A_CPR = BK / 8, B_CPR = BN / 8;  // 16-byte chunks per row
    constexpr int A_RSTEP = THREADS / A_CPR, B_RSTEP = THREADS / B_CPR;  // rows per pass
    static_assert(A_CHUNKS * THREADS * 8 == BM * BK && B_CHUNKS * THREADS * 8 == BK * BN,
                  "every thread copies the same number of 16-byte chunks");
    static_assert(THREADS % A_CPR == 0 && THREADS % B_CPR == 0 && A_RSTEP % 8 == 0 &&
                      B_RSTEP % 8 == 0,
                  "a thread keeps one chunk column and one swizzle phase in every pass");
    static_assert(BK % 64 == 0 && BN % 64 == 0, "swizzle needs rows of 8 chunks or more");
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "fragment shape");

    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char* As = smem;                      // STAGES x BM x A_ROW bytes
    unsigned char* Bs = smem + STAGES * BM * A_ROW;  // STAGES x BK x B_ROW bytes
    const unsigned as_base = gs_smem_addr(As), bs_base = gs_smem_addr(Bs);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int block_row = by * BM, block_col = bx * BN;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

    // the interior copies' addressing, set up once (unused by the guarded instantiation)
    const int a_r = tid / A_CPR, a_c = tid % A_CPR, b_r = tid / B_CPR, b_c = tid % B_CPR;
    const unsigned a_dst = gs_swz<A_ROW>(a_r, a_c), b_dst = gs_swz<B_ROW>(b_r, b_c);
    const __half* a_src = A + (gs_index)(block_row + a_r) * K + a_c * 8;
    const __half* b_src = B + (gs_index)b_r * N + block_col + b_c * 8;
    const gs_index a_pass = (gs_index)A_RSTEP * K, b_pass = (gs_index)B_RSTEP * N;

    auto issue_tile = [&](int k0, int s) {
        unsigned char* as = As + s * BM * A_ROW;
        unsigned char* bs = Bs + s * BK * B_ROW;
        if constexpr (!G) {  // interior: every copy is in range
            const __half* ap = a_src + k0;
#pragma unroll
            for (int p = 0; p < A_CHUNKS; ++p, ap += a_pass)
                gs_cp_async16(as + a_dst + p * A_RSTEP * A_ROW, ap, true);
            const __half* bp = b_src + (gs_index)k0 * N;
#pragma unroll
            for (int p = 0; p < B_CHUNKS; ++p, bp += b_pass)
                gs_cp_async16(bs + b_dst + p * B_RSTEP * B_ROW, bp, true);
        } else {  // an edge block (or K not a multiple of BK): every chunk tested
#pragma unroll
            for (int p = 0; p < A_CHUNKS; ++p) {
                const int e = tid + p * THREADS, r = e / (BK / 8), c = e % (BK / 8);
                const int gr = block_row + r, gc = k0 + c * 8;
                if (VEC) {
                    const bool ok = gr < M && gc < K;
                    gs_cp_async16(as + gs_swz<A_ROW>(r, c), ok ? A + (gs_index)gr * K + gc : A,
                                  ok);
                } else {
                    __half* dst = reinterpret_cast<__half*>(as + gs_swz<A_ROW>(r, c));
#pragma unroll
                    for (int q = 0; q < 8; ++q)
                        dst[q] = (gr < M && gc + q < K) ? A[(gs_index)gr * K + gc + q]
                                                        : __half(0.f);
                }
            }
#pragma unroll
            for (int p = 0; p < B_CHUNKS; ++p) {
                const int e = tid + p * THREADS, r = e / (BN / 8), c = e % (BN / 8);
                const int gr = k0 + r, gc = block_col + c * 8;
                if (VEC) {
                    const bool ok = gr < K && gc < N;
                    gs_cp_async16(bs + gs_swz<B_ROW>(r, c), ok ? B + (gs_index)gr * N + gc : B,
                                  ok);
                } else {
                    __half* dst = reinterpret_cast<__half*>(bs + gs_swz<B_ROW>(r, c));
#pragma unroll
                    for (int q = 0; q < 8; ++q)
                        dst[q] = (gr < K && gc + q < N) ? B[(gs_index)gr * N + gc + q]
                                                        : __half(0.f);
                }
            }
        }
    };

    float acc[MT][NT][4] = {};
    unsigned a[2][MT][4], b[2][NT / 2][4];  // fragments of step kk and kk+1
    auto load_frags = [&](unsigned as, unsigned bs, int kk, int buf) {
#pragma unroll
        for (int i = 0; i < MT; ++i)  // rows lane%16, k chunk 2*kk + lane/16
            gs_ldmatrix_x4(a[buf][i], as + gs_swz<A_ROW>(wm0 + i * 16 + lane % 16,
                                                         kk * 2 + lane / 16));
#pragma unroll
        for (int j = 0; j < NT / 2; ++j) {  // matrix lane/8: k half (lane/8)%2, n half lane/16
            const int k = kk * 16 + ((lane / 8) % 2) * 8 + lane % 8;
            gs_ldmatrix_x4_trans(b[buf][j], bs + gs_swz<B_ROW>(k, (wn0 + j * 16) / 8 + lane / 16));
        }
    };
    const int tiles = GS_CEIL_DIV(K, BK);
    GS_TRACE_LANE(tid == 0);
    GS_TRACE(TILE_BEGIN, GS_TRACE_BLOCK_TILE, 0);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        GS_TRACE_IF(s < tiles, LOAD_ISSUED, GS_TRACE_BLOCK_TILE, s);
        if (s < tiles) issue_tile(s * BK, s);
        gs_cp_async_commit();
    }
    gs_cp_async_wait<STAGES - 1>();
    __syncthreads();
    GS_TRACE(DATA_READY, GS_TRACE_BLOCK_TILE, 0);
    load_frags(as_base, bs_base, 0, 0);
    constexpr int KK = BK / 16;
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        const unsigned as = as_base + s * BM * A_ROW, bs = bs_base + s * BK * B_ROW;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            const int cur = kk & 1, nxt = cur ^ 1;
            if (kk + 1 < KK) {
                load_frags(as, bs, kk + 1, nxt);
            } else if (t + 1 < tiles) {
                // the last fragments of stage s are in registers: after this barrier the
                // stage can be refilled, and tile t+1's first fragments load under the MMAs
                gs_cp_async_wait<STAGES - 2>();
                __syncthreads();
                GS_TRACE_ON(gs_tr.samples(t + 1), DATA_READY, GS_TRACE_BLOCK_TILE, t + 1);  // in the last step of tile t
                GS_TRACE_ON(t + STAGES < tiles && gs_tr.samples(t + STAGES), LOAD_ISSUED, GS_TRACE_BLOCK_TILE, t + STAGES);
                if (t + STAGES < tiles) issue_tile((t + STAGES) * BK, s);
                gs_cp_async_commit();
                const int s1 = (t + 1) % STAGES;
                load_frags(as_base + s1 * BM * A_ROW, bs_base + s1 * BK * B_ROW, 0, nxt);
            }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    gs_mma_16816(acc[i][j], a[cur][i], b[cur][j / 2][(j % 2) * 2],
                                 b[cur][j / 2][(j % 2) * 2 + 1]);
        }
        GS_TRACE_ON(gs_tr.samples(t), MMA_DONE, GS_TRACE_BLOCK_TILE, t);
    }
    gs_cp_async_wait<0>();

    gs_store_mma_acc(C, M, N, block_row + wm0 + lane / 4, block_col + wn0 + (lane % 4) * 2, acc,
                     VEC);
    GS_TRACE(TILE_END, GS_TRACE_BLOCK_TILE, tiles);
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GM, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
hgemm_mma_sync(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
               float* __restrict__ C) {
    int bx, by;
    gs_block_coords<GM>(bx, by);
    // interior: the whole tile inside C and K a multiple of BK (the copies need no guard)
    const bool interior = VEC && (by + 1) * BM <= M && (bx + 1) * BN <= N && K % BK == 0;
    if (interior)
        gs_mma_sync_body<false, BM, BN, BK, WM, WN, STAGES, VEC>(M, N, K, A, B, C, bx, by);
    else
        gs_mma_sync_body<true, BM, BN, BK, WM, WN, STAGES, VEC>(M, N, K, A, B, C, bx, by);
}

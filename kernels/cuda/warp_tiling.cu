// Level "warp_tiling": the block tile is split into warp tiles (WM x WN), each walked in
// WMITER x WNITER sub-tiles of WSUBM x WSUBN; inside a sub-tile the 32 lanes sit on a
// (WSUBM/TM) x (WSUBN/TN) grid and own TM x TN outputs. With 4x4 pieces spaced a sub-tile
// apart, every shared read is a float4 that the lanes of a quarter-warp take from
// consecutive or identical addresses: no bank conflicts, and a lane's 16x8 outputs need
// six LDS.128 per k for 128 FMAs. Two shared stages with register prefetch (as in double_buffer)
// overlap the next tile's global loads with this tile's math. The A tile is stored
// transposed with rows padded by 4 floats, which makes the transposing stores
// conflict-free while keeping 16-byte alignment.
#include "common.cuh"
#include "trace.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM, int TN,
          int MINB, int GM, int PF, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
sgemm_warp_tiling(int M, int N, int K, const float* __restrict__ A,
                  const float* __restrict__ B, float* __restrict__ C) {
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    constexpr int LANE_COLS = WSUBN / TN;
    static_assert((WSUBM / TM) * LANE_COLS == 32, "a sub-tile must hold exactly one warp");
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int LDA = BM + 4;  // padded row of the transposed A tile
    constexpr int A_LOADS = BM * BK / 4 / THREADS, B_LOADS = BK * BN / 4 / THREADS;
    static_assert(A_LOADS * THREADS * 4 == BM * BK && B_LOADS * THREADS * 4 == BK * BN,
                  "every thread loads the same number of float4");

    __shared__ __align__(16) float As[2][BK * LDA];
    __shared__ __align__(16) float Bs[2][BK * BN];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int bx, by;
    gs_block_coords<GM>(bx, by);
    const int block_row = by * BM, block_col = bx * BN;
    const int m0 = (warp / WARPS_N) * WM + (lane / LANE_COLS) * TM;
    const int n0 = (warp % WARPS_N) * WN + (lane % LANE_COLS) * TN;

    float4 a_reg[A_LOADS], b_reg[B_LOADS];
    auto load_tile = [&](int k0) {
#pragma unroll
        for (int p = 0; p < A_LOADS; ++p) {
            const int e = tid + p * THREADS, r = e / (BK / 4), c = (e % (BK / 4)) * 4;
            a_reg[p] = gs_load4<VEC>(A, M, K, block_row + r, k0 + c);
        }
#pragma unroll
        for (int p = 0; p < B_LOADS; ++p) {
            const int e = tid + p * THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;
            b_reg[p] = gs_load4<VEC>(B, K, N, k0 + r, block_col + c);
        }
    };
    auto store_tile = [&](int s) {
#pragma unroll
        for (int p = 0; p < A_LOADS; ++p) {
            const int e = tid + p * THREADS, r = e / (BK / 4), c = (e % (BK / 4)) * 4;
            As[s][(c + 0) * LDA + r] = a_reg[p].x;
            As[s][(c + 1) * LDA + r] = a_reg[p].y;
            As[s][(c + 2) * LDA + r] = a_reg[p].z;
            As[s][(c + 3) * LDA + r] = a_reg[p].w;
        }
#pragma unroll
        for (int p = 0; p < B_LOADS; ++p) {
            const int e = tid + p * THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[s][r * BN + c]) = b_reg[p];
        }
    };

    float acc[WMITER * TM][WNITER * TN] = {};
    const int tiles = GS_CEIL_DIV(K, BK);
    GS_TRACE_LANE(tid == 0);
    GS_TRACE(TILE_BEGIN, GS_TRACE_BLOCK_TILE, 0);
    GS_TRACE(LOAD_ISSUED, GS_TRACE_BLOCK_TILE, 0);
    load_tile(0);
    store_tile(0);
    __syncthreads();
    GS_TRACE(DATA_READY, GS_TRACE_BLOCK_TILE, 0);
    for (int t = 0; t < tiles; ++t) {
        const bool more = t + 1 < tiles;
        GS_TRACE_DO(const bool gs_on = gs_tr.samples(t), gs_on1 = more && gs_tr.samples(t + 1);)  // the same in every thread
        GS_TRACE_ON(gs_on1, LOAD_ISSUED, GS_TRACE_BLOCK_TILE, t + 1);  // into registers, stored after the math
        if (more) load_tile((t + 1) * BK);  // in flight during the math below
        gs_warp_tile_mma<BK, LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN, (PF != 0)>(
            As[t & 1], Bs[t & 1], m0, n0, acc);
        if (more) store_tile((t + 1) & 1);
        __syncthreads();
        GS_TRACE_ON(gs_on, MMA_DONE, GS_TRACE_BLOCK_TILE, t);  // and step t + 1's tile in shared memory:
        GS_TRACE_ON(gs_on1, DATA_READY, GS_TRACE_BLOCK_TILE, t + 1);
    }
    gs_warp_tile_store<VEC, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(C, M, N, block_row + m0,
                                                                 block_col + n0, acc);
    GS_TRACE(TILE_END, GS_TRACE_BLOCK_TILE, tiles);
}

// Level "register_2d" (seed L5): 2D register blocking. A BM x BN block tile, BK-deep
// K steps; each of the (BM/TM)*(BN/TN) threads keeps a TM x TN tile of C in registers.
// Per k it reads TM values of A and TN values of B from shared memory into registers and
// does TM*TN FMAs with them: 64 FMAs per 16 shared loads at 8x8, against 1 per 2 before.
// The launch bounds ask for two blocks per SM, so ptxas keeps to 128 registers: with 152
// (no minimum stated) one block ran per SM and its barrier and loads stood bare; with two,
// one block's loads hide behind the other's FMAs (measured 2026-12-02: 0.85 -> 1.18 of
// siboehm's kernel 5, the same technique, at 4096^3).
#include "common.cuh"
#include "trace.cuh"

template <int BM, int BN, int BK, int TM, int TN, bool VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 2)
sgemm_register_2d(int M, int N, int K, const float* __restrict__ A,
                  const float* __restrict__ B, float* __restrict__ C) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr int A_STRIDE = THREADS / BK;  // rows of the A tile loaded per pass
    constexpr int B_STRIDE = THREADS / BN;  // rows of the B tile loaded per pass
    static_assert(THREADS % BK == 0 && BM % A_STRIDE == 0, "A tile loader shape");
    static_assert(THREADS % BN == 0 && BK % B_STRIDE == 0, "B tile loader shape");

    __shared__ float As[BM * BK];  // row-major BM x BK
    __shared__ float Bs[BK * BN];  // row-major BK x BN
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int a_row = tid / BK, a_col = tid % BK;
    const int b_row = tid / BN, b_col = tid % BN;

    float acc[TM][TN] = {};
    float rm[TM], rn[TN];
    GS_TRACE_T0_LANE();  // thread 0 of the block
    GS_TRACE_T0(TILE_BEGIN, GS_TRACE_OWN_TILE, 0);
    for (int k0 = 0; k0 < K; k0 += BK) {
        GS_TRACE_T0(LOAD_ISSUED, GS_TRACE_OWN_TILE, k0 / BK);
#pragma unroll
        for (int p = 0; p < BM / A_STRIDE; ++p) {
            const int r = a_row + p * A_STRIDE, gr = block_row + r, gc = k0 + a_col;
            As[r * BK + a_col] = (gr < M && gc < K) ? A[(gs_index)gr * K + gc] : 0.f;
        }
#pragma unroll
        for (int p = 0; p < BK / B_STRIDE; ++p) {
            const int r = b_row + p * B_STRIDE, gr = k0 + r, gc = block_col + b_col;
            Bs[r * BN + b_col] = (gr < K && gc < N) ? B[(gs_index)gr * N + gc] : 0.f;
        }
        __syncthreads();
        GS_TRACE_T0(DATA_READY, GS_TRACE_OWN_TILE, k0 / BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) rm[i] = As[(trow * TM + i) * BK + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) rn[j] = Bs[k * BN + tcol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
        }
        __syncthreads();
        GS_TRACE_T0(MMA_DONE, GS_TRACE_OWN_TILE, k0 / BK);
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = block_row + trow * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = block_col + tcol * TN + j;
            if (r < M && c < N) C[(gs_index)r * N + c] = acc[i][j];
        }
    }
    GS_TRACE_T0(TILE_END, GS_TRACE_OWN_TILE, GS_CEIL_DIV(K, BK));
}

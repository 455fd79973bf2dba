// Level "naive" (seed L1): one thread per element of C.
// threadIdx.x walks ROWS of C, so the 32 lanes of a warp touch A and C one row apart:
// every lane needs its own 32-byte sector (uncoalesced). See coalesced.cu for the fix.
#include "common.cuh"
#include "trace.cuh"

template <int BLOCK, bool VEC>
__global__ void sgemm_naive(int M, int N, int K, const float* __restrict__ A,
                            const float* __restrict__ B, float* __restrict__ C) {
    GS_TRACE_T0_LANE();  // thread 0: the block's begin and end (no K stages)
    GS_TRACE_T0(TILE_BEGIN, GS_TRACE_OWN_TILE, 0);
    const int row = blockIdx.x * BLOCK + threadIdx.x;
    const int col = blockIdx.y * BLOCK + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.f;
        for (int k = 0; k < K; ++k) acc += A[(gs_index)row * K + k] * B[(gs_index)k * N + col];
        C[(gs_index)row * N + col] = acc;
    }
    GS_TRACE_T0(TILE_END, GS_TRACE_OWN_TILE, K);
}

// Level "coalesced": the same one-thread-per-element kernel as naive.cu, with the thread
// mapping turned round: threadIdx.x walks COLUMNS of C. A warp now reads 32 consecutive
// floats of B (one 128-byte line), broadcasts one float of A, and writes 32 consecutive
// floats of C.
#include "common.cuh"
#include "trace.cuh"

template <int BLOCK, bool VEC>
__global__ void sgemm_coalesced(int M, int N, int K, const float* __restrict__ A,
                                const float* __restrict__ B, float* __restrict__ C) {
    GS_TRACE_T0_LANE();  // thread 0: the block's begin and end (no K stages)
    GS_TRACE_T0(TILE_BEGIN, GS_TRACE_OWN_TILE, 0);
    const int col = blockIdx.x * BLOCK + threadIdx.x;
    const int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.f;
        for (int k = 0; k < K; ++k) acc += A[(gs_index)row * K + k] * B[(gs_index)k * N + col];
        C[(gs_index)row * N + col] = acc;
    }
    GS_TRACE_T0(TILE_END, GS_TRACE_OWN_TILE, K);
}

// Level "double_buffer" (seed L4): smem_tiled.cu with two shared-memory stages.
// While the block computes on stage s, each thread has already issued the global loads
// of the next K tile into registers; after the math it stores them into stage s^1.
// The loads' latency hides behind the math, and one barrier per K step suffices
// (stage s^1 was last read before the previous barrier).
// The rows are NOT padded: on the H200 the padded tiles of smem_padded.cu were slower, not
// faster (the access had no conflicts, and a 33-word row breaks the 16-byte alignment
// that lets a thread read four words of its As row with one LDS.128).
#include "common.cuh"
#include "trace.cuh"

template <int TILE, bool VEC>
GS_TRACE_DO(__launch_bounds__(TILE * TILE, 2048 / (TILE * TILE)))  // the plain build's 2 blocks an SM (32 registers)
__global__ void sgemm_double_buffer(int M, int N, int K, const float* __restrict__ A,
                                    const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[2][TILE][TILE];
    __shared__ float Bs[2][TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int tiles = GS_CEIL_DIV(K, TILE);

    auto load_a = [&](int k0) {
        return (row < M && k0 + tx < K) ? A[(gs_index)row * K + k0 + tx] : 0.f;
    };
    auto load_b = [&](int k0) {
        return (k0 + ty < K && col < N) ? B[(gs_index)(k0 + ty) * N + col] : 0.f;
    };

    GS_TRACE_LANE(tx == 0 && ty == 0);
    GS_TRACE(TILE_BEGIN, GS_TRACE_BLOCK_TILE, 0);
    GS_TRACE(LOAD_ISSUED, GS_TRACE_BLOCK_TILE, 0);
    As[0][ty][tx] = load_a(0);
    Bs[0][ty][tx] = load_b(0);
    __syncthreads();
    GS_TRACE(DATA_READY, GS_TRACE_BLOCK_TILE, 0);
    float acc = 0.f;
    GS_TRACE_DO(int gs_kn = 0;)  // the next step with a record kept (its own or step t + 1's)
    GS_TRACE_DO(const auto gs_next = [](unsigned t) { const unsigned m = gs_trace.stage_mask; return ((t + 4u) & m) <= 3u ? t + 1u : ((t + 3u) | m) - 2u; };)
    for (int t = 0; t < tiles; ++t) {
        GS_TRACE_SPLIT(t == gs_kn);  // that step: the copy with the records (nvrtc.split_regions)
        const int s = t & 1;
        const bool more = t + 1 < tiles;
        float a_next = 0.f, b_next = 0.f;
        GS_TRACE_IF(more, LOAD_ISSUED, GS_TRACE_BLOCK_TILE, t + 1);  // into registers, stored after the math
        if (more) {  // issue the next tile's loads before the math that hides them
            a_next = load_a((t + 1) * TILE);
            b_next = load_b((t + 1) * TILE);
        }
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[s][ty][k] * Bs[s][k][tx];
        if (more) {
            As[s ^ 1][ty][tx] = a_next;
            Bs[s ^ 1][ty][tx] = b_next;
        }
        __syncthreads();
        GS_TRACE(MMA_DONE, GS_TRACE_BLOCK_TILE, t);  // and step t + 1's tile in shared memory:
        GS_TRACE_IF(more, DATA_READY, GS_TRACE_BLOCK_TILE, t + 1);
        GS_TRACE_DO(gs_kn = (int)gs_next((unsigned)t);)
        GS_TRACE_SPLIT_END();
    }
    if (row < M && col < N) C[(gs_index)row * N + col] = acc;
    GS_TRACE(TILE_END, GS_TRACE_BLOCK_TILE, tiles);
}

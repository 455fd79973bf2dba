// Level "smem_tiled" (seed L2): a TILE x TILE block of C per thread block. Each step
// along K stages a TILE x TILE tile of A and of B in shared memory (one element per
// thread, coalesced), then every thread reads a row of As and a column of Bs from there.
// Global traffic drops by a factor of TILE.
#include "common.cuh"
#include "trace.cuh"

template <int TILE, bool VEC>
GS_TRACE_DO(__launch_bounds__(TILE * TILE, 2048 / (TILE * TILE)))  // the plain build's 2 blocks an SM (32 registers)
__global__ void sgemm_smem_tiled(int M, int N, int K, const float* __restrict__ A,
                                 const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.f;
    GS_TRACE_T0_LANE();  // thread 0 of the block
    GS_TRACE_T0(TILE_BEGIN, GS_TRACE_OWN_TILE, 0);
    GS_TRACE_DO(int gs_kn = 0;)  // the next K step (times TILE) whose records are kept
    GS_TRACE_DO(const auto gs_next = [](unsigned k) { const unsigned m = gs_trace.stage_mask; return ((k + 3u) & m) <= 2u ? k + 1u : ((k + 2u) | m) - 1u; };)
    for (int k0 = 0; k0 < K; k0 += TILE) {
        GS_TRACE_SPLIT_RUN(k0 == gs_kn, k0 + TILE < min(K, gs_kn), k0 += TILE);  // that step: the copy with the records; the steps to the next: the plain loop (nvrtc.split_regions)
        GS_TRACE_T0(LOAD_ISSUED, GS_TRACE_OWN_TILE, (int)((unsigned)k0 / TILE));
        // out-of-range elements are staged as zeros, so the inner loop needs no guard
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(gs_index)row * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(gs_index)(k0 + ty) * N + col] : 0.f;
        __syncthreads();
        GS_TRACE_T0(DATA_READY, GS_TRACE_OWN_TILE, (int)((unsigned)k0 / TILE));
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
        GS_TRACE_T0(MMA_DONE, GS_TRACE_OWN_TILE, (int)((unsigned)k0 / TILE));
        GS_TRACE_DO(gs_kn = TILE * (int)gs_next((unsigned)k0 / TILE);)
        GS_TRACE_SPLIT_END();
    }
    if (row < M && col < N) C[(gs_index)row * N + col] = acc;
    GS_TRACE_T0(TILE_END, GS_TRACE_OWN_TILE, GS_CEIL_DIV(K, TILE));
}

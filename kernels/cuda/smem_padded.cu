// Level "smem_padded" (seed L3): smem_tiled.cu with every shared row padded by one word
// (TILE x (TILE+1)), the textbook bank-conflict fix: element (r, c) moves to bank
// (r * (TILE+1) + c) % 32, so a column of the tile spreads over all 32 banks.
// Whether this removes anything depends on the access: here a warp reads one ROW of As
// (a broadcast) and consecutive words of a row of Bs, which had no conflicts to begin
// with. The registry records what Nsight Compute counted before and after.
#include "common.cuh"
#include "trace.cuh"

template <int TILE, bool VEC>
__global__ void sgemm_smem_padded(int M, int N, int K, const float* __restrict__ A,
                                  const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.f;
    GS_TRACE_T0_LANE();  // thread 0 of the block
    GS_TRACE_T0(TILE_BEGIN, GS_TRACE_OWN_TILE, 0);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        GS_TRACE_SPLIT((((unsigned)(k0 / TILE) + 2u) & gs_trace.stage_mask) <= 2u);  // a sampled step: the copy with the records (nvrtc.split_regions)
        GS_TRACE_T0(LOAD_ISSUED, GS_TRACE_OWN_TILE, k0 / TILE);
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(gs_index)row * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(gs_index)(k0 + ty) * N + col] : 0.f;
        __syncthreads();
        GS_TRACE_T0(DATA_READY, GS_TRACE_OWN_TILE, k0 / TILE);
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
        GS_TRACE_T0(MMA_DONE, GS_TRACE_OWN_TILE, k0 / TILE);
        GS_TRACE_SPLIT_END();
    }
    if (row < M && col < N) C[(gs_index)row * N + col] = acc;
    GS_TRACE_T0(TILE_END, GS_TRACE_OWN_TILE, GS_CEIL_DIV(K, TILE));
}

// Level "smem_padded" (seed L3): smem_tiled.cu with every shared row padded by one word
// (TILE x (TILE+1)), the textbook bank-conflict fix: element (r, c) moves to bank
// (r * (TILE+1) + c) % 32, so a column of the tile spreads over all 32 banks.
// Whether this removes anything depends on the access: here a warp reads one ROW of As
// (a broadcast) and consecutive words of a row of Bs, which had no conflicts to begin
// with. The registry records what Nsight Compute counted before and after.
#include "common.cuh"

template <int TILE, bool VEC>
__global__ void sgemm_smem_padded(int M, int N, int K, const float* __restrict__ A,
                                  const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(gs_index)row * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(gs_index)(k0 + ty) * N + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(gs_index)row * N + col] = acc;
}

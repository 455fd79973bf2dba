// Attempts on register_2d (issue 42), not a level: kernels/cuda/register_2d.cu with switches
// that benchmarks/kernel_attempts.py times against siboehm's kernel 5 (the same technique)
// and cuBLAS FP32. With LB = KU = 1 the code is register_2d's as it was before issue 42's
// run (the same SASS); with LB = 3, KU = 1 it is the level's since (two blocks per SM).
//   LB    the launch bounds' minimum blocks per SM, plus one (1: none given, as register_2d;
//         2: __launch_bounds__(256, 1); 3: (256, 2)). Read in the SASS (NVRTC 13.0, sm_90a):
//         register_2d takes 152 registers, so one block of 256 threads per SM (8 warps);
//         siboehm's kernel 5, the same tile, declares (256, 1) and takes 96, two blocks per
//         SM. Here (256, 1) alone gives 127 registers (two blocks), the same loop otherwise.
//   KU    the k loop inside a K tile: 1 unrolled whole (register_2d: each thread's 8 A rows
//         are read for all 8 k at once as LDS.128 pairs, 64 registers of A live); 2 not
//         unrolled (8 scalar A loads and 2 LDS.128 of B per k, as kernel 5 compiles).
#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN, int LB, int KU, bool VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), LB - 1)
sgemm_register_2d_x(int M, int N, int K, const float* __restrict__ A,
                    const float* __restrict__ B, float* __restrict__ C) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr int A_STRIDE = THREADS / BK;
    constexpr int B_STRIDE = THREADS / BN;
    static_assert(THREADS % BK == 0 && BM % A_STRIDE == 0, "A tile loader shape");
    static_assert(THREADS % BN == 0 && BK % B_STRIDE == 0, "B tile loader shape");
    static_assert(KU == 1 || KU == 2, "KU: 1 or 2");

    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int a_row = tid / BK, a_col = tid % BK;
    const int b_row = tid / BN, b_col = tid % BN;

    float acc[TM][TN] = {};
    float rm[TM], rn[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
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
        auto step = [&](int k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) rm[i] = As[(trow * TM + i) * BK + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) rn[j] = Bs[k * BN + tcol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
        };
        if (KU == 1) {
#pragma unroll
            for (int k = 0; k < BK; ++k) step(k);
        } else {
#pragma unroll 1
            for (int k = 0; k < BK; ++k) step(k);
        }
        __syncthreads();
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
}

// Level "vectorized": register_2d.cu with 128-bit memory operations.
// Global loads of A and B are float4 (one 16-byte load per lane instead of four). The A
// tile is stored TRANSPOSED in shared memory (As[k][m]), so the TM values of A a thread
// needs at step k are contiguous, like its TN values of B: both are read with LDS.128.
// C is written with float4 stores. VEC=false (K or N not a multiple of 4) runs the same
// kernel with element-wise guarded loads and stores.
#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN, bool VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_vectorized(int M, int N, int K, const float* __restrict__ A,
                 const float* __restrict__ B, float* __restrict__ C) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr int A_STRIDE = THREADS / (BK / 4);  // A rows per pass, a float4 of k each
    constexpr int B_STRIDE = THREADS / (BN / 4);  // B rows per pass
    static_assert(BM % A_STRIDE == 0 && BK % B_STRIDE == 0, "loader shape");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tile must be float4 multiples");

    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int a_row = tid / (BK / 4), a_col = (tid % (BK / 4)) * 4;
    const int b_row = tid / (BN / 4), b_col = (tid % (BN / 4)) * 4;

    float acc[TM][TN] = {};
    float rm[TM], rn[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int p = 0; p < BM / A_STRIDE; ++p) {
            const int r = a_row + p * A_STRIDE, gr = block_row + r, gc = k0 + a_col;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (VEC) {
                if (gr < M && gc < K) v = *reinterpret_cast<const float4*>(&A[(gs_index)gr * K + gc]);
            } else if (gr < M) {
                const float* src = &A[(gs_index)gr * K];
                v.x = gc < K ? src[gc] : 0.f;
                v.y = gc + 1 < K ? src[gc + 1] : 0.f;
                v.z = gc + 2 < K ? src[gc + 2] : 0.f;
                v.w = gc + 3 < K ? src[gc + 3] : 0.f;
            }
            As[(a_col + 0) * BM + r] = v.x;
            As[(a_col + 1) * BM + r] = v.y;
            As[(a_col + 2) * BM + r] = v.z;
            As[(a_col + 3) * BM + r] = v.w;
        }
#pragma unroll
        for (int p = 0; p < BK / B_STRIDE; ++p) {
            const int r = b_row + p * B_STRIDE, gr = k0 + r, gc = block_col + b_col;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (VEC) {
                if (gr < K && gc < N) v = *reinterpret_cast<const float4*>(&B[(gs_index)gr * N + gc]);
            } else if (gr < K) {
                const float* src = &B[(gs_index)gr * N];
                v.x = gc < N ? src[gc] : 0.f;
                v.y = gc + 1 < N ? src[gc + 1] : 0.f;
                v.z = gc + 2 < N ? src[gc + 2] : 0.f;
                v.w = gc + 3 < N ? src[gc + 3] : 0.f;
            }
            *reinterpret_cast<float4*>(&Bs[r * BN + b_col]) = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&rm[i]) =
                    *reinterpret_cast<const float4*>(&As[k * BM + trow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&rn[j]) =
                    *reinterpret_cast<const float4*>(&Bs[k * BN + tcol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = block_row + trow * TM + i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int c = block_col + tcol * TN + j;
            float* dst = &C[(gs_index)r * N + c];
            if (VEC) {
                if (c < N) *reinterpret_cast<float4*>(dst) =
                    make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    if (c + q < N) dst[q] = acc[i][j + q];
            }
        }
    }
}

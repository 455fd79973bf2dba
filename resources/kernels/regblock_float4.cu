// An example user kernel for gemmscope (docs/user-kernels.md): what a learner writes
// after the register-blocking level. Each thread still keeps a TM x TN tile of C in
// registers, but every load is 128 bits wide: A and B come from global memory as float4,
// the A tile is stored transposed in shared memory (As[k][m]) so that a thread's TM
// values of A for one k are contiguous, and both register fragments are read from
// shared memory as float4 too.
//
// The kernel follows the ladder's conventions: row-major A (M x K), B (K x N), C (M x N),
// signature (M, N, K, A, B, C), correct for any M, N, K >= 1. The last template flag VEC
// is the fast path (K and N multiples of 4: every float4 aligned and wholly inside or
// outside the matrix); VEC=false guards each element. The spec says `vector = 4`, so
// gemmscope instantiates both and picks by shape.

template <bool VEC>
__device__ __forceinline__ float4 load4(const float* __restrict__ P, int rows, int cols,
                                        int r, int c) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (r >= rows) return v;
    const float* row = P + (long long)r * cols;
    if (VEC) {
        if (c < cols) v = *reinterpret_cast<const float4*>(row + c);
    } else {
        if (c < cols) v.x = row[c];
        if (c + 1 < cols) v.y = row[c + 1];
        if (c + 2 < cols) v.z = row[c + 2];
        if (c + 3 < cols) v.w = row[c + 3];
    }
    return v;
}

template <int BM, int BN, int BK, int TM, int TN, bool VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
regblock_float4(int M, int N, int K, const float* __restrict__ A,
                const float* __restrict__ B, float* __restrict__ C) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr int A_VECS = BM * BK / 4;  // float4s of one A tile
    constexpr int B_VECS = BK * BN / 4;
    static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, "float4 tiles");
    static_assert(BM % TM == 0 && BN % TN == 0, "the threads cover the block tile");
    static_assert(A_VECS % THREADS == 0 && B_VECS % THREADS == 0, "whole loads per thread");

    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];  // Bs[k * BN + n]
    const int tid = threadIdx.x;
    const int trow = tid / (BN / TN), tcol = tid % (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int p = 0; p < A_VECS / THREADS; ++p) {
            const int idx = tid + p * THREADS;
            const int m = idx / (BK / 4), k = (idx % (BK / 4)) * 4;
            const float4 v = load4<VEC>(A, M, K, row0 + m, k0 + k);
            As[(k + 0) * BM + m] = v.x;
            As[(k + 1) * BM + m] = v.y;
            As[(k + 2) * BM + m] = v.z;
            As[(k + 3) * BM + m] = v.w;
        }
#pragma unroll
        for (int p = 0; p < B_VECS / THREADS; ++p) {
            const int idx = tid + p * THREADS;
            const int k = idx / (BN / 4), n = (idx % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[k * BN + n]) = load4<VEC>(B, K, N, k0 + k, col0 + n);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&a[i]) =
                    *reinterpret_cast<const float4*>(&As[k * BM + trow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&b[j]) =
                    *reinterpret_cast<const float4*>(&Bs[k * BN + tcol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + trow * TM + i;
        if (r >= M) break;
        float* out = C + (long long)r * N;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int c = col0 + tcol * TN + j;
            if (VEC) {
                if (c < N)
                    *reinterpret_cast<float4*>(out + c) =
                        make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    if (c + q < N) out[c + q] = acc[i][j + q];
            }
        }
    }
}

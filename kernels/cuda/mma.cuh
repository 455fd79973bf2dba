// The warp-level Tensor Core helpers of the mma.sync levels (mma_sync.cu, mma_persistent.cu,
// mma_tma.cu): the swizzled shared layout, ldmatrix, mma.sync.m16n8k16 (FP16 in, FP32
// accumulate) and the store of a warp's accumulators.
#pragma once
#include <cuda_fp16.h>

// byte offset of 16-byte chunk c of row r in a swizzled tile whose rows are ROW_BYTES long
template <int ROW_BYTES>
__device__ __forceinline__ int gs_swz(int r, int c) {
    return r * ROW_BYTES + ((c ^ (r & 7)) << 4);
}

__device__ __forceinline__ void gs_ldmatrix_x4(unsigned (&d)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(addr));
}
__device__ __forceinline__ void gs_ldmatrix_x4_trans(unsigned (&d)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(addr));
}
__device__ __forceinline__ void gs_mma_16816(float (&d)[4], const unsigned (&a)[4],
                                             unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Stores a warp's MT x NT accumulator fragments of m16n8 to row-major C (M x N): c0, c1 of a
// fragment at row lane/4, columns 2*(lane%4)+{0,1}; c2, c3 eight rows down. row0 and col0 are
// the warp's first row and column plus this lane's offset. pairs: one 8-byte store per two
// columns (N even, so every row starts 8-byte aligned), written as one (common.cuh's
// gs_st_global2: the build leaves NVVM's vectorizer off, which would leave a float2 copy as
// two stores); otherwise element by element.
template <int MT, int NT>
__device__ __forceinline__ void gs_store_mma_acc(float* __restrict__ C, int M, int N, int row0,
                                                 int col0, const float (&acc)[MT][NT][4],
                                                 bool pairs) {
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = row0 + mi * 16 + h * 8;
            const bool row_in = r < M;  // a predicate, not a branch around the asm store
            float* dst_row = C + (gs_index)r * N;
#pragma unroll
            for (int nj = 0; nj < NT; ++nj) {
                const int c = col0 + nj * 8;
                float* dst = dst_row + c;
                if (pairs) {
                    gs_st_global2(row_in && c < N, dst, acc[mi][nj][2 * h],
                                  acc[mi][nj][2 * h + 1]);
                } else {
                    if (row_in && c < N) dst[0] = acc[mi][nj][2 * h];
                    if (row_in && c + 1 < N) dst[1] = acc[mi][nj][2 * h + 1];
                }
            }
        }
}

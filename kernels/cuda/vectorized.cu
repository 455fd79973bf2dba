// Level "vectorized": register_2d.cu with 128-bit memory operations.
// Global loads of A and B are float4 (one 16-byte load per lane instead of four). The A
// tile is stored TRANSPOSED in shared memory (As[k][m]), so the TM values of A a thread
// needs at step k are contiguous, like its TN values of B: both are read with LDS.128.
// C is written with float4 stores. VEC=false (K or N not a multiple of 4) runs the same
// kernel with element-wise guarded loads and stores (gs_load4/gs_store4 in common.cuh).
#include "common.cuh"
#include "trace.cuh"

// Eight floats from shared memory (16-byte aligned) with two ld.shared.v4, i.e. LDS.128.
// Written as float4 loads, NVRTC 13.0 and 13.5 sometimes split one of the K loop's loads
// into a v4 load with a lane unused (PTX `used_bytes_mask`) plus a scalar load of that
// lane, depending on the heap addresses of the compiling process, so the kernel had an
// extra LDS in some processes only. NVVM cannot split an asm load, and ptxas schedules it
// like any other. Two loads per asm share one address register (one register per load
// ran 4% slower on the H200).
__device__ __forceinline__ void lds128x2(float* dst, const float* smem) {
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%8];\n\t"
                 "ld.shared.v4.f32 {%4, %5, %6, %7}, [%8+16];\n"
                 : "=f"(dst[0]), "=f"(dst[1]), "=f"(dst[2]), "=f"(dst[3]),
                   "=f"(dst[4]), "=f"(dst[5]), "=f"(dst[6]), "=f"(dst[7])
                 : "r"(gs_smem_addr(smem))
                 : "memory");
}

template <int BM, int BN, int BK, int TM, int TN, bool VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_vectorized(int M, int N, int K, const float* __restrict__ A,
                 const float* __restrict__ B, float* __restrict__ C) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr int A_STRIDE = THREADS / (BK / 4);  // A rows per pass, a float4 of k each
    constexpr int B_STRIDE = THREADS / (BN / 4);  // B rows per pass
    static_assert(BM % A_STRIDE == 0 && BK % B_STRIDE == 0, "loader shape");
    static_assert(TM % 8 == 0 && TN % 8 == 0, "fragments are read 8 floats at a time");

    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int a_row = tid / (BK / 4), a_col = (tid % (BK / 4)) * 4;
    const int b_row = tid / (BN / 4), b_col = (tid % (BN / 4)) * 4;

    float acc[TM][TN] = {};
    float rm[TM], rn[TN];
    GS_TRACE_LANE(tid == 0);
    GS_TRACE(TILE_BEGIN, GS_TRACE_BLOCK_TILE, 0);
    for (int k0 = 0; k0 < K; k0 += BK) {
        GS_TRACE_DO(const bool gs_on = gs_tr.samples(k0 / BK);)  // this step recorded: the same in every thread
        GS_TRACE_ON(gs_on, LOAD_ISSUED, GS_TRACE_BLOCK_TILE, k0 / BK);
#pragma unroll
        for (int p = 0; p < BM / A_STRIDE; ++p) {
            const int r = a_row + p * A_STRIDE;
            const float4 v = gs_load4<VEC>(A, M, K, block_row + r, k0 + a_col);
            As[(a_col + 0) * BM + r] = v.x;
            As[(a_col + 1) * BM + r] = v.y;
            As[(a_col + 2) * BM + r] = v.z;
            As[(a_col + 3) * BM + r] = v.w;
        }
#pragma unroll
        for (int p = 0; p < BK / B_STRIDE; ++p) {
            const int r = b_row + p * B_STRIDE;
            *reinterpret_cast<float4*>(&Bs[r * BN + b_col]) =
                gs_load4<VEC>(B, K, N, k0 + r, block_col + b_col);
        }
        __syncthreads();
        GS_TRACE_ON(gs_on, DATA_READY, GS_TRACE_BLOCK_TILE, k0 / BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 8) lds128x2(&rm[i], &As[k * BM + trow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 8) lds128x2(&rn[j], &Bs[k * BN + tcol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
        }
        __syncthreads();
        GS_TRACE_ON(gs_on, MMA_DONE, GS_TRACE_BLOCK_TILE, k0 / BK);
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            gs_store4<VEC>(C, M, N, block_row + trow * TM + i, block_col + tcol * TN + j,
                           acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
    GS_TRACE(TILE_END, GS_TRACE_BLOCK_TILE, GS_CEIL_DIV(K, BK));
}

// C as FP16 from a warp's mma.sync accumulators (the m16n8 D layout: c0, c1 at row lane / 4,
// columns 2 (lane % 4) + {0, 1}; c2, c3 eight rows down), as cuBLAS FP16 writes it: mma_tma.cu
// and its attempts (benchmarks/attempts/mma_tma_x.cu). Either each lane stores its pairs, or
// the warp stages its tile by stmatrix in the 128-byte swizzle a C tensor map reads, for
// TMA stores.
#pragma once
#include "common.cuh"

// Two floats to a packed pair of FP16 (round to nearest even), low half = lo.
__device__ __forceinline__ unsigned gs_pack_f16x2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// Stores a warp's MT x NT m16n8 accumulators to row-major FP16 C (M x N): each pair as one
// 4-byte word where N is even (every row then starts 4-byte aligned), element by element
// at an odd N. row0 and col0 are the warp's first row and column plus this lane's offset;
// rows past M and columns past N are not written.
template <int MT, int NT>
__device__ __forceinline__ void gs_store_acc_f16(unsigned short* __restrict__ C, int M, int N,
                                                 int row0, int col0,
                                                 const float (&acc)[MT][NT][4]) {
#pragma unroll
    for (int i = 0; i < MT * 2 * NT; ++i) {
        const int mi = i / (2 * NT), h = i / NT % 2, nj = i % NT;
        const int r = row0 + mi * 16 + h * 8, c = col0 + nj * 8;
        if (r >= M || c >= N) continue;
        const unsigned v = gs_pack_f16x2(acc[mi][nj][2 * h], acc[mi][nj][2 * h + 1]);
        unsigned short* dst = C + (gs_index)r * N + c;
        if ((N & 1) == 0) {
            *reinterpret_cast<unsigned*>(dst) = v;
        } else {
            dst[0] = static_cast<unsigned short>(v & 0xFFFF);
            if (c + 1 < N) dst[1] = static_cast<unsigned short>(v >> 16);
        }
    }
}

// Rows [16 mb0, 16 mb0 + 16 MB) of a warp's accumulator tile (64 columns: NT = 8) as FP16
// into its staging buffer `stg` (a 32-bit shared address, 1024-byte aligned; rows of 128
// bytes from row 0, 16-byte chunk c of row r at chunk c ^ (r % 8): a C map's 128-byte
// swizzle) by stmatrix.x4, one per 16 x 16 block: matrix q of the block is rows 8 (q % 2),
// columns 8 (q / 2); lanes 8 q .. 8 q + 7 give its row addresses, and a thread's register
// q holds its D pair of that 8 x 8 matrix. The 8 rows of a matrix lie in 8 different 16-byte
// bank groups: no bank conflict.
template <int MB, int MT, int NT>
__device__ __forceinline__ void gs_stage_acc_f16(unsigned stg, int mb0, int lane,
                                                 const float (&acc)[MT][NT][4]) {
    static_assert(NT == 8, "a staged row is 64 FP16 columns: one 128-byte swizzle row");
    static_assert(MB <= MT, "rows of the tile");
    const int q = lane / 8, j = lane % 8;
#pragma unroll
    for (int mb = 0; mb < MB; ++mb)
#pragma unroll
        for (int p = 0; p < NT / 2; ++p) {
            const int mi = mb0 + mb, row = mb * 16 + (q % 2) * 8 + j, chunk = 2 * p + q / 2;
            unsigned r[4];
#pragma unroll
            for (int m = 0; m < 4; ++m) {
                const float(&d)[4] = acc[mi][2 * p + m / 2];
                r[m] = gs_pack_f16x2(d[(m % 2) * 2], d[(m % 2) * 2 + 1]);
            }
            asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                         ::"r"(stg + row * 128 + ((chunk ^ j) << 4)), "r"(r[0]), "r"(r[1]),
                           "r"(r[2]), "r"(r[3]) : "memory");
        }
}

// Hopper (sm_90a) epilogues (part of hopper.cuh): a warpgroup's FP32 accumulators stored as
// bf16, directly or through shared memory and TMA stores.
#pragma once
#include "hopper_barriers.cuh"
#include "hopper_tma.cuh"

// Two floats to a packed pair of bf16 (round to nearest even), low half = lo.
__device__ __forceinline__ unsigned gs_pack_bf16x2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// Stores a warpgroup's m64nN FP32 accumulator tile as bf16 into row-major C (ldc = N),
// rows row0.., columns col0..; guarded against M and N. Lane layout (PTX ISA, wgmma
// D fragments): warp w of the group holds rows 16w + lane/4 and +8; register 4j+{0,1}
// columns 8j + 2(lane%4) + {0,1} of the first row, 4j+{2,3} the same of the second.
template <int NREG>
__device__ __forceinline__ void gs_store_acc_bf16(const float (&d)[NREG],
                                                  unsigned short* __restrict__ C, int M, int N,
                                                  int row0, int col0) {
    const int t = threadIdx.x % 128;
    const int r = row0 + (t / 32) * 16 + (t % 32) / 4;
    const int cb = col0 + 2 * (t % 4);
    const bool pairs = (N % 2) == 0;
#pragma unroll
    for (int j = 0; j < NREG / 4; ++j) {
        const int c = cb + 8 * j;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int rr = r + 8 * h;
            if (rr >= M || c >= N) continue;
            const unsigned v = gs_pack_bf16x2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            unsigned short* dst = C + (long long)rr * N + c;
            if (pairs && c + 1 < N) {
                *reinterpret_cast<unsigned*>(dst) = v;
            } else {
                dst[0] = static_cast<unsigned short>(v & 0xFFFF);
                if (c + 1 < N) dst[1] = static_cast<unsigned short>(v >> 16);
            }
        }
    }
}

// The same tile through shared memory and TMA stores: chunks of 64 columns are written as
// bf16 into one half of `buf` (2 x 8 KB, 1024-byte aligned) in the 128-byte swizzle (16-byte
// chunk j of row r at j ^ (r % 8): the 8 rows of a store instruction hit 8 different bank
// groups), then one thread stores the 64 x 64 box with TMA while the group writes the
// next chunk into the other half. Needs N % 8 == 0 (16-byte row pitch of the map).
template <int NREG>
__device__ __forceinline__ void gs_store_acc_tma(const float (&d)[NREG], unsigned char* buf,
                                                 const GsTensorMap* map, int row0, int col0,
                                                 int bar_id) {
    const int t = threadIdx.x % 128;
    const int r = (t / 32) * 16 + (t % 32) / 4;
    const bool leader = t == 0;
#pragma unroll
    for (int ch = 0; ch < NREG / 32; ++ch) {  // 32 registers = 64 columns of 2 rows
        unsigned char* half = buf + (ch & 1) * 8192;
        const unsigned half_addr = gs_smem_addr(half);
        if (leader) gs_bulk_wait_read<1>();  // the store of two chunks ago has read this half
        gs_named_barrier(bar_id, 128);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int g = ch * 8 + j;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int rr = r + 8 * h;
                // st.shared (STS): the aligned buffer pointer came from integer arithmetic,
                // so a plain C++ store would compile to a generic ST
                const unsigned addr = half_addr + rr * 128 + ((j ^ (rr & 7)) << 4) + 4 * (t % 4);
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr),
                             "r"(gs_pack_bf16x2(d[4 * g + 2 * h], d[4 * g + 2 * h + 1]))
                             : "memory");
            }
        }
        gs_fence_async_shared();
        gs_named_barrier(bar_id, 128);
        if (leader) {
            gs_tma_store_2d(map, half, col0 + ch * 64, row0);
            gs_bulk_commit();
        }
    }
}

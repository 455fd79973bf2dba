// Hopper (sm_90a) warp specialization (part of hopper.cuh): a producer warpgroup that feeds
// the stages with TMA and consumer warpgroups that compute, and setmaxnreg, which moves
// registers from the producer to the consumers.
#pragma once
#include "common.cuh"
#include "hopper_barriers.cuh"
#include "hopper_tma.cuh"
#include "hopper_schedule.cuh"
#include "trace.cuh"

// What the two persistent levels share around their consumers: the 1024-byte aligned
// start of the dynamic shared memory (the swizzled tiles need it; the host adds 1 KB of
// slack), the stage barriers, and the producer's loop.
__device__ __forceinline__ unsigned char* gs_align_1024(unsigned char* p) {
    return reinterpret_cast<unsigned char*>(
        (reinterpret_cast<unsigned long long>(p) + 1023) & ~1023ull);
}

// full[s]: one arrival (the producer's, with the stage's bytes) plus the TMA transaction;
// empty[s]: one arrival per consumer warpgroup. Called by the whole block.
template <int STAGES, int CONSUMERS>
__device__ __forceinline__ void gs_ws_init_barriers(unsigned long long* full,
                                                    unsigned long long* empty) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gs_mbar_init(&full[s], 1);
            gs_mbar_init(&empty[s], CONSUMERS);
        }
        gs_mbar_fence_init();
    }
    __syncthreads();
}

// The producer (one thread): for each K step of each piece of the block's work, wait until
// the consumers freed stage s (empty), announce its bytes on full[s] and copy the A tile
// (BM x BK) and the Bt tile (BN x BK) into it with TMA.
template <int BM, int BN, int BK, int STAGES, int GM, int A_BYTES, int STAGE_BYTES>
__device__ __forceinline__ void gs_ws_produce(const GsTensorMap* tmA, const GsTensorMap* tmB,
                                              unsigned char* smem, unsigned long long* full,
                                              unsigned long long* empty, int tm, int tn,
                                              const GsWork& work) {
    gs_tma_prefetch_map(tmA);
    gs_tma_prefetch_map(tmB);
    GS_TRACE_LANE(true);
    GS_TRACE(LANE_START, -1, 0);
    int it = 0;
    gs_for_each_unit(work, [&](int t, int k0, int k1) {
        int bm, bn;
        gs_group_coords(t, tm, tn, GM, bm, bn);
        for (int ks = k0; ks < k1; ++ks, ++it) {
            const int s = it % STAGES;
            gs_mbar_wait(&empty[s], ((it / STAGES) & 1) ^ 1);
            unsigned char* stage = smem + s * STAGE_BYTES;
            gs_mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
            gs_tma_load_2d(stage, tmA, &full[s], ks * BK, bm * BM);
            gs_tma_load_2d(stage + A_BYTES, tmB, &full[s], ks * BK, bn * BN);
            GS_TRACE(LOAD_ISSUED, t, ks);
        }
    });
    GS_TRACE(LANE_END, -1, 0);
}

// setmaxnreg: the producer warpgroup gives registers back, the consumers take them
template <int REGS>
__device__ __forceinline__ void gs_setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void gs_setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

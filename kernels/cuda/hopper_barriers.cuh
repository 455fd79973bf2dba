// Hopper (sm_90a) synchronisation of the wgmma levels (part of hopper.cuh): mbarriers in
// shared memory (init, arrive, arrive with an expected transaction count -- what a TMA
// copy completes on --, parity wait) and named barriers among the threads of a warpgroup.
#pragma once
#include "common.cuh"

__device__ __forceinline__ void gs_mbar_init(unsigned long long* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(gs_smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void gs_mbar_fence_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void gs_mbar_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(gs_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void gs_mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 ::"r"(gs_smem_addr(bar)), "r"(bytes) : "memory");
}
// Wait until the phase with the given parity has completed. A fresh barrier is in phase
// 0, so waiting for parity 1 returns at once (how a producer sees every stage free).
__device__ __forceinline__ void gs_mbar_wait(unsigned long long* bar, unsigned parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "GS_WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra GS_WAIT_%=;\n"
        "}\n" ::"r"(gs_smem_addr(bar)), "r"(parity) : "memory");
}

// a barrier among `threads` threads (one warpgroup), id 1..15 (0 is __syncthreads)
__device__ __forceinline__ void gs_named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Hopper (sm_90a) TMA (part of hopper.cuh): cp.async.bulk.tensor.2d loads that complete on
// an mbarrier and stores that complete as bulk groups, from a tensor map passed by value as
// a __grid_constant__ kernel parameter (built on the host by cuTensorMapEncodeTiled,
// kernels/device/hopper.py), and the fence that makes ordinary shared stores visible to
// the copy engine.
#pragma once
#include "common.cuh"

// The 128-byte opaque CUtensorMap, by value. The kernels take its address (a generic
// address of the parameter) as the TMA operand.
struct __align__(64) GsTensorMap {
    unsigned long long opaque[16];
};

// Box (c0 = inner coordinate, elements; c1 = row) of a 2D tensor into shared memory;
// out-of-bounds elements are written as zeros and still count toward the transaction.
__device__ __forceinline__ void gs_tma_load_2d(void* smem_dst, const GsTensorMap* map,
                                               unsigned long long* bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];\n"
        ::"r"(gs_smem_addr(smem_dst)), "l"(reinterpret_cast<unsigned long long>(map)),
          "r"(gs_smem_addr(bar)), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void gs_tma_prefetch_map(const GsTensorMap* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map))
                 : "memory");
}

// Shared -> global through TMA (cp.async.bulk.tensor, bulk-group completion); the copy
// engine clips the box at the tensor's edges.
__device__ __forceinline__ void gs_tma_store_2d(const GsTensorMap* map, const void* smem_src,
                                                int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
        ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(gs_smem_addr(smem_src)),
          "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void gs_bulk_commit() {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// all but the newest N bulk groups have finished reading shared memory
template <int N>
__device__ __forceinline__ void gs_bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void gs_bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// ordinary shared-memory stores made visible to the copy engine (async proxy)
__device__ __forceinline__ void gs_fence_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Hopper's tensor-core ceilings (sm_90a): wgmma from shared memory, which is how Hopper
// reaches its datasheet peak (mma.sync reaches about two thirds of it). Two warpgroups a
// block, each issuing wgmma m64n256k16 (BF16, FP16), m64n256k8 (TF32) or m64n128k32 (E4M3) on the same tiles in
// shared memory, 8 a group, accumulating in registers; a group of K = 128 (BF16) or 256
// (FP8) between waits, like the levels' main loops.

#include "hopper.cuh"
// the wgmma shapes only the probes use (generated, as hopper_wgmma_ops.cuh is)
#include "ceilings_wgmma_ops.cuh"

// a 16-bit probe: A 64 x 64 and B 256 x 64 (BF16 or FP16), K-major rows of 128 bytes
// (the levels' tile layout), wgmma m64n256k16 through the wrapper OP
#define GS_WGMMA16_PROBE(name, OP)                                                          \
    extern "C" __global__ void __launch_bounds__(256, 1)                                    \
    name(const uint4* __restrict__ src, float* out, int iters, int write) {                 \
        __shared__ __align__(1024) unsigned char smem[(64 + 256) * 128];                    \
        for (int i = threadIdx.x; i < (64 + 256) * 128 / 16; i += blockDim.x)               \
            reinterpret_cast<uint4*>(smem)[i] = src[i];                                     \
        __syncthreads();                                                                    \
        const unsigned long long da = gs_wgmma_desc_sw128(smem);                            \
        const unsigned long long db = gs_wgmma_desc_sw128(smem + 64 * 128);                 \
        float d[128];                                                                       \
        _Pragma("unroll") for (int i = 0; i < 128; ++i) d[i] = 0.f;                         \
        for (int it = 0; it < iters; ++it) {                                                \
            gs_wgmma_fence();                                                               \
            _Pragma("unroll") for (int k = 0; k < 8; ++k)                                   \
                OP(d, da + 2 * (k & 3), db + 2 * (k & 3), 1);                               \
            gs_wgmma_commit();                                                              \
            gs_wgmma_wait<0>();                                                             \
            gs_fence_regs(d);                                                               \
        }                                                                                   \
        if (write) {                                                                        \
            float s = 0.f;                                                                  \
            _Pragma("unroll") for (int i = 0; i < 128; ++i) s += d[i];                      \
            out[blockIdx.x * blockDim.x + threadIdx.x] = s;                                 \
        }                                                                                   \
    }

GS_WGMMA16_PROBE(gs_probe_wgmma_bf16, gs_wgmma_bf16_n256)
GS_WGMMA16_PROBE(gs_probe_wgmma_fp16, gs_wgmma_f16_n256)
// TF32: the same tiles read as 64 x 32 and 256 x 32 TF32 (a row is still 128 bytes, and a
// k8 step of 4-byte elements is the same 32 bytes as a k16 step of 2-byte ones)
GS_WGMMA16_PROBE(gs_probe_wgmma_tf32, gs_wgmma_tf32_n256)

extern "C" __global__ void __launch_bounds__(256, 1)
gs_probe_wgmma_fp8(const uint4* __restrict__ src, float* out, int iters, int write) {
    // A 64 x 128 and B 128 x 128 E4M3, K-major rows of 128 bytes
    __shared__ __align__(1024) unsigned char smem[(64 + 128) * 128];
    for (int i = threadIdx.x; i < (64 + 128) * 128 / 16; i += blockDim.x)
        reinterpret_cast<uint4*>(smem)[i] = src[i];
    __syncthreads();
    const unsigned long long da = gs_wgmma_desc_sw128(smem);
    const unsigned long long db = gs_wgmma_desc_sw128(smem + 64 * 128);
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) d[i] = 0.f;
    for (int it = 0; it < iters; ++it) {
        gs_wgmma_fence();
#pragma unroll
        for (int k = 0; k < 8; ++k) gs_wgmma_e4m3_n128(d, da + 2 * (k & 3), db + 2 * (k & 3), 1);
        gs_wgmma_commit();
        gs_wgmma_wait<0>();
        gs_fence_regs(d);
    }
    if (write) {
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < 64; ++i) s += d[i];
        out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    }
}

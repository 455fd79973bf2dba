// Ceiling probes for the roofline (gemmscope record --ceilings, kernels/engine/ceilings.py):
// what this GPU sustains, as opposed to what its datasheet promises.
//   gs_probe_read   DRAM read bandwidth: float4 loads over a buffer far larger than L2,
//                   summed so the loads stay (one float written per thread)
//   gs_probe_copy   DRAM copy bandwidth: read one buffer, write another (bytes both ways)
//   gs_probe_ffma   FP32 FFMA: 8 independent chains per thread, registers only
//   gs_probe_mma_*  tensor cores through mma.sync, registers only, 4 independent
//                   accumulators per warp: FP16, BF16 (m16n8k16), TF32 (m16n8k8), and
//                   FP8 E4M3 (m16n8k32, sm_89 and later)
// Each compute probe writes its accumulators where a run-time flag says so (never, in
// practice), so the compiler keeps every instruction and the data stays in registers.

extern "C" __global__ void gs_probe_read(const float4* __restrict__ in, unsigned long long n4,
                                         float* __restrict__ out) {
    float s = 0.f;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n4; i += stride) {
        float4 v = __ldcs(in + i);
        s += v.x + v.y + v.z + v.w;
    }
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void gs_probe_copy(const float4* __restrict__ in,
                                         float4* __restrict__ out, unsigned long long n4) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n4; i += stride)
        __stcs(out + i, __ldcs(in + i));
}

extern "C" __global__ void gs_probe_ffma(float* out, int iters, float a, float b, int write) {
    float x[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = threadIdx.x * 1e-3f + j;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int r = 0; r < 16; ++r) {
#pragma unroll
            for (int j = 0; j < 8; ++j) x[j] = fmaf(x[j], a, b);
        }
    }
    if (write) {
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < 8; ++j) s += x[j];
        out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    }
}

// one warp-wide mma.sync per macro use: D(c) += A(a) * B(b); 4 f32 accumulators a thread
#define GS_MMA(shape, types, a, b, c)                                                   \
    asm volatile("mma.sync.aligned." shape ".row.col.f32." types ".f32 "                \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"             \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#define GS_MMA_PROBE(name, shape, types)                                                \
    extern "C" __global__ void name(float* out, int iters, unsigned seed, int write) {  \
        unsigned a[4], b[2];                                                            \
        float c[4][4];                                                                  \
        _Pragma("unroll") for (int j = 0; j < 4; ++j) a[j] = seed * (threadIdx.x + j + 1); \
        b[0] = seed ^ threadIdx.x; b[1] = seed + threadIdx.x;                           \
        _Pragma("unroll") for (int k = 0; k < 4; ++k)                                   \
            _Pragma("unroll") for (int j = 0; j < 4; ++j) c[k][j] = 0.f;                \
        for (int i = 0; i < iters; ++i) {                                               \
            _Pragma("unroll") for (int r = 0; r < 4; ++r) {                             \
                _Pragma("unroll") for (int k = 0; k < 4; ++k) GS_MMA(shape, types, a, b, c[k]); \
            }                                                                           \
        }                                                                               \
        if (write) {                                                                    \
            float s = 0.f;                                                              \
            _Pragma("unroll") for (int k = 0; k < 4; ++k)                               \
                _Pragma("unroll") for (int j = 0; j < 4; ++j) s += c[k][j];             \
            out[blockIdx.x * blockDim.x + threadIdx.x] = s;                             \
        }                                                                               \
    }

GS_MMA_PROBE(gs_probe_mma_fp16, "m16n8k16", "f16.f16")
GS_MMA_PROBE(gs_probe_mma_bf16, "m16n8k16", "bf16.bf16")
GS_MMA_PROBE(gs_probe_mma_tf32, "m16n8k8", "tf32.tf32")
#if __CUDA_ARCH__ >= 890 || !defined(__CUDA_ARCH__)
GS_MMA_PROBE(gs_probe_mma_fp8, "m16n8k32", "e4m3.e4m3")
#endif

// Level "fp8_deep" (sm_90a): the block-scaled FP8 GEMM of fp8_block_scaled (E4M3 A and Bt,
// K-major; FP32 scales per 1 x 128 of A, scale_a[kb * M + m], and per 128 x 128 of Bt,
// scale_b[nb * KB + kb]; FP32 promotion per 128 of K; BF16 C) on DeepGEMM's schedule,
// written here for this project:
//   - tiles of 256 rows by BN columns (BN = 64..128, a multiple of 8, picked per shape by
//     the host so that the waves come out whole): each of the two consumer warpgroups owns
//     128 rows as two 64-row sub-tiles, issues one sub-tile's four wgmma.m64nBNk32, waits,
//     promotes it (FP32 FMA times its scales) and issues the other. A thread holds BN / 2
//     temporaries and 2 x BN / 2 accumulators, so the tile's whole width is one wgmma group
//     (fp8_block_scaled splits 256 columns into two halves and so waits twice as often
//     per row of the tile);
//   - CL = 2 (the host's shape rule picks it where a tile has 32 K blocks or more; CL = 1
//     below): 2-CTA clusters whose two CTAs take neighbouring tiles of one tile row, so
//     they share the A tile: the first CTA loads it by TMA multicast into both CTAs'
//     shared memory (DeepGEMM's form; each loading half for both measured 7% slower),
//     which halves A's traffic from L2 (a third of the stage's bytes) and with it the
//     power that lowers the clock. A stage is refilled when both CTAs' consumers freed it:
//     lanes 0 and 1 of each releasing warp arrive, one on each CTA's "empty" barrier;
//   - the scales travel with the stage: the tile's 256 row scales of A for the K block come
//     by TMA with the stage's data (SCT 1, one box; where M % 4 != 0 the row pitch cannot
//     be mapped, and with SCT 0 the producer warp's 32 lanes copy them with 4-byte
//     cp.async), and its (up to two) block scales of Bt by two lanes' cp.async, whose
//     completion arrives on the stage's "full" barrier: the consumers' K loop has no scale
//     loads from L2, no cp.async waits and no warpgroup barrier;
//   - the epilogue stages each warpgroup's 128 x BN BF16 results in its own shared-memory
//     buffer and stores them with TMA without waiting: the buffer is reused one tile later.
//     EPC 1 (where BN % 64 == 0; the host's shape rule picks it where a tile has many K
//     blocks) stages them one 32 x 64 box at a time through a ring of three 4 KB buffers a
//     warpgroup instead: 24 KB for both instead of 64 KB, which leaves room for a fourth
//     stage at BN = 128. A box's buffer is written once the store three boxes before it
//     has read it (the leader waits, then the warpgroup's barrier).
// Tiles are walked in groups of GW tile columns, row by row inside a group (neighbouring
// tiles share their A rows, which is what a cluster pair needs). A tile whose BN columns
// cross a 128-column scale block of Bt takes each 8-column group's scale from its block.
// Shapes: K % 128 == 0; M and N are free (TMA zero-fills loads and clips stores; C by
// plain stores when N % 8 != 0).
#include "common.cuh"
#include "hopper.cuh"
#include "trace.cuh"

// wgmma.m64nNk32 with E4M3 operands and FP32 accumulators for the tile widths fp8_deep
// uses (N = 64..128 in steps of 8): gs_dp_wgmma<N>(d, da, db, accumulate), d the N / 2
// accumulator registers of a thread, da / db shared-memory descriptors (both K-major).
// Generated (one specialization per N, the operand list written out: PTX needs it literal)
// by the loop in tests/test_fp8_deep_rules.py, which checks that this text is its output.
template <int N>
struct GsDpWgmma;

template <>
struct GsDpWgmma<64> {
    __device__ __forceinline__ static void run(float (&d)[32], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %34, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<72> {
    __device__ __forceinline__ static void run(float (&d)[36], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %38, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n72k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35}, %36, %37, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<80> {
    __device__ __forceinline__ static void run(float (&d)[40], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %42, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n80k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, %40, %41, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<88> {
    __device__ __forceinline__ static void run(float (&d)[44], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %46, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n88k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43}, %44, %45, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<96> {
    __device__ __forceinline__ static void run(float (&d)[48], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %50, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n96k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<104> {
    __device__ __forceinline__ static void run(float (&d)[52], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %54, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n104k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51}, %52, %53, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<112> {
    __device__ __forceinline__ static void run(float (&d)[56], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %58, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n112k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}, %56, %57, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<120> {
    __device__ __forceinline__ static void run(float (&d)[60], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %62, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n120k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59}, %60, %61, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <>
struct GsDpWgmma<128> {
    __device__ __forceinline__ static void run(float (&d)[64], unsigned long long da,
                                               unsigned long long db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

__device__ __forceinline__ float gs_dp_lds(unsigned addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ unsigned gs_dp_sreg_cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned gs_dp_sreg_cluster_id() {
    unsigned r;
    asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned gs_dp_sreg_clusters() {
    unsigned r;
    asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
    return r;
}
// every thread of both CTAs (release / acquire: barrier inits, the last remote arrivals)
__device__ __forceinline__ void gs_dp_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// An arrival on the mbarrier at the same shared-memory offset in CTA `cta` of the cluster.
// Default semantics (no .release.cluster): the stage's readers are wgmma reads that ended
// at wgmma.wait_group, so nothing needs a GPU-scope fence here (one per K step cost a third
// of the time in issue 17's first cluster levels).
__device__ __forceinline__ void gs_dp_arrive_remote(unsigned long long* bar, unsigned cta) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(gs_smem_addr(bar)),
                 "r"(cta));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}
// A box by TMA into the same offset of every CTA in `mask`, completing on each one's
// mbarrier at `bar`'s offset.
__device__ __forceinline__ void gs_dp_tma_load_multicast(void* dst, const GsTensorMap* map,
                                                         unsigned long long* bar, int c0, int c1,
                                                         unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n"
        ::"r"(gs_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)),
          "r"(gs_smem_addr(bar)), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
// the thread's earlier cp.asyncs, when complete, count as one arrival on `bar`
__device__ __forceinline__ void gs_dp_cp_async_arrive(unsigned long long* bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(gs_smem_addr(bar))
                 : "memory");
}

// a BF16 pair (lo in the low half) into C's staging at shared address addr
__device__ __forceinline__ void gs_dp_st_bf16x2(unsigned addr, float lo, float hi) {
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(gs_pack_bf16x2(lo, hi)) : "memory");
}

// v mod S for 0 <= v < 2 S (a ring position plus an offset): a compare and a select (RING 1
// runs one K loop with the stages' indices at run time)
template <int S>
__device__ __forceinline__ int gs_dp_wrap(int v) {
    return v >= S ? v - S : v;
}

// The K blocks of one tile in their stages' order, the producer's loads and the consumers'
// K loop alike: blk(s, k) for K block k of the tile in stage s. RING 0: each tile starts at
// stage 0 and goes round in rounds of STAGES, so every stage is a constant in the unrolled
// loops; pass(s) for each stage past K in the last round; `uses`, the rounds before (the
// barriers' parity). RING 1: the tile starts at the stage after its predecessor's last
// (`ring`, at run time), and no stage is passed.
template <int STAGES, int RING, class Block, class Pass>
__device__ __forceinline__ void gs_dp_tile_blocks(int rounds, int tail, int& ring, int& uses,
                                                  Block&& blk, Pass&& pass) {
    if constexpr (RING) {
        for (int r = 0; r < rounds; ++r) {
#pragma unroll
            for (int u = 0; u < STAGES; ++u) blk(gs_dp_wrap<STAGES>(ring + u), r * STAGES + u);
        }
#pragma unroll
        for (int u = 0; u < STAGES - 1; ++u)
            if (u < tail) blk(gs_dp_wrap<STAGES>(ring + u), rounds * STAGES + u);
        ring = (ring + tail) % STAGES;
    } else {
        for (int r = 0; r < rounds; ++r, ++uses) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) blk(s, r * STAGES + s);
        }
        if (tail) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) {
                if (s < tail)
                    blk(s, rounds * STAGES + s);
                else
                    pass(s);
            }
            ++uses;
        }
    }
}

// A 128-byte-swizzled K-major operand's wgmma descriptor (gs_wgmma_desc_sw128) in two
// words (RING 1): the low one, the address field and the leading byte offset, and the high
// one, a constant. The K loop steps the low word by 32-bit adds, which cannot carry into the
// high word (the address field is 14 bits): the compiler, which cannot know that of a 64-bit
// add, otherwise adds with carry four times a group where the stage is not a constant.
__device__ __forceinline__ unsigned gs_dp_desc_lo(const void* smem) {
    return ((gs_smem_addr(smem) & 0x3FFFFu) >> 4) | (1u << 16);
}
__device__ __forceinline__ unsigned long long gs_dp_desc(unsigned lo) {
    // the stride byte offset (1024 B, in 16-byte units) and the 128-byte swizzle
    constexpr unsigned long long HI = (1024ull >> 4) | (1ull << 30);
    return (HI << 32) | lo;
}

// Tile t of tm x tn tiles: groups of GW tile columns, row by row inside a group (the
// grouped order of common.cuh with rows and columns swapped).
__device__ __forceinline__ void gs_dp_tile(int t, int tm, int tn, int GW, int& bm, int& bn) {
    gs_group_coords(t, tn, tm, GW, bn, bm);
}

// The persistent schedule: round i gives the CTA tile i * grid + block (CL = 1), or the
// cluster pair i * clusters + cluster tiles 2p and 2p + 1, one per CTA (CL = 2). `peer`:
// the other CTA of the pair has a tile this round too (always but, with an odd tile count,
// in the last round).
template <int CL>
struct GsDpSchedule {
    int tiles, round = 0;
    __device__ __forceinline__ bool next(int& t, bool& peer) {
        if constexpr (CL == 1) {
            t = round++ * gridDim.x + blockIdx.x;
            peer = false;
        } else {
            const int pair = round++ * gs_dp_sreg_clusters() + gs_dp_sreg_cluster_id();
            t = 2 * pair + gs_dp_sreg_cluster_rank();
            peer = (t ^ 1) < tiles;
        }
        return t < tiles;
    }
};

// WREL 2: every consumer warp's lane 0 arrives on a stage's "empty" barrier (8 per CTA),
// so the four warps of a warpgroup do the same work and meet the next wgmma together;
// WREL 1: one thread per warpgroup arrives, and its warp reaches the next wgmma late
// (Nsight Compute: "warpgroup arrive" stalls at the wgmma, 4.6x DeepGEMM's). Measured
// beside each other: WREL 2 +0.8% (4096^3) to +2.2% (4096 x 7168 x 16384).
//
// KS: the K blocks of a tile (K / BK) compiled in, as DeepGEMM's JIT builds its kernel per
// K, or 0 to read K at run time. With KS the last round of a tile (the stages filled and
// those passed) is known to the compiler, which drops the branches and the code of the
// forms that never come; the host refuses a build for another K (ksteps_problem). The
// count of whole rounds stays opaque to the compiler (the empty asm): known, it unrolled
// the rounds and spilled where the last round passes a stage of three (NVRTC 13.5).
template <int BM, int BN, int BK, int STAGES, int CL, int GW, int WREL, int SCT, int RING,
          int EPC, int KS, bool VEC>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(384, 1)
fp8gemm_deep(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
             const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
             unsigned short* __restrict__ C, int tma_c, float* __restrict__ ws,
             int* __restrict__ flags, const float* __restrict__ scale_a,
             const float* __restrict__ scale_b, const __grid_constant__ GsTensorMap tmS) {
    static_assert(BM == 256 && BK == 128, "two warpgroups of two 64-row sub-tiles; K blocks of 128");
    static_assert(BN % 8 == 0 && BN >= 64 && BN <= 128, "one wgmma.m64nBNk32 per sub-tile");
    static_assert(CL == 1 || CL == 2, "clusters of one or two CTAs");
    constexpr int A_BYTES = BM * BK, HALF_A = A_BYTES / 2, B_BYTES = BN * BK;
    constexpr int SC_FLOATS = 272;  // 256 row scales of A, 2 block scales of Bt, padding
    constexpr int C_BYTES = 2 * 64 * BN * 2;  // a warpgroup's two sub-tiles, BF16
    static_assert(EPC == 0 || (EPC == 1 && BN % 64 == 0), "EPC: a switch, for 64-column chunks");
    constexpr int C_BOX = 32 * 64 * 2;                      // EPC 1: one 32 x 64 box, BF16
    constexpr int C_STAGE = EPC ? 3 * C_BOX : C_BYTES;      // a warpgroup's C staging
    constexpr bool UNIFORM = 128 % BN == 0;  // a tile never crosses a scale block of Bt
    constexpr bool SWZ_C = BN % 64 == 0;     // C in 64 x 64 boxes, 128-byte swizzle
    constexpr int R = BN / 2;                // registers of a sub-tile
    // registers per thread after setmaxnreg: 128 x 56 + 256 x 224 = 64512 of 65536 (the
    // producer's unrolled ring of stages spills at 40)
    constexpr int PRODUCER_REGS = 56, CONSUMER_REGS = 224;

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);
    unsigned char* const a_base = smem;
    unsigned char* const b_base = smem + STAGES * A_BYTES;
    unsigned char* const c_base = b_base + STAGES * B_BYTES;
    float* const sc_base = reinterpret_cast<float*>(c_base + 2 * C_STAGE);
    // The stages' scales: with SCT 1, stage s's 256 row scales of A at sc_base + 256 s (a
    // TMA box, 1024-byte aligned) and its Bt scales at sb_base + 4 s; with SCT 0, SC_FLOATS
    // a stage at sc_base + SC_FLOATS s, the Bt scales after the row scales. Both fit the
    // SC_FLOATS a stage that the host reserves.
    float* const sb_base = sc_base + 256 * STAGES;

    const int wg = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    static_assert(KS >= 0, "KS: the K blocks compiled in, or 0 to read K");
    const int ksteps = KS ? KS : K / BK, nb_count = GS_CEIL_DIV(N, 128);
    const unsigned rank = CL == 2 ? gs_dp_sreg_cluster_rank() : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gs_mbar_init(&full[s], 1 + (SCT ? 2 : 32));  // the TMA bytes' arrival, the lanes' scale copies
            gs_mbar_init(&empty[s], (WREL == 2 ? 8 : 2) * CL);  // each consumer warp (WREL 2) or warpgroup of the cluster
        }
        gs_mbar_fence_init();
    }
    if constexpr (CL == 2)
        gs_dp_cluster_sync();  // the peer's barriers exist before any multicast reaches them
    else
        __syncthreads();
    GsDpSchedule<CL> sched{tm * tn};
    // RING 0: each tile's K blocks start at stage 0 and go round the ring in rounds of
    // STAGES (the last round's stages past K are passed through empty), so that the stage of
    // every K block is a compile-time constant in the unrolled loops below: its addresses
    // are constants, and the compiler may move the next stage's barrier probe and scale
    // loads up into the current promotion. `uses`: the rounds before, the barriers' parity.
    // RING 1: the K blocks of the CTA's tiles go round the ring one after another (a tile's
    // first K block takes the stage after its predecessor's last, so the producer loads the
    // next tile's first blocks while the consumers finish this one and store it; at K = 512,
    // four K blocks a tile, RING 0 leaves two of six stage uses empty). One K loop, the
    // stages' indices at run time: compiled once per offset of the ring, so that they were
    // constants, it took 2.2 times the code and ran 2% slower at K = 512 (stretch 21).
    // `phase`: bit s, the parity of stage s's next wait.
    static_assert(RING == 0 || RING == 1, "RING is a switch");
    int rounds = ksteps / STAGES;
    const int tail = ksteps % STAGES;
    if constexpr (KS != 0) asm volatile("" : "+r"(rounds));

    if (wg == 0) {
        // ------------------------------------------------------------ producer (warp 0)
        gs_setmaxnreg_dec<PRODUCER_REGS>();
        const int lane = threadIdx.x % 32;
        if (threadIdx.x < 32) {
            if (lane == 0) {
                gs_tma_prefetch_map(&tmA);
                gs_tma_prefetch_map(&tmB);
                if constexpr (SCT) gs_tma_prefetch_map(&tmS);
            }
            GS_TRACE_LANE(lane == 0);
            GS_TRACE(LANE_START, -1, 0);
            // The row scales of A come by TMA with the stage's data (SCT 1: the host picks it
            // where it can map them, M % 4 == 0, a 16-byte row pitch), else by the 32 lanes'
            // cp.async (SCT 0). A template parameter, not a flag: with both forms in one
            // kernel the trace build's consumers spilled (NVRTC 13.0), and the lanes' copies
            // held registers the TMA form does not need.
            int uses = 0, t;
            unsigned phase = 0;  // RING 1
            int ring = 0;        // RING 1: the stage of the next K block
            bool peer;
            while (sched.next(t, peer)) {
                int bm, bn;
                gs_dp_tile(t, tm, tn, GW, bm, bn);
                bool multicast = false;
                if (CL == 2 && peer) {
                    int pm, pn;
                    gs_dp_tile(t ^ 1, tm, tn, GW, pm, pn);
                    multicast = pm == bm;
                }
                // the lane's scale sources: rows bm * BM + lane + 32 j of A (K block ks at
                // + ks * M), and lanes 0 and 1 the tile's two scale blocks of Bt
                const float* pa = scale_a + bm * BM + lane;
                unsigned rows_ok = 0;
#pragma unroll
                for (int j = 0; j < 8; ++j) rows_ok |= (bm * BM + lane + 32 * j < M) << j;
                const int nb = bn * BN / 128 + lane;
                const bool b_ok = lane < 2 && nb < nb_count;
                const float* pb = scale_b + (long long)(b_ok ? nb : 0) * ksteps;
                auto fill = [&](int s, int ks) {
                    if constexpr (RING) {
                        gs_mbar_wait(&empty[s], ((phase >> s) & 1) ^ 1);
                        phase ^= 1u << s;
                    } else {
                        gs_mbar_wait(&empty[s], (uses & 1) ^ 1);
                    }
                    unsigned char* a_dst = a_base + s * A_BYTES;
                    if (lane == 0) {
                        gs_mbar_arrive_expect_tx(&full[s], A_BYTES + B_BYTES + (SCT ? 1024 : 0));
                        if constexpr (SCT) gs_tma_load_2d(sc_base + 256 * s, &tmS, &full[s], bm * BM, ks);
                        if (multicast) {  // rank 0 loads the whole A tile into both CTAs
                            if (rank == 0) {
                                gs_dp_tma_load_multicast(a_dst, &tmA, &full[s], ks * BK, bm * BM, 0x3);
                                gs_dp_tma_load_multicast(a_dst + HALF_A, &tmA, &full[s], ks * BK,
                                                         bm * BM + 128, 0x3);
                            }
                        } else {
                            gs_tma_load_2d(a_dst, &tmA, &full[s], ks * BK, bm * BM);
                            gs_tma_load_2d(a_dst + HALF_A, &tmA, &full[s], ks * BK, bm * BM + 128);
                        }
                        gs_tma_load_2d(b_base + s * B_BYTES, &tmB, &full[s], ks * BK, bn * BN);
                    }
                    GS_TRACE_DO(unsigned gs_issued_at = 0; if (gs_tr.samples(ks)) gs_issued_at = gs_tr.clock_lo();)  // the loads' issue, in sampled steps only; recorded after the scales' arrival, which the record held up
                    if constexpr (SCT) {
                        if (lane < 2) {
                            gs_cp_async4(sb_base + 4 * s + lane, b_ok ? pb + ks : scale_b, b_ok);
                            gs_dp_cp_async_arrive(&full[s]);
                        }
                    } else {
                        float* sc = sc_base + s * SC_FLOATS + lane;
                        const float* src = pa + (long long)ks * M;
#pragma unroll
                        for (int j = 0; j < 8; ++j) {
                            const bool ok = (rows_ok >> j) & 1;
                            gs_cp_async4(sc + 32 * j, ok ? src + 32 * j : scale_a, ok);
                        }
                        if (lane < 2) gs_cp_async4(sc + 256, b_ok ? pb + ks : scale_b, b_ok);
                        gs_dp_cp_async_arrive(&full[s]);
                    }
                    GS_TRACE_DO(gs_tr.put_p(GS_TR_LOAD_ISSUED, t, ks, true, gs_issued_at);)  // the warp's writer (lane 0) stores; a branch the same in every lane
                };
                auto pass = [&](int s) {  // a stage past K: no data, every arrival
                    gs_mbar_wait(&empty[s], (uses & 1) ^ 1);
                    if (!SCT || lane < 2) gs_mbar_arrive(&full[s]);
                    if (lane == 0) gs_mbar_arrive(&full[s]);
                };
                gs_dp_tile_blocks<STAGES, RING>(rounds, tail, ring, uses, fill, pass);
            }
            GS_TRACE(LANE_END, -1, 0);
        }
        GS_TRACE_DO(if (threadIdx.x / 32 == 1) {)  // the K-stage observer (trace.cuh, GsTraceStages): the schedule's tiles, each tile's K steps in the producer's walk of the ring
        GS_TRACE_DO(    GsTraceStages<3> gs_ob(lane == 0);)  // lane 3: after the three warpgroups' lanes
        GS_TRACE_DO(    int gs_ring = 0, gs_uses = 0, gs_t;)
        GS_TRACE_DO(    bool gs_peer;)
        GS_TRACE_DO(    while (sched.next(gs_t, gs_peer)) {)
        GS_TRACE_DO(        gs_ob.tile = gs_t;)
        GS_TRACE_DO(        gs_dp_tile_blocks<STAGES, RING>(rounds, tail, gs_ring, gs_uses, [&](int s, int k) { gs_ob.step(full, empty, s, k); }, [&](int s) { gs_ob.pass(full, empty, s); });)
        GS_TRACE_DO(    })
        GS_TRACE_DO(    gs_ob.end();)
        GS_TRACE_DO(})
    } else {
        // ------------------------------------------------------------ consumers
        gs_setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;  // wg came from a shuffle: warp-uniform, so are the descriptors
        const int t128 = threadIdx.x % 128;
        const bool leader = t128 == 0;
        const bool releaser = WREL == 2 ? t128 % 32 == 0 : leader;  // who arrives on "empty"
        const int lr = (t128 / 32) * 16 + (t128 % 32) / 4;  // rows lr, lr + 8 of a sub-tile
        unsigned char* const cbuf = c_base + c * C_STAGE;
        int cbox = 0;  // EPC 1: the ring's buffer of the next box
        float acc[2][R], tmp[R];
        // The shared-memory addresses the K loop needs, computed once and held: opaque to
        // the compiler (the empty asm), which otherwise recomputed them from %tid and the
        // CTA's cluster id (S2R) between a stage's wait and its first wgmma, so that the
        // warpgroup's four warps reached the wgmma apart (Nsight Compute: "warpgroup
        // arrive" stalls 2.6 times DeepGEMM's). Measured with the scales by TMA: +2.8-3.2%.
        constexpr unsigned SA_STRIDE = SCT ? 4 * 256 : 4 * SC_FLOATS;  // a stage's row scales, bytes apart
        constexpr unsigned SB_STRIDE = SCT ? 16 : 4 * SC_FLOATS;       // and its Bt scales
        unsigned q_sa = gs_smem_addr(sc_base) + 4 * (c * 128 + lr);  // this thread's row scales, stage 0
        unsigned q_empty = gs_smem_addr(&empty[0]), q_full = gs_smem_addr(&full[0]);
        unsigned q_rel = releaser;
        const bool q_rel2 = WREL == 2 ? t128 % 32 < 2 : t128 < 2;  // CL 2: lanes 0 and 1 release
        asm volatile("" : "+r"(q_sa), "+r"(q_empty), "+r"(q_full), "+r"(q_rel));
        const unsigned q_sb = SCT ? gs_smem_addr(sb_base) : gs_smem_addr(sc_base) + 4 * 256;
        int uses = 0, t;
        unsigned phase = 0;  // RING 1
        int ring = 0;        // RING 1: the stage of the next K block
        bool peer;
        GS_TRACE_LANE(leader);
        GS_TRACE(LANE_START, -1, 0);
        while (sched.next(t, peer)) {
            int bm, bn;
            gs_dp_tile(t, tm, tn, GW, bm, bn);
            GS_TRACE_C(TILE_BEGIN, t, 0);  // tile events in the K-stage form (trace.cuh, put_c)
            const int n0 = bn * BN;
            // 8-column groups of the tile in its first scale block of Bt
            const int first_groups = UNIFORM ? R : min(BN, 128 - n0 % 128) / 8;
#pragma unroll
            for (int w = 0; w < 2; ++w)
#pragma unroll
                for (int i = 0; i < R; ++i) acc[w][i] = 0.f;
            auto release = [&](int s) {  // the stage is free for both CTAs' producers
                if constexpr (CL == 2) {
                    // lanes 0 and 1 of each releasing warp in one instruction, lane 0 on its
                    // own CTA's barrier and lane 1 on the peer's (on its own again for the
                    // last, lone tile, whose peer has stopped): no branch on `peer`, which
                    // as one lane's local then remote arrival in a divergent branch cost
                    // the 2-CTA form 3-8% (H100, stretch 29)
                    if (q_rel2) gs_dp_arrive_remote(&empty[s], (t128 & 1) && peer ? rank ^ 1 : rank);
                } else {
                    if (!q_rel) return;
                    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(q_empty + 8 * s) : "memory");
                }
            };
            auto kblock = [&](int s, int gs_k) {  // gs_k: the K block of the tile (the trace's)
                unsigned parity = uses & 1;
                if constexpr (RING) {
                    parity = (phase >> s) & 1;
                    phase ^= 1u << s;
                }
                asm volatile(
                    "{\n.reg .pred done;\nGSQ_WAIT_%=:\n"
                    "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                    "@!done bra GSQ_WAIT_%=;\n}\n" ::"r"(q_full + 8 * s), "r"(parity) : "memory");
                const unsigned sc = q_sa + s * SA_STRIDE;
                const unsigned scb = q_sb + s * SB_STRIDE;
                float sa[2][2];
#pragma unroll
                for (int w = 0; w < 2; ++w)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        sa[w][h] = gs_dp_lds(sc + 4 * (w * 64 + 8 * h));
                const float sb0 = gs_dp_lds(scb);
                const float sb1 = UNIFORM ? sb0 : gs_dp_lds(scb + 4);
                const unsigned long long db = gs_wgmma_desc_sw128(b_base + s * B_BYTES);
                const unsigned db_lo = gs_dp_desc_lo(b_base + s * B_BYTES);  // RING 1
#pragma unroll
                for (int w = 0; w < 2; ++w) {
                    const unsigned long long da =
                        gs_wgmma_desc_sw128(a_base + s * A_BYTES + (c * 128 + w * 64) * BK);
                    const unsigned da_lo = gs_dp_desc_lo(a_base + s * A_BYTES + (c * 128 + w * 64) * BK);
                    gs_fence_regs(tmp);
                    gs_wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk) {  // k32 steps: 32 bytes = 2 address units
                        if constexpr (RING)
                            GsDpWgmma<BN>::run(tmp, gs_dp_desc(da_lo + 2 * kk), gs_dp_desc(db_lo + 2 * kk),
                                               kk > 0 ? 1 : 0);
                        else
                            GsDpWgmma<BN>::run(tmp, da + 2 * kk, db + 2 * kk, kk > 0 ? 1 : 0);
                    }
                    gs_wgmma_commit();
                    gs_wgmma_wait<0>();
                    gs_fence_regs(tmp);  // tmp is read only after the wait
                    if (w == 1) release(s);
                    const float s00 = sa[w][0] * sb0, s10 = sa[w][1] * sb0;
                    const float s01 = sa[w][0] * sb1, s11 = sa[w][1] * sb1;
#pragma unroll
                    for (int g = 0; g < R / 4; ++g) {
                        const bool first = UNIFORM || g < first_groups;
                        const float r0 = first ? s00 : s01, r1 = first ? s10 : s11;
                        acc[w][4 * g + 0] += tmp[4 * g + 0] * r0;
                        acc[w][4 * g + 1] += tmp[4 * g + 1] * r0;
                        acc[w][4 * g + 2] += tmp[4 * g + 2] * r1;
                        acc[w][4 * g + 3] += tmp[4 * g + 3] * r1;
                    }
                }
            };
            auto pass = [&](int s) {  // a stage past K: passed on
                gs_mbar_wait(&full[s], uses & 1);
                release(s);
            };
            gs_dp_tile_blocks<STAGES, RING>(rounds, tail, ring, uses, kblock, pass);
            // ---------------------------------------------------------- epilogue
            const int row0 = bm * BM + c * 128;
            if (!tma_c) {
                gs_store_acc_bf16(acc[0], C, M, N, row0, n0);
                gs_store_acc_bf16(acc[1], C, M, N, row0 + 64, n0);
                GS_TRACE_C(TILE_END, t, ksteps);
                continue;
            }
            if constexpr (EPC) {
                // box b: sub-tile w, 64-column chunk ch, 32-row half hh, whose rows only the
                // warpgroup's warps 2 hh and 2 hh + 1 hold
                constexpr int CHUNKS = BN / 64, BOXES = 2 * CHUNKS * 2;
                const int half = (t128 / 32) / 2;
#pragma unroll
                for (int b = 0; b < BOXES; ++b) {
                    const int w = b / (2 * CHUNKS), ch = (b / 2) % CHUNKS, hh = b % 2;
                    unsigned char* const box = cbuf + cbox * C_BOX;
                    if (leader) gs_bulk_wait_read<2>();  // the store of three boxes ago has read it
                    gs_named_barrier(1 + c, 128);
                    if (half == hh) {
                        const unsigned cb = gs_smem_addr(box);
#pragma unroll
                        for (int j = 0; j < 8; ++j)
#pragma unroll
                            for (int h = 0; h < 2; ++h) {
                                const int g = ch * 8 + j, rr = lr + 8 * h - 32 * hh;
                                const unsigned addr =
                                    cb + rr * 128 + ((j ^ (rr & 7)) << 4) + 4 * (t128 % 4);
                                gs_dp_st_bf16x2(addr, acc[w][4 * g + 2 * h],
                                                acc[w][4 * g + 2 * h + 1]);
                            }
                    }
                    gs_fence_async_shared();
                    gs_named_barrier(1 + c, 128);
                    if (leader) {
                        gs_tma_store_2d(&tmC, box, n0 + ch * 64, row0 + w * 64 + 32 * hh);
                        gs_bulk_commit();
                    }
                    cbox = cbox == 2 ? 0 : cbox + 1;
                }
                GS_TRACE_C(TILE_END, t, ksteps);
                continue;
            }
            if (leader) gs_bulk_wait_read<0>();  // the last tile's stores have read the buffer
            gs_named_barrier(1 + c, 128);
            const unsigned cb = gs_smem_addr(cbuf);
#pragma unroll
            for (int w = 0; w < 2; ++w)
#pragma unroll
                for (int g = 0; g < R / 4; ++g)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int rr = lr + 8 * h;
                        unsigned addr;
                        if constexpr (SWZ_C) {  // 64 x 64 chunks, 16-byte unit j at j ^ (row % 8)
                            const int chunk = w * (BN / 64) + g / 8, j = g % 8;
                            addr = cb + chunk * 8192 + rr * 128 + ((j ^ (rr & 7)) << 4) +
                                   4 * (t128 % 4);
                        } else {  // plain rows of BN columns
                            addr = cb + (w * 64 + rr) * BN * 2 + (8 * g + 2 * (t128 % 4)) * 2;
                        }
                        gs_dp_st_bf16x2(addr, acc[w][4 * g + 2 * h], acc[w][4 * g + 2 * h + 1]);
                    }
            gs_fence_async_shared();
            gs_named_barrier(1 + c, 128);
            if (leader) {
#pragma unroll
                for (int w = 0; w < 2; ++w) {
                    if constexpr (SWZ_C) {
#pragma unroll
                        for (int ch = 0; ch < BN / 64; ++ch)
                            gs_tma_store_2d(&tmC, cbuf + (w * (BN / 64) + ch) * 8192,
                                            n0 + ch * 64, row0 + w * 64);
                    } else {
                        gs_tma_store_2d(&tmC, cbuf + w * 64 * BN * 2, n0, row0 + w * 64);
                    }
                }
                gs_bulk_commit();
            }
            GS_TRACE_C(TILE_END, t, ksteps);
        }
        if (tma_c && leader) gs_bulk_wait_read<0>();  // the last stores have read the buffer; their writes end on their own
        GS_TRACE(LANE_END, -1, 0);
    }
    if constexpr (CL == 2) gs_dp_cluster_sync();  // no CTA leaves while its peer may signal it
}

// Hopper (sm_90a) building blocks shared by the wgmma levels, assembled into their
// sources like common.cuh (see kernels/build.py). Everything here is inline PTX, so the
// levels need no CUDA header beyond what NVRTC always has:
//   - mbarriers (init, arrive, arrive with an expected transaction count, parity wait);
//   - TMA: cp.async.bulk.tensor.2d loads that complete on an mbarrier, from a tensor map
//     passed by value as a __grid_constant__ kernel parameter (built on the host by
//     cuTensorMapEncodeTiled, kernels/hopper.py);
//   - wgmma: shared-memory matrix descriptors for K-major tiles in the 128-byte swizzle
//     that TMA writes, fences, commit/wait, and the m64nNk16 (BF16) and m64nNk32 (E4M3)
//     instructions with FP32 accumulators;
//   - setmaxnreg, which moves registers from the producer warpgroup to the consumers.
#pragma once
#include "common.cuh"

// The 128-byte opaque CUtensorMap, by value. The kernels take its address (a generic
// address of the parameter) as the TMA operand.
struct __align__(64) GsTensorMap {
    unsigned long long opaque[16];
};

// ------------------------------------------------------------------ mbarriers
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

// ------------------------------------------------------------------ TMA
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
// a barrier among `threads` threads (one warpgroup), id 1..15 (0 is __syncthreads)
__device__ __forceinline__ void gs_named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ------------------------------------------------------------------ warp specialization
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

// ------------------------------------------------------------------ work of a block
// Which K steps of which output tiles a persistent block computes. The K steps of all tiles
// are numbered tile * ksteps + ks. SK = 0 (data-parallel): tiles blockIdx.x, + gridDim.x,
// ... whole, so the last round leaves tiles % gridDim.x blocks busy and the rest idle.
// SK = 1 (stream-K for the last wave): all rounds but the last full one stay
// data-parallel; the K steps of the tiles left (one wave plus the remainder) are cut into
// gridDim.x equal, contiguous ranges, one per block. SK = 2: only the remainder (fewer
// tiles than blocks) is cut so. A tile cut between blocks is
// finished by the block that has its K step 0 (the "finisher", which runs it last); the
// others ("contributors", each at the start of its range) leave FP32 partial sums in a
// workspace and count themselves in the tile's flag.
struct GsWork {
    int ksteps;
    int dp_tiles;                  // tiles [0, dp_tiles): whole, round robin
    long long base, total;         // the stream-K K steps: [base, base + total)
    long long begin, end;          // this block's part of them
};

__device__ __forceinline__ long long gs_sk_start(const GsWork& w, int b) {
    return w.base + w.total * b / gridDim.x;
}

template <int SK>
__device__ __forceinline__ GsWork gs_work(int tiles, int ksteps) {
    GsWork w;
    w.ksteps = ksteps;
    const int g = gridDim.x, waves = tiles / g;
    w.dp_tiles = (!SK || tiles % g == 0) ? tiles : max(waves - (SK == 1), 0) * g;
    w.base = (long long)w.dp_tiles * ksteps;
    w.total = (long long)(tiles - w.dp_tiles) * ksteps;
    w.begin = gs_sk_start(w, blockIdx.x);
    w.end = gs_sk_start(w, blockIdx.x + 1);
    return w;
}

// Calls f(tile, k0, k1) for each piece of the block's work in order: K steps [k0, k1) of
// the tile (whole tiles first, then the stream-K range).
template <class F>
__device__ __forceinline__ void gs_for_each_unit(const GsWork& w, F&& f) {
    for (int t = blockIdx.x; t < w.dp_tiles; t += gridDim.x) f(t, 0, w.ksteps);
    for (long long i = w.begin; i < w.end;) {
        const int t = static_cast<int>(i / w.ksteps);
        const int k0 = static_cast<int>(i - (long long)t * w.ksteps);
        const int k1 = static_cast<int>(min((long long)w.ksteps, k0 + (w.end - i)));
        f(t, k0, k1);
        i += k1 - k0;
    }
}

// The piece of work that follows K steps [k0, k1) of tile t in gs_for_each_unit's order:
// true with its tile and first K step, or false when t's piece was the block's last.
__device__ __forceinline__ bool gs_next_unit(const GsWork& w, int t, int k1, int& nt, int& nk0) {
    long long i;
    if (t < w.dp_tiles) {
        nt = t + gridDim.x;
        nk0 = 0;
        if (nt < w.dp_tiles) return true;
        i = w.begin;
    } else {
        i = (long long)t * w.ksteps + k1;
    }
    if (i >= w.end) return false;
    nt = static_cast<int>(i / w.ksteps);
    nk0 = static_cast<int>(i - (long long)nt * w.ksteps);
    return true;
}

// Partial sums of a cut tile. The workspace holds one slot per block (a block contributes
// at most once: its first stream-K piece), a consumer's 64 x BN accumulators stored
// register by register, so each store and load of a warpgroup is 512 contiguous bytes.
// flags: one counter per (tile, consumer), zero before a launch and left zero after it.
template <int NREG, int CONSUMERS>
__device__ __forceinline__ float* gs_sk_slot(float* ws, int block, int c) {
    return ws + ((long long)block * CONSUMERS + c) * NREG * 128 + threadIdx.x % 128;
}

// A contributor: store the partial sums, then count them in on the tile's flag.
template <int NREG, int CONSUMERS>
__device__ __forceinline__ void gs_sk_publish(const float (&acc)[NREG], float* ws, int* flag,
                                              int c, int bar_id) {
    float* slot = gs_sk_slot<NREG, CONSUMERS>(ws, blockIdx.x, c);
#pragma unroll
    for (int r = 0; r < NREG; ++r) __stcg(slot + r * 128, acc[r]);
    __threadfence();
    gs_named_barrier(bar_id, 128);
    if (threadIdx.x % 128 == 0)
        asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(flag) : "memory");
}

// The finisher of tile t: wait for every contributor (the blocks after this one whose
// non-empty ranges start inside the tile), add their partial sums, reset the flag.
template <int NREG, int CONSUMERS>
__device__ __forceinline__ void gs_sk_gather(float (&acc)[NREG], const float* ws, int* flag,
                                             const GsWork& w, int t, int c, int bar_id) {
    const long long tile_end = (long long)(t + 1) * w.ksteps;
    int n = 0;
    for (int b = blockIdx.x + 1; b < (int)gridDim.x; ++b) {
        const long long s = gs_sk_start(w, b);
        if (s >= tile_end) break;
        n += s < gs_sk_start(w, b + 1);
    }
    if (threadIdx.x % 128 == 0) {
        int v;
        do {
            asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
        } while (v < n);
        *flag = 0;  // for the next launch (nothing else touches it in this one)
    }
    gs_named_barrier(bar_id, 128);
    for (int b = blockIdx.x + 1; b < (int)gridDim.x; ++b) {
        const long long s = gs_sk_start(w, b);
        if (s >= tile_end) break;
        if (s == gs_sk_start(w, b + 1)) continue;
        float* slot = gs_sk_slot<NREG, CONSUMERS>(const_cast<float*>(ws), b, c);
#pragma unroll
        for (int r = 0; r < NREG; ++r) acc[r] += __ldcg(slot + r * 128);
    }
}

// After a consumer's piece (tile t, K steps [k0, k1)) of a tile: true when the tile is
// complete in acc and should be stored (a whole tile, or its finisher after gathering).
template <int NREG, int CONSUMERS>
__device__ __forceinline__ bool gs_sk_settle(float (&acc)[NREG], float* ws, int* flags,
                                             const GsWork& w, int t, int k0, int k1, int c) {
    if (k0 == 0 && k1 == w.ksteps) return true;
    int* flag = flags + (long long)t * CONSUMERS + c;
    if (k0 != 0) {
        gs_sk_publish<NREG, CONSUMERS>(acc, ws, flag, c, 3 + c);
        return false;
    }
    gs_sk_gather<NREG, CONSUMERS>(acc, ws, flag, w, t, c, 3 + c);
    return true;
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
        }
    });
}

// ------------------------------------------------------------------ registers
template <int REGS>
__device__ __forceinline__ void gs_setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void gs_setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// ------------------------------------------------------------------ wgmma
// Descriptor of a K-major tile in the 128-byte swizzle: rows of 128 bytes, groups of 8 rows
// 1024 bytes apart (stride byte offset), leading byte offset unused (1). The tile must start
// on a 1024-byte boundary; a step of 16 bytes along K inside the row adds 1 to the address
// field, which the hardware swizzles like TMA did.
__device__ __forceinline__ unsigned long long gs_wgmma_desc_sw128(const void* smem) {
    unsigned long long addr = gs_smem_addr(smem);
    return ((addr & 0x3FFFFull) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void gs_wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void gs_wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void gs_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of accumulator registers across wgmma issue/wait.
template <int R>
__device__ __forceinline__ void gs_fence_regs(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

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

// The wgmma instructions (D += A * B, or D = A * B when accumulate == 0); A and B are
// shared-memory descriptors, both K-major. Generated, one per shape the levels use.
__device__ __forceinline__ void gs_wgmma_bf16_n256(float (&d)[128], unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void gs_wgmma_bf16_n128(float (&d)[64], unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void gs_wgmma_e4m3_n128(float (&d)[64], unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void gs_wgmma_e4m3_n192(float (&d)[96], unsigned long long da, unsigned long long db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "l"(da), "l"(db), "r"(accumulate));
}

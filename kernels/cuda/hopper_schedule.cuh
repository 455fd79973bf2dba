// Hopper (sm_90a) persistent levels' schedule (part of hopper.cuh): which K steps of which
// output tiles a block computes -- whole tiles round robin, stream-K ranges for the last
// wave -- and the partial sums of a tile cut between blocks.
#pragma once
#include "hopper_barriers.cuh"

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

// Shared by every level of the gemmscope ladder. Assembled into each level's source
// string before compilation (see kernels/toolchain/nvrtc.py), so its hash is part of every cache key.
//
// Conventions for every kernel: row-major A (M x K), B (K x N), C (M x N); C = A * B;
// every level is correct for any M, N, K >= 1. The template flag VEC selects the fast
// path with vector loads, which the host uses only when K and N are multiples of the
// vector width (so every vector is aligned and either wholly inside or wholly outside
// the matrix); VEC=false is the element-wise edge path of the same kernel.
#pragma once

#define GS_CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

typedef long long gs_index;  // element offsets: M*K can exceed 2^31

// The shared-space byte address of a generic pointer into shared memory, as the PTX
// shared-memory instructions take it (cp.async, ld.shared, ldmatrix, mbarrier, TMA, wgmma
// descriptors): the one generic-to-shared conversion of every level. gs_smem_addr64 keeps
// it 64-bit, the form ptxas schedules best for ld.shared (gs_lds4 says why).
__device__ __forceinline__ unsigned long long gs_smem_addr64(const void* p) {
    return __cvta_generic_to_shared(p);
}
__device__ __forceinline__ unsigned gs_smem_addr(const void* p) {
    return static_cast<unsigned>(gs_smem_addr64(p));
}

// cp.async (sm_80+): copy global -> shared without staging in registers. When src_bytes
// is 0 nothing is read and the destination is filled with zeros (used for edge tiles).
__device__ __forceinline__ void gs_cp_async16(void* smem, const void* gmem, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(gs_smem_addr(smem)),
                 "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void gs_cp_async4(void* smem, const void* gmem, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(gs_smem_addr(smem)),
                 "l"(gmem), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void gs_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void gs_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// A float4 of row `row` of a matrix with `cols` columns, starting at column c (c % 4 == 0),
// zeros outside the matrix. VEC: cols % 4 == 0, so the vector is aligned and all-in or
// all-out: one 128-bit load, written as one (__ldg of a float4, LDG.E.128) because the
// build turns NVVM's load/store vectorizer off (kernels/toolchain/nvrtc_options.py), which
// leaves a float4 copy as four scalar loads. Otherwise four guarded scalar loads.
template <bool VEC>
__device__ __forceinline__ float4 gs_load4(const float* __restrict__ P, int rows, int cols,
                                           int row, int c) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (row >= rows) return v;
    const float* src = P + (gs_index)row * cols;
    if (VEC) {
        if (c < cols) v = __ldg(reinterpret_cast<const float4*>(src + c));
    } else {
        v.x = c < cols ? src[c] : 0.f;
        v.y = c + 1 < cols ? src[c + 1] : 0.f;
        v.z = c + 2 < cols ? src[c + 2] : 0.f;
        v.w = c + 3 < cols ? src[c + 3] : 0.f;
    }
    return v;
}

// One 128-bit / 64-bit global store (STG.E.128 / STG.E.64), written as one for the reason
// gs_load4 gives. Plain st.global, as a float4 copy was: __stwb's st.global.wb becomes a
// strong store (STG.E.128.STRONG.SM). `p` is 16- / 8-byte aligned.
__device__ __forceinline__ void gs_st_global4(bool pred, float* p, float x, float y, float z,
                                              float w) {
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %5, 0;\n\t"
                 "@p st.global.v4.f32 [%0], {%1, %2, %3, %4};\n\t}\n"
                 ::"l"(p), "f"(x), "f"(y), "f"(z), "f"(w), "r"(int(pred))
                 : "memory");
}
__device__ __forceinline__ void gs_st_global2(bool pred, float* p, float x, float y) {
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %3, 0;\n\t"
                 "@p st.global.v2.f32 [%0], {%1, %2};\n\t}\n"
                 ::"l"(p), "f"(x), "f"(y), "r"(int(pred))
                 : "memory");
}

// Four consecutive outputs of row `row` of C from column c, guarded like gs_load4; VEC: one
// 128-bit store (gs_st_global4).
template <bool VEC>
__device__ __forceinline__ void gs_store4(float* __restrict__ C, int M, int N, int row, int c,
                                          float x, float y, float z, float w) {
    float* dst = C + (gs_index)row * N + c;
    if (VEC) {
        // the guard as the store's predicate, not a branch (the asm would keep the branch)
        gs_st_global4(row < M && c < N, dst, x, y, z, w);
    } else {
        if (row >= M) return;
        if (c < N) dst[0] = x;
        if (c + 1 < N) dst[1] = y;
        if (c + 2 < N) dst[2] = z;
        if (c + 3 < N) dst[3] = w;
    }
}

// Four floats from shared memory with one ld.shared.v4 (LDS.128); `p` points into shared
// memory, 16-byte aligned. The address is given to ptxas as a 64-bit shared-window address
// (a base plus the constant offset it folds), the form NVVM's own vector loads took: with
// 32-bit addresses (gs_smem_addr) NVRTC 13.0's ptxas kept each k step's six loads in one
// run ahead of its FMAs instead of spreading them among the previous step's, and
// cp_async lost 5-7% (benchmarks/build_rule_speed.py; runs of loads counted in SASS).
__device__ __forceinline__ void gs_lds4(float* dst, const float* p) {
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(dst[0]), "=f"(dst[1]), "=f"(dst[2]), "=f"(dst[3])
                 : "l"(gs_smem_addr64(p))
                 : "memory");
}

// Fragments of a warp-tiled thread (warp_tiling.cu, cp_async.cu). As is transposed
// (As[k * LDA + m]), Bs row-major (Bs[k * BN + n]). The thread's outputs are
// WMITER x WNITER pieces of TM x TN; piece (im, jn) starts at row m0 + im*WSUBM and column
// n0 + jn*WSUBN of the block tile. All shared reads are 128-bit.
template <int LDA, int BN, int WMITER, int WNITER, int WSUBM, int WSUBN, int TM, int TN>
__device__ __forceinline__ void gs_load_frags(const float* __restrict__ As,
                                              const float* __restrict__ Bs, int k, int m0, int n0,
                                              float (&rm)[WMITER * TM], float (&rn)[WNITER * TN]) {
    const float* a = As + k * LDA + m0;
    const float* b = Bs + k * BN + n0;
#pragma unroll
    for (int im = 0; im < WMITER; ++im)
#pragma unroll
        for (int i = 0; i < TM; i += 4) gs_lds4(&rm[im * TM + i], a + im * WSUBM + i);
#pragma unroll
    for (int jn = 0; jn < WNITER; ++jn)
#pragma unroll
        for (int j = 0; j < TN; j += 4) gs_lds4(&rn[jn * TN + j], b + jn * WSUBN + j);
}

// acc += rm (column) x rn (row): the thread's whole tile, one k step.
template <int MI, int NJ>
__device__ __forceinline__ void gs_outer_product(const float (&rm)[MI], const float (&rn)[NJ],
                                                 float (&acc)[MI][NJ]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) acc[i][j] += rm[i] * rn[j];
}

// The math of one BK-deep tile. With PF the fragments of step k+1 are loaded into a
// second register set while step k is computed.
template <int BK, int LDA, int BN, int WMITER, int WNITER, int WSUBM, int WSUBN, int TM, int TN,
          bool PF = false>
__device__ __forceinline__ void gs_warp_tile_mma(const float* __restrict__ As,
                                                 const float* __restrict__ Bs, int m0, int n0,
                                                 float (&acc)[WMITER * TM][WNITER * TN]) {
    float rm[PF ? 2 : 1][WMITER * TM], rn[PF ? 2 : 1][WNITER * TN];
    if (PF) gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(As, Bs, 0, m0, n0,
                                                                          rm[0], rn[0]);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        const int buf = PF ? (k & 1) : 0;
        if (!PF || k + 1 < BK)
            gs_load_frags<LDA, BN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
                As, Bs, PF ? k + 1 : k, m0, n0, rm[PF ? buf ^ 1 : 0], rn[PF ? buf ^ 1 : 0]);
        gs_outer_product(rm[buf], rn[buf], acc);
    }
}

// The grouped block order, the one copy of it: tile t of a tm x tn grid of output tiles,
// GM tile rows walked column by column (inside a group of GM rows, t runs down a column
// first), so the tiles that run at the same time share rows of A and columns of B in L2.
// GM = 1 is row-major order. The persistent levels number their tiles themselves;
// gs_block_coords maps a 2D grid's blocks through it.
__device__ __forceinline__ void gs_group_coords(int t, int tm, int tn, int GM, int& bm, int& bn) {
    const int per_group = GM * tn;
    const int group = t / per_group, first = group * GM;
    const int rows = min(tm - first, GM);
    const int in_group = t - group * per_group;
    bm = first + in_group % rows;
    bn = in_group / rows;
}

// This block's coordinates (bx: column of blocks, by: row) of a gridDim.x x gridDim.y grid
// in gs_group_coords's order, GM block rows at a time; GM <= 1 (0 too) is the grid's own
// order, without the arithmetic.
template <int GM>
__device__ __forceinline__ void gs_block_coords(int& bx, int& by) {
    if (GM <= 1) {
        bx = blockIdx.x;
        by = blockIdx.y;
        return;
    }
    const int gn = gridDim.x, gm = gridDim.y;
    gs_group_coords(blockIdx.y * gn + blockIdx.x, gm, gn, GM, by, bx);
}

// Write a warp-tiled thread's outputs (layout as in gs_warp_tile_mma) with float4 stores.
template <bool VEC, int WMITER, int WNITER, int WSUBM, int WSUBN, int TM, int TN>
__device__ __forceinline__ void gs_warp_tile_store(float* __restrict__ C, int M, int N, int row0,
                                                   int col0,
                                                   const float (&acc)[WMITER * TM][WNITER * TN]) {
#pragma unroll
    for (int im = 0; im < WMITER; ++im)
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int jn = 0; jn < WNITER; ++jn)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const float* a = &acc[im * TM + i][jn * TN + j];
                    gs_store4<VEC>(C, M, N, row0 + im * WSUBM + i, col0 + jn * WSUBN + j, a[0],
                                   a[1], a[2], a[3]);
                }
}

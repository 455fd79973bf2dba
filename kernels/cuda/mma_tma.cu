// Level "mma_tma" (sm_90a): mma_persistent's math (ldmatrix + mma.sync.m16n8k16, FP16 in,
// FP32 accumulate, 64x64 warp tiles) fed the way wgmma_tma is fed. One persistent block
// per SM; its warps specialize:
//   - warpgroup 0, the producer, gives most of its registers away (setmaxnreg.dec) and one
//     of its threads copies the A tile (BM x BK) and the Bt tile (BN x BK) of each K step
//     by TMA into a ring of STAGES stages, each completing on the stage's "full" mbarrier;
//   - the (BM / WM) x (BN / WN) consumer warps wait on "full", load their fragments by
//     ldmatrix and multiply; each thread arrives on the stage's "empty" mbarrier once its
//     last fragments of the stage have been multiplied, so the producer may refill it.
// The math warps issue no copies, compute no copy addresses and never meet at a block
// barrier: a warp that is ahead runs on into the next stage while another still loads.
// TMA writes the 128-byte swizzle, which is mma.cuh's gs_swz for rows of 128 bytes (chunk
// c of row r at chunk c ^ (r % 8)), so ldmatrix reads it without bank conflicts. B is
// taken as Bt (N x K, K-major, the "col" operand of mma.sync): its fragments load with the
// same non-transposed ldmatrix as A's.
// C is FP16, as its reference (cuBLAS FP16) writes it. Each math warp rounds its 64 x 64
// tile to FP16 pairs and writes it with 16 stmatrix.x4 into its own 8 KB of shared memory,
// after the stages, in the C map's 128-byte swizzle; its lane 0 then issues two TMA stores
// (32-row boxes) and the warp goes on to its next tile without waiting for them: the buffer
// is written again a tile later, once those stores have read it. (Each thread's 64 guarded
// 8-byte stores of an FP32 C held the math warps ~7% of their time.)
// Edges: TMA fills out-of-bounds rows and columns with zeros and clips the stores; where N
// % 8 != 0 no C map can be made (its row pitch must be a multiple of 16 bytes) and each lane
// stores its FP16 pairs, guarded. The host refuses K % 8 != 0 (the same rule for A and Bt).
#include "common.cuh"
#include "hopper.cuh"
#include "mma.cuh"
#include "mma_store16.cuh"
#include "trace.cuh"

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GM, bool VEC>
__global__ void __launch_bounds__(128 + (BM / WM) * (BN / WN) * 32, 1)
hgemm_mma_tma(int M, int N, int K, const __grid_constant__ GsTensorMap tmA,
              const __grid_constant__ GsTensorMap tmB, const __grid_constant__ GsTensorMap tmC,
              unsigned short* __restrict__ C, int tma_c, float* __restrict__ ws,
              int* __restrict__ flags) {
    constexpr int WARPS_N = BN / WN, CONSUMER_THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MT = WM / 16, NT = WN / 8, KK = BK / 16;
    constexpr int ROW = BK * 2;  // bytes per shared row of A and of Bt: one swizzle row
    constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr int STG_BYTES = WM * WN * 2;  // a math warp's C staging, after the stages
    static_assert(ROW == 128, "a K step must be one 128-byte swizzle row");
    static_assert(WM % 16 == 0 && WN % 16 == 0, "fragment shape");
    static_assert(WM == 64 && WN == 64, "a warp's C tile is two 32 x 64 boxes of the C map");

    extern __shared__ unsigned char gs_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    unsigned char* smem = gs_align_1024(gs_dyn_smem);

    const int tm = GS_CEIL_DIV(M, BM), tn = GS_CEIL_DIV(N, BN);
    const int tiles = tm * tn, ktiles = GS_CEIL_DIV(K, BK);
    gs_ws_init_barriers<STAGES, CONSUMER_THREADS>(full, empty);
    const GsWork work = gs_work<0>(tiles, ktiles);

    if (threadIdx.x < 128) {
        // ---------------------------------------------------------------- producer
        gs_setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            gs_ws_produce<BM, BN, BK, STAGES, GM, A_BYTES, STAGE_BYTES>(&tmA, &tmB, smem, full,
                                                                      empty, tm, tn, work);
        return;
    }
    // -------------------------------------------------------------------- consumers
    gs_setmaxnreg_inc<232>();
    const int tid = threadIdx.x - 128, warp = tid / 32, lane = tid % 32;
    GS_TRACE_LANE(tid % 128 == 0);
    GS_TRACE(LANE_START, -1, 0);
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const int my_tiles = (int)blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int total = my_tiles * ktiles;  // K steps this block consumes, all tiles together

    // lane offsets inside a stage, one per 16-deep step (rows 8 apart keep the lane's
    // swizzle phase lane % 8, so the fragments of other rows are immediates away):
    // A rows wm0 + lane % 16, chunk 2 kk + lane / 16; Bt rows (n) wn0 + (lane / 16) * 8 +
    // lane % 8, chunk 2 kk + (lane / 8) % 2 (the x4 matrices: n low / k low, n low / k
    // high, n high / k low, n high / k high)
    unsigned a_off[KK], b_off[KK];
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
        a_off[kk] = gs_swz<ROW>(wm0 + lane % 16, kk * 2 + lane / 16);
        b_off[kk] = A_BYTES + gs_swz<ROW>(wn0 + (lane / 16) * 8 + lane % 8, kk * 2 + (lane / 8) % 2);
    }
    const unsigned smem_base = gs_smem_addr(smem);
    unsigned a[2][MT][4], b[2][NT / 2][4];  // fragments of step kk and kk + 1
    auto load_frags = [&](int s, int kk, int buf) {
        const unsigned st = smem_base + s * STAGE_BYTES;
#pragma unroll
        for (int i = 0; i < MT; ++i) gs_ldmatrix_x4(a[buf][i], st + a_off[kk] + i * 16 * ROW);
#pragma unroll
        for (int j = 0; j < NT / 2; ++j) gs_ldmatrix_x4(b[buf][j], st + b_off[kk] + j * 16 * ROW);
    };

    if (total > 0) {
        gs_mbar_wait(&full[0], 0);
        GS_TRACE(DATA_READY, blockIdx.x, 0);
        load_frags(0, 0, 0);
    }
    int g = 0;  // K steps consumed so far
    GS_TRACE_DO(bool gs_on = false;)  // kstep's copy that records (see gs_kstep)
    for (int i = 0; i < my_tiles; ++i) {
        float acc[MT][NT][4] = {};
        GS_TRACE_DO(const int gs_tile = blockIdx.x + i * gridDim.x;)
        GS_TRACE(TILE_BEGIN, gs_tile, 0);
        auto kstep = [&](int kt) {  // K step kt of the tile (step g of the block)
            const int s = g % STAGES;
            GS_TRACE_DO(const int gs_k1 = kt + 1 < ktiles ? kt + 1 : 0;)  // (kt + 1) % ktiles: a division cost more than the records
            GS_TRACE_DO(const bool gs_keep = gs_on && gs_tr.samples(kt), gs_keep1 = gs_on && gs_tr.samples(gs_k1);)  // the recording copy's tests (gs_kstep)
            GS_TRACE_DO(unsigned gs_wait_at = 0, gs_ready_at = 0;)  // the next step's wait: its clocks, recorded after this step's fence
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const int cur = kk & 1, nxt = cur ^ 1;
                if (kk + 1 < KK) {
                    load_frags(s, kk + 1, nxt);
                } else if (g + 1 < total) {  // K step g + 1 (perhaps the next tile's first)
                    const int s1 = (g + 1) % STAGES;
                    GS_TRACE_DO(if (gs_keep1) gs_wait_at = gs_tr.clock_lo();)  // after the step's first products
                    gs_mbar_wait(&full[s1], ((g + 1) / STAGES) & 1);
                    GS_TRACE_DO(if (gs_keep1) gs_ready_at = gs_tr.clock_lo();)
                    load_frags(s1, 0, nxt);
                }
#pragma unroll
                for (int mi = 0; mi < MT; ++mi)
#pragma unroll
                    for (int nj = 0; nj < NT; ++nj)
                        gs_mma_16816(acc[mi][nj], a[cur][mi], b[cur][nj / 2][(nj % 2) * 2],
                                     b[cur][nj / 2][(nj % 2) * 2 + 1]);
                // Free stage s after its last fragments were multiplied, behind a proxy
                // fence: the ldmatrix reads are generic-proxy accesses and the producer's
                // TMA refill an async-proxy write, which the arrival alone does not order
                // after them. With the arrival right after the last ldmatrix and no fence,
                // some runs on the H200 had relative errors of 4e-4 instead of 5e-6, read
                // as a stage refilled before a load had read it (docs/perf-notes.md).
                if (kk + 1 == KK) {
                    gs_fence_async_shared();
                    gs_mbar_arrive(&empty[s]);
                    GS_TRACE_DO(if (gs_on) gs_tr.put_p(GS_TR_MMA_DONE, gs_tile, kt, false, 0u);)  // put_p tests the step: gs_keep
                    GS_TRACE_P_AT(gs_keep1 && g + 1 < total, WAIT_BEGIN, gs_k1 ? gs_tile : gs_tile + gridDim.x, gs_k1, gs_wait_at);  // the next step's wait, recorded after the fence: before it, the records' stores held up its MEMBAR
                    GS_TRACE_P_AT(gs_keep1 && g + 1 < total, DATA_READY, gs_k1 ? gs_tile : gs_tile + gridDim.x, gs_k1, gs_ready_at);
                }
            }
        };
        // The trace build runs a K step in one of two copies: the steps whose events the
        // sampling keeps (this step's MMA_DONE, the next one's wait) in kstep with gs_on
        // true, a constant there once inlined, the others with gs_on false: the plain
        // build's code, so a step left out pays one uniform branch (issue 46 item 2).
        GS_TRACE_DO(auto gs_kstep = [&](int kt) { if (gs_tr.samples(kt) || gs_tr.samples(kt + 1 < ktiles ? kt + 1 : 0)) { gs_on = true; kstep(kt); gs_on = false; } else { kstep(kt); } };)
        for (int kt = 0; kt < ktiles; ++kt, ++g) {
            GS_TRACE_DO(auto& kstep = gs_kstep;)  // the trace build's two copies
            kstep(kt);
        }
        // epilogue of output tile i, while the producer already fills the next tile's stages
        int bm, bn;
        gs_group_coords(blockIdx.x + i * gridDim.x, tm, tn, GM, bm, bn);
        const int row0 = bm * BM + wm0 + lane / 4, col0 = bn * BN + wn0 + (lane % 4) * 2;
        if (tma_c) {
            const unsigned char* stg_p = smem + STAGES * STAGE_BYTES + warp * STG_BYTES;
            const unsigned stg = gs_smem_addr(stg_p);  // 1024-byte aligned: the swizzle's unit
            const int r0 = bm * BM + wm0, c0 = bn * BN + wn0;
            // the stores of this warp's last tile have read its buffer
            if (lane == 0) gs_bulk_wait_read<0>();
            __syncwarp();
            gs_stage_acc_f16<MT>(stg, 0, lane, acc);
            gs_fence_async_shared();  // this thread's stmatrix writes, for the copy engine
            __syncwarp();
            if (lane == 0) {
                gs_tma_store_2d(&tmC, stg_p, c0, r0);
                gs_tma_store_2d(&tmC, stg_p + STG_BYTES / 2, c0, r0 + WM / 2);
                gs_bulk_commit();
            }
        } else {
            gs_store_acc_f16(C, M, N, row0, col0, acc);
        }
        GS_TRACE(TILE_END, gs_tile, ktiles);
    }
    // the block's shared memory outlives the reads of this warp's last stores
    if (lane == 0) gs_bulk_wait_read<0>();
    GS_TRACE(LANE_END, -1, 0);
}

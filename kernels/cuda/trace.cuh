// The trace build of a level (issue 46): what each block did, on which SM, and when.
// A level marks its events with the GS_TRACE* macros below, each alone on its line. The
// plain build never sees those lines: kernels/toolchain/nvrtc.py's assembler leaves out
// every line that begins with GS_TRACE and the #include of this header, so the plain
// build's source, code key and cubin are those of the level before it was traced. The
// trace build keeps them, pastes this header in and defines GEMMSCOPE_TRACE.
//
// Records: one lane per warpgroup of a block (lane = linear thread index / 128), one thread
// of the lane writing, a register counter per lane, no atomics. The host sizes the buffer
// before the launch (kernels/engine/trace_launch.py) and sets gs_trace: lanes x cap records
// of 32 bytes, and a count per lane that goes on counting past cap, so a full lane is said
// (count > cap) and nothing is written past its slots. A block beyond the lanes the host
// sized counts itself in `lost`.
//
// K-stage sampling: the host sets stage_mask = every - 1 (every a power of two) and a
// K-stage event is recorded for the K steps k with (k + 2) & stage_mask at most 2: windows
// of three steps in a row, so that a pipelined level, whose events interleave across
// steps, has both ends of some of each phase (kernels/protocol/trace_kinds.py). 0: every
// step. The other events are always recorded.
//
// A record: %globaltimer (ns, 64 bits; 0 for a K-stage event, see put), clock64 (the SM's
// cycles, which place a block's events finer than the global timer's steps), then
// kind | lane << 8 | smid << 16, the output tile, the K step (or the stage use) and the
// linear block index (a K-stage event: smid 0xFFFF and block ~0; its slot says its block).
#pragma once

#ifdef GEMMSCOPE_TRACE
struct GsTrace {
    unsigned* counts;    // per lane: records written or wanted
    uint4* recs;         // lanes x cap x 2 uint4
    unsigned* lost;      // blocks that found no lane
    unsigned lanes;      // blocks x lanes_per_block
    unsigned cap;        // records per lane
    unsigned lanes_per_block;
    unsigned stage_mask; // K-stage events of the steps k with (k + 2) & mask <= 2
};
__constant__ GsTrace gs_trace;  // set by the host before the launch (cupy get_global)

// the kinds, as kernels/protocol/trace_records.py names them (same order)
enum GsTraceKind : unsigned {
    GS_TR_LANE_START = 0,  // the lane's thread began (after the block's barriers were set up)
    GS_TR_LANE_END = 1,    // the lane's thread has nothing more to do
    GS_TR_TILE_BEGIN = 2,  // a piece of an output tile begins (k: its first K step)
    GS_TR_TILE_END = 3,    // its results are stored (or handed on: stream-K)
    GS_TR_LOAD_ISSUED = 4, // a K step's copies were issued (producer: after its empty wait)
    GS_TR_DATA_READY = 5,  // a K step's operands are in shared memory (the consumer's wait)
    GS_TR_MMA_DONE = 6,    // a K step's products are done and its stage freed
    GS_TR_FIXUP_BEGIN = 7, // stream-K: a cut tile's partial sums handed on (k != 0) or gathered
    GS_TR_FIXUP_DONE = 8,  // stream-K: the finisher has every contributor's sums
    GS_TR_WAIT_BEGIN = 9,  // a consumer begins its wait for a K step's stage (where the
                           // level does other work between its last event and the wait)
};

// A lane's writer. LANE < 0 (GsTraceLane): the lane of the thread's warpgroup (its linear
// index / 128); LANE >= 0: that lane, one after a block's warpgroups' lanes (a K-stage
// observer's, GsTraceStages).
template <int LANE>
struct GsTraceLaneT {
    // Two registers of state, this thread's slot and its count, so that a level at its
    // register cap (register_2d: 128, for two blocks per SM) takes its trace without a
    // spill: gs_trace is in constant memory, and the block and SM a record names are read
    // again at each event from special registers, on the one thread that writes.
    unsigned slot;  // this lane's slot; ~0u: this thread does not record
    unsigned n;
    __device__ __forceinline__ explicit GsTraceLaneT(bool writer) {
        slot = ~0u;
        n = 0;
        if (!writer || gs_trace.recs == nullptr) return;
        const unsigned s = gs_block() * gs_trace.lanes_per_block + gs_lane();
        if (s >= gs_trace.lanes) {
            if (gs_lane() == 0) atomicAdd(gs_trace.lost, 1u);
            return;
        }
        slot = s;
    }
    // Whether this thread records the K-stage events of step k: it is its lane's writer
    // and the sampling keeps the step, in one compare (a slot is below 2^31: the buffer's
    // bound keeps lanes far fewer). Every thread makes it at each stage event, most of
    // them in steps the sampling leaves out, so it is what a sampled trace still costs.
    // Testing the slot first split the writer's warp at every stage event, its one thread
    // testing the step while the other 31 waited, and the block's barriers wait for that
    // warp (register_2d, by the SASS's stall counts: 149 cycles more than the plain build
    // per K step on that warp, 53 with the one compare; issue 46 item 2). Two tests with
    // the step's first spilled 8 bytes there. A level whose events of a step lie apart may
    // keep the answer (mma_tma: gs_keep) rather than test it again at each.
    __device__ __forceinline__ bool keeps(int k) const {
        return ((((unsigned)k + 2u) & gs_trace.stage_mask) | (slot & 0x80000000u)) <= 2u;
    }
    // Whether the sampling keeps step k, the step alone: the same answer in every thread,
    // so a branch on it is uniform (put_p).
    __device__ __forceinline__ bool samples(int k) const {
        return (((unsigned)k + 2u) & gs_trace.stage_mask) <= 2u;
    }
    __device__ __forceinline__ static unsigned gs_block() {
        return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    }
    __device__ __forceinline__ static unsigned gs_lane() {
        if constexpr (LANE >= 0) return (unsigned)LANE;
        return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 128;
    }
    // A K-stage event (a load issued, data ready, products done: most of a trace) is
    // the cheap kind, since it sits in the loop: clock64 and its lane, no %globaltimer,
    // no %smid and no block (0, 0xFFFF and ~0 in their places: the host reads the block
    // from the record's slot and places the event by its block's other events, which read
    // all of them), and no count store (a lane's count is stored at its other events, and
    // every lane's last event is one: TILE_END or LANE_END). (Leaving the lane out too
    // made register_2d, at its 128-register cap, spill 8 bytes: NVRTC 13.0.)
    __device__ __forceinline__ void put(unsigned kind, int tile, int k) {
        put_at(kind, tile, k, false, 0u);
    }
    // The low word of the SM's clock now: an event's time taken where it happens, its
    // record written later (put_at) where a branch costs the loop less.
    __device__ __forceinline__ static unsigned clock_lo() {
        unsigned c;
        asm volatile("mov.u32 %0, %%clock;\n" : "=r"(c));
        return c;
    }
    // put, with the clock's low word taken earlier (``at``, from clock_lo) where ``earlier``
    // (its high word is now's, less one where the low word has wrapped since).
    __device__ __forceinline__ void put_at(unsigned kind, int tile, int k, bool earlier,
                                           unsigned at) {
        const bool stage = kind == GS_TR_LOAD_ISSUED || kind == GS_TR_DATA_READY ||
                           kind == GS_TR_MMA_DONE || kind == GS_TR_WAIT_BEGIN;
        // a step the host's sampling leaves out takes no slot
        if (stage ? !keeps(k) : slot == ~0u) return;
        if (n < gs_trace.cap) {
            unsigned long long t = 0, c;
            unsigned head = kind | gs_lane() << 8 | 0xFFFFu << 16, block = ~0u;
            asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(c));
            if (earlier)
                c = ((c & ~0xFFFFFFFFull) | at) - ((unsigned)c < at ? 0x100000000ull : 0ull);
            if (!stage) {
                unsigned sm;
                asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
                asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
                head = kind | gs_lane() << 8 | sm << 16;
                block = gs_block();
            }
            uint4* r = gs_trace.recs + 2ull * (slot * (unsigned long long)gs_trace.cap + n);
            r[0] = make_uint4((unsigned)t, (unsigned)(t >> 32), (unsigned)c, (unsigned)(c >> 32));
            r[1] = make_uint4(head, (unsigned)tile, (unsigned)k, block);
        }
        ++n;
        if (!stage) gs_trace.counts[slot] = n;  // a store, no read: full or not
    }
    // put_at for a K-stage event, in the form that costs a warp-specialised Tensor Core
    // loop less: a branch on the step alone (samples: uniform, so no convergence region
    // around it, which put's per-thread test needs and the scheduler does not move work
    // across), then every thread of the warp reads the clock and the writer's two stores
    // are predicated. Measured at 4096³ every 16 / 64 (docs/perf-notes.md): mma_tma
    // +7.1 / +5.3% with put, +5.6 / +3.9% with this; fp8_deep +11.6 / +10.1% against
    // +8.7 / +6.7%; register_2d, whose writer is one thread of a block at a barrier and
    // which then spilled, +5.6% against +8.6%: it keeps put.
    __device__ __forceinline__ void put_p(unsigned kind, int tile, int k, bool earlier,
                                          unsigned at) {
        if (!samples(k)) return;
        put_c(kind, tile, k, earlier, at);
    }
    // An event of any kind in the K-stage form, always recorded: clock64 only (no
    // %globaltimer, %smid or block: the host places it by its block's timed events and
    // reads its block from its slot) and no count store, the writer's two 16-byte stores
    // predicated (no branch). The lane's last event must be one that stores the count
    // (LANE_END). fp8_deep writes its tiles' begin and end so: a %globaltimer read at each
    // cost its launch 1.8 points at 4096^3 (docs/perf-notes.md).
    __device__ __forceinline__ void put_c(unsigned kind, int tile, int k, bool earlier,
                                          unsigned at) {
        unsigned long long c;
        asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(c));
        if (earlier)
            c = ((c & ~0xFFFFFFFFull) | at) - ((unsigned)c < at ? 0x100000000ull : 0ull);
        const uint4* r = gs_trace.recs + 2ull * (slot * (unsigned long long)gs_trace.cap + n);
        const unsigned ok = slot != ~0u && n < gs_trace.cap;
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %0, 0;\n\t"
                     "@p st.global.v4.u32 [%1], {%2, %3, %4, %5};\n\t"
                     "@p st.global.v4.u32 [%1+16], {%6, %7, %8, %9};\n\t}"
                     :: "r"(ok), "l"(r), "r"(0u), "r"(0u), "r"((unsigned)c),
                     "r"((unsigned)(c >> 32)), "r"(kind | gs_lane() << 8 | 0xFFFFu << 16),
                     "r"((unsigned)tile), "r"((unsigned)k), "r"(~0u));
        ++n;  // every thread counts alike; only the writer's count is ever stored
    }
};
using GsTraceLane = GsTraceLaneT<-1>;

// A K-stage observer (issue 46 item 2): a warp with nothing else to do (fp8_deep: warp 1
// of the producer warpgroup) follows a warp-specialised level's ring of stages by its
// barriers alone and records, in the sampled K steps, in a lane of its own (LANE: after
// the warpgroups' lanes), DATA_READY when the stage's "full" barrier lets it through and
// MMA_DONE when its "empty" barrier does. It waits for the steps in order, as the
// consumers do, so DATA_READY is when the step's data were in shared memory and the block
// was done with the step before, as the observer sees it when its wait on the step before
// wakes it (a consumer's own wait ends 0.1-0.2 us sooner at 4096^3: docs/perf-notes.md);
// MMA_DONE is when every consumer (of both CTAs of a cluster) freed the stage, its
// products done. It never arrives on a barrier: the kernel's work and results are the
// plain build's, and the consumers' K loop carries no trace code. (fp8_deep at 4096^3, 3 K
// steps in 16, stretch 22: +2.6 / +2.8% over the plain build with the observer, +6.8% with
// the consumers' own K-stage records; their tile events alone cost +2.0-2.5%.) The level
// walks its tiles' K steps as its producer fills them, calling step(full, empty, s, k) for
// K step k of `tile` in stage s and pass(full, empty, s) for a stage a tile passes through
// empty, then end(); each stage's barriers start at parity 0 (the producer's first wait on
// "empty" is for the phase before).
template <int LANE>
struct GsTraceStages {
    GsTraceLaneT<LANE> lane;
    unsigned phase = 0;  // bit s: the parity of stage s's next phase, "full" and "empty" alike
    int tile = -1;
    __device__ __forceinline__ explicit GsTraceStages(bool writer) : lane(writer) {
        lane.put(GS_TR_LANE_START, -1, 0);
    }
    __device__ __forceinline__ static void wait(unsigned long long* bar, unsigned parity) {
        asm volatile("{\n.reg .pred done;\nGS_OBS_WAIT_%=:\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                     "@!done bra GS_OBS_WAIT_%=;\n}\n"
                     ::"r"(gs_smem_addr(bar)), "r"(parity) : "memory");
    }
    // the parity of stage s's phase that its next use completes, and the use counted
    __device__ __forceinline__ unsigned next_parity(int s) {
        const unsigned parity = (phase >> s) & 1u;
        phase ^= 1u << s;
        return parity;
    }
    __device__ __forceinline__ void step(unsigned long long* full, unsigned long long* empty,
                                         int s, int k) {
        const unsigned parity = next_parity(s);
        wait(full + s, parity);
        const bool kept = lane.samples(k);
        const unsigned ready = GsTraceLaneT<LANE>::clock_lo();
        wait(empty + s, parity);
        if (kept) {
            lane.put_c(GS_TR_DATA_READY, tile, k, true, ready);
            lane.put_c(GS_TR_MMA_DONE, tile, k, false, 0u);
        }
    }
    __device__ __forceinline__ void pass(unsigned long long* full, unsigned long long* empty,
                                         int s) {
        const unsigned parity = next_parity(s);
        wait(full + s, parity);
        wait(empty + s, parity);
    }
    __device__ __forceinline__ void end() { lane.put(GS_TR_LANE_END, -1, 0); }
};

// The lane of a block's thread 0 with its state in shared memory (GS_TRACE_T0*), for the
// levels whose every thread meets at the block's barriers (or has no K stages): nothing
// of the trace is held in a register through the kernel. The thread, the block and the
// slot are read again from the special registers at each record (asm volatile, so the
// compiler neither holds them nor moves them), the lane's count is a shared word, and a
// K-stage event tests its step first, the same in every thread (a uniform branch; only
// the sampled steps go on to the thread test). Measured at 4096^3 against GsTraceLane's
// put (docs/perf-notes.md, stretch 14): coalesced +8.4 -> -0.8% (its K loop, at 32
// registers, had kept fewer loads in flight with the lane's two registers held),
// smem_padded +5.0 -> +2.9%, register_2d +4.7 -> +2.6%, wmma +11.2 -> +8.1%, smem_tiled
// +12.1 -> +7.8%; double_buffer (+7.8 -> +24.9%), vectorized and cp_async_interior cost
// more so, and keep GsTraceLane.
__device__ __forceinline__ unsigned gs_t0_sreg_thread0() {
    unsigned x, y, z;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
    asm volatile("mov.u32 %0, %%tid.y;" : "=r"(y));
    asm volatile("mov.u32 %0, %%tid.z;" : "=r"(z));
    return (x | y | z) == 0u;
}
__device__ __forceinline__ unsigned gs_t0_sreg_block() {
    unsigned x, y, z, nx, ny;
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(x));
    asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(y));
    asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(z));
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(nx));
    asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(ny));
    return x + nx * (y + ny * z);
}
// thread 0 sets the lane's count (a block beyond the lanes the host sized is counted lost)
__device__ __forceinline__ void gs_t0_init(unsigned* count) {
    if (!gs_t0_sreg_thread0() || gs_trace.recs == nullptr) return;
    *count = 0u;
    if (gs_t0_sreg_block() * gs_trace.lanes_per_block >= gs_trace.lanes)
        atomicAdd(gs_trace.lost, 1u);
}
// the tile a thread-0 event names where it is the block's own (its linear index, as
// GS_TRACE_BLOCK_TILE), read from the special registers at the record
#define GS_TRACE_OWN_TILE (-3)
__device__ __forceinline__ void gs_t0_put(unsigned* count, unsigned kind, int tile, int k) {
    const bool stage = kind == GS_TR_LOAD_ISSUED || kind == GS_TR_DATA_READY ||
                       kind == GS_TR_MMA_DONE || kind == GS_TR_WAIT_BEGIN;
    if (stage && ((((unsigned)k + 2u) & gs_trace.stage_mask) > 2u)) return;  // uniform
    if (!gs_t0_sreg_thread0() || gs_trace.recs == nullptr) return;
    const unsigned block = gs_t0_sreg_block(), slot = block * gs_trace.lanes_per_block;
    if (slot >= gs_trace.lanes) return;
    if (tile == GS_TRACE_OWN_TILE) tile = (int)block;  // read here, not held
    const unsigned n = *count;
    if (n < gs_trace.cap) {
        unsigned long long t = 0, c;
        unsigned head = kind | 0xFFFFu << 16, b = ~0u;  // lane 0
        asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(c));
        if (!stage) {
            unsigned sm;
            asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
            asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
            head = kind | sm << 16;
            b = block;
        }
        uint4* r = gs_trace.recs + 2ull * (slot * (unsigned long long)gs_trace.cap + n);
        r[0] = make_uint4((unsigned)t, (unsigned)(t >> 32), (unsigned)c, (unsigned)(c >> 32));
        r[1] = make_uint4(head, (unsigned)tile, (unsigned)k, b);
    }
    *count = n + 1;
    if (!stage) gs_trace.counts[slot] = n + 1;
}

// GS_TRACE_LANE(writer): this thread's lane (its warpgroup); `writer` picks the one thread
// of the lane that records. GS_TRACE(kind, tile, k): an event of the lane, kind without its
// GS_TR_ prefix. GS_TRACE_IF(cond, kind, tile, k): the same where cond holds.
// GS_TRACE_DO(statement): a statement only the trace build has (a variable it needs).
#define GS_TRACE_LANE(writer) GsTraceLane gs_tr(writer)
#define GS_TRACE(kind, tile, k) gs_tr.put(GS_TR_##kind, (tile), (k))
#define GS_TRACE_IF(cond, kind, tile, k) \
    do {                                 \
        if (cond) GS_TRACE(kind, tile, k); \
    } while (0)
#define GS_TRACE_DO(...) __VA_ARGS__
// GS_TRACE_P(kind, tile, k), GS_TRACE_P_AT(cond, kind, tile, k, at): a K-stage event by
// put_p (the uniform branch and predicated stores), for a loop where that costs less
#define GS_TRACE_P(kind, tile, k) gs_tr.put_p(GS_TR_##kind, (tile), (k), false, 0u)
// GS_TRACE_C(kind, tile, k): any event in the K-stage form (put_c: the clock only)
#define GS_TRACE_C(kind, tile, k) gs_tr.put_c(GS_TR_##kind, (tile), (k), false, 0u)
#define GS_TRACE_P_AT(cond, kind, tile, k, at) \
    do {                                       \
        if (cond) gs_tr.put_p(GS_TR_##kind, (tile), (k), true, (at)); \
    } while (0)
// GS_TRACE_ON(on, kind, tile, k), GS_TRACE_ON_AT(on, kind, tile, k, at): a K-stage event in
// put_c's form where ``on`` holds (``on``: gs_tr.samples of its step, the same in every
// thread), so an unsampled step costs one uniform branch and no convergence region.
// Measured at 4096^3 against put's per-thread test (docs/perf-notes.md, stretch 14):
// vectorized +7.8 -> +3.6%, warp_tiling +4.6 -> +2.4%, mma_sync +17 -> +10.6%; it cost
// register_2d (a spill), smem_tiled and cp_async_interior more, which keep other forms
#define GS_TRACE_ON(on, kind, tile, k) \
    do {                               \
        if (on) gs_tr.put_c(GS_TR_##kind, (tile), (k), false, 0u); \
    } while (0)
#define GS_TRACE_ON_AT(on, kind, tile, k, at) \
    do {                                      \
        if (on) gs_tr.put_c(GS_TR_##kind, (tile), (k), true, (at)); \
    } while (0)
// GS_TRACE_AT(cond, kind, tile, k, at): an event that happened at ``at`` (gs_tr.clock_lo()
// then), recorded now, where cond holds
#define GS_TRACE_AT(cond, kind, tile, k, at) \
    do {                                     \
        if (cond) gs_tr.put_at(GS_TR_##kind, (tile), (k), true, (at)); \
    } while (0)
// GS_TRACE_T0_LANE(): the block's thread-0 lane (state in shared memory: gs_t0_put);
// GS_TRACE_T0(kind, tile, k), GS_TRACE_T0_IF(cond, kind, tile, k): its events
#define GS_TRACE_T0_LANE()              \
    __shared__ unsigned gs_t0_count;    \
    gs_t0_init(&gs_t0_count)
#define GS_TRACE_T0(kind, tile, k) gs_t0_put(&gs_t0_count, GS_TR_##kind, (tile), (k))
#define GS_TRACE_T0_IF(cond, kind, tile, k) \
    do {                                    \
        if (cond) GS_TRACE_T0(kind, tile, k); \
    } while (0)
// a one-tile-per-block level's tile (its linear block index), read again at each event
// rather than held in a register through the K loop
#define GS_TRACE_BLOCK_TILE (int)(blockIdx.y * gridDim.x + blockIdx.x)
#else
#define GS_TRACE_LANE(writer) ((void)0)
#define GS_TRACE(kind, tile, k) ((void)0)
#define GS_TRACE_IF(cond, kind, tile, k) ((void)0)
#define GS_TRACE_DO(...)
#define GS_TRACE_AT(cond, kind, tile, k, at) ((void)0)
#define GS_TRACE_P(kind, tile, k) ((void)0)
#define GS_TRACE_C(kind, tile, k) ((void)0)
#define GS_TRACE_P_AT(cond, kind, tile, k, at) ((void)0)
#define GS_TRACE_ON(on, kind, tile, k) ((void)0)
#define GS_TRACE_T0_LANE() ((void)0)
#define GS_TRACE_T0(kind, tile, k) ((void)0)
#define GS_TRACE_T0_IF(cond, kind, tile, k) ((void)0)
#define GS_TRACE_ON_AT(on, kind, tile, k, at) ((void)0)
#endif

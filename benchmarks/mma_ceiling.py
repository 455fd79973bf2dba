"""How fast can mma.sync go on this GPU? The wall under the mma_sync levels (GPU machine).

    python benchmarks/mma_ceiling.py [--out DIR] [--iters N]
    python benchmarks/mma_ceiling.py --smoke  # CI: arguments and the table, no GPU

Issue 17 asks mma_sync for 65% of cuBLAS FP16 and wmma for 50%. Both levels issue the same
instruction, HMMA.16816 (mma.sync.m16n8k16, FP16 in, FP32 accumulate), so this script
measures what that instruction can do here, adding one piece of a real GEMM main loop at
a time to a kernel that computes nothing useful:

  regs     the warps multiply fragments already in registers (the tensor pipe alone)
  ldsm     + the fragments of every 16-deep step come from shared memory by ldmatrix
             (8 ldmatrix.x4 per 32 mma, double-buffered, swizzled: no bank conflicts)
  sync     + a block barrier every 4 steps (one 64-deep K tile)
  cpasync  + every K tile copies a 128x64 A and 64x256 B tile (48 KiB) from global memory
             (L2-resident) into shared memory by cp.async, STAGES deep

Each row is one launch shape: warps per block (a 64x64 warp tile, 128 accumulators per
thread, or 64x32 where the register file needs it) and blocks per SM. TFLOPS counts the
mma work only, over the median of the timed launches (CUDA events); the SM clock is the
NVML average over the timed launches. A table comes last; JSON lines go to DIR/ceiling.jsonl.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import _smoke
from _args import count

SOURCE = r"""
// the ladder's own helpers (kernels/cuda/mma.cuh): the same ldmatrix, mma.sync and swizzle
#include "mma.cuh"
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// MODE 0 regs, 1 ldsm, 2 sync, 3 cpasync; WN 64 or 32; THREADS = warps * 32
extern "C" __global__ void __launch_bounds__(THREADS)
hmma_ceiling(const __half* __restrict__ src, float* out, int iters) {
    constexpr int MT = 4, NT = WN / 8, KK = 4;          // 64 x WN warp tile, 64-deep K tile
    constexpr int A_ROW = 128, B_ROW = 512;             // bytes per row: A 64 k, B 256 n
    constexpr int A_STAGE = 128 * A_ROW, B_STAGE = 64 * B_ROW;
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    constexpr int WARPS_N = 256 / WN;
    const int wm0 = (warp / WARPS_N) % 2 * 64, wn0 = (warp % WARPS_N) * WN;
    unsigned a[2][MT][4], b[2][NT / 2][4];
    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            a[0][i][q] = a[1][i][q] = 0x3c003c00u ^ (tid + i + q);
        }
#pragma unroll
    for (int j = 0; j < NT / 2; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) b[0][j][q] = b[1][j][q] = 0x3c003c00u ^ (tid * 3 + j + q);
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

    const unsigned as0 = smem_u32(smem), bs0 = as0 + STAGES * A_STAGE;
    unsigned a_off[KK], b_off[NT / 2];
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) a_off[kk] = gs_swz<A_ROW>(wm0 + lane % 16, kk * 2 + lane / 16);
#pragma unroll
    for (int j = 0; j < NT / 2; ++j)
        b_off[j] = gs_swz<B_ROW>(((lane / 8) % 2) * 8 + lane % 8, (wn0 + j * 16) / 8 + lane / 16);
    // cp.async: THREADS threads copy 128 rows x 8 chunks of A and 64 rows x 32 chunks of B
    const int a_r = tid / 8, a_c = tid % 8, b_r = tid / 32, b_c = tid % 32;
    constexpr int A_PASS = THREADS / 8, B_PASS = THREADS / 32;

    for (int it = 0; it < iters; ++it) {
        const int s = it % STAGES;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            const int cur = MODE >= 1 ? (kk & 1) : 0, nxt = cur ^ 1;
            if (MODE >= 1) {
                const int k2 = (kk + 1) % KK;
                const int s2 = kk + 1 < KK ? s : (it + 1) % STAGES;
#pragma unroll
                for (int i = 0; i < MT; ++i)
                    gs_ldmatrix_x4(a[nxt][i], as0 + s2 * A_STAGE + a_off[k2] + i * 16 * A_ROW);
#pragma unroll
                for (int j = 0; j < NT / 2; ++j)
                    gs_ldmatrix_x4_trans(b[nxt][j],
                                         bs0 + s2 * B_STAGE + b_off[j] + k2 * 16 * B_ROW);
            }
            if (MODE >= 2 && kk == KK - 1) {
                if (MODE >= 3) asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
                __syncthreads();
                if (MODE >= 3) {
                    const int s3 = (it + STAGES - 1) % STAGES;
                    const __half* ga = src + (size_t)((it * 7) % 64) * 65536;
#pragma unroll
                    for (int p = 0; p < 128 / A_PASS; ++p) {
                        const int r = a_r + p * A_PASS;
                        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                            as0 + s3 * A_STAGE + gs_swz<A_ROW>(r, a_c)),
                            "l"(ga + r * 64 + a_c * 8));
                    }
#pragma unroll
                    for (int p = 0; p < 64 / B_PASS; ++p) {
                        const int r = b_r + p * B_PASS;
                        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                            bs0 + s3 * B_STAGE + gs_swz<B_ROW>(r, b_c)),
                            "l"(ga + 8192 + r * 256 + b_c * 8));
                    }
                    asm volatile("cp.async.commit_group;\n" ::);
                }
            }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    gs_mma_16816(acc[i][j], a[cur][i], b[cur][j / 2][(j % 2) * 2],
                             b[cur][j / 2][(j % 2) * 2 + 1]);
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) sum += acc[i][j][q];
    out[blockIdx.x * THREADS + tid] = sum;
}
"""

MODES = {"regs": 0, "ldsm": 1, "sync": 2, "cpasync": 3}
# (mode, warps per block, WN, blocks per SM, stages)
CASES = [
    ("regs", 8, 64, 1, 4), ("regs", 4, 64, 2, 4), ("regs", 16, 32, 1, 4),
    ("regs", 4, 64, 1, 4),
    ("ldsm", 8, 64, 1, 4), ("ldsm", 16, 32, 1, 2),
    ("sync", 8, 64, 1, 4),
    ("cpasync", 8, 64, 1, 4), ("cpasync", 8, 64, 1, 3), ("cpasync", 8, 64, 1, 2),
]


class ClockPoll:
    """The SM clock (MHz) sampled by NVML every 5 ms while running."""

    def __init__(self) -> None:
        import pynvml
        pynvml.nvmlInit()
        self.nvml = pynvml
        self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
        self.samples: list[int] = []
        self.on = False
        self.stop = False
        self.t = threading.Thread(target=self._loop, daemon=True)
        self.t.start()

    def _loop(self) -> None:
        while not self.stop:
            if self.on:
                self.samples.append(self.nvml.nvmlDeviceGetClockInfo(
                    self.h, self.nvml.NVML_CLOCK_SM))
            time.sleep(0.005)


def call(launch: tuple) -> None:
    """One launch: (function, grid, block, arguments, dynamic shared bytes)."""
    fn, grid, block, kargs, smem = launch
    fn(grid, block, kargs, shared_mem=smem)


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["mode     warps tile  blk/SM stages regs  TFLOPS  SM MHz  HMMA/SM/clk"]
    for r in rows:
        lines.append(f"{r['mode']:8} {r['warps']:5} {r['warp_tile']:5} {r['blocks_per_sm']:6} "
                     f"{r['stages']:6} {r['regs']:4} {r['tflops']:7.1f} "
                     f"{r['sm_clock_mhz_avg'] or 0:7.0f} {r['hmma_per_sm_clk'] or 0:11.3f}")
    return "\n".join(lines)


def made_up_rows() -> list[dict[str, Any]]:
    """A row per case as main() makes it, the figures made up (--smoke)."""
    return [{"mode": mode, "warps": warps, "warp_tile": f"64x{wn}", "blocks_per_sm": bps,
             "stages": stages, "regs": 200, "local_bytes": 0, "median_s": 1e-3,
             "tflops": 600.0 - 10 * i, "sm_clock_mhz_avg": 1980.0, "hmma_per_sm_clk": 0.9}
            for i, (mode, warps, wn, bps, stages) in enumerate(CASES)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".")
    ap.add_argument("--iters", type=count, default=4000, help="64-deep K tiles per warp")
    ap.add_argument("--repeats", type=count, default=10)
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.smoke:
        _smoke.made_up(table(made_up_rows()))
        _smoke.needs_gpu()
        return
    import cupy as cp

    from gemmscope.kernels.ladder.registry import cuda_dir
    from gemmscope.kernels.toolchain import nvrtc_options

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    sms = cp.cuda.Device(0).attributes["MultiProcessorCount"]
    src = cp.ones(64 * 65536 + 8192 + 64 * 256, dtype=cp.float16)
    clock = ClockPoll()
    rows = []
    with open(out_dir / "ceiling.jsonl", "w") as log:
        for mode, warps, wn, bps, stages in CASES:
            threads = warps * 32
            opts = (*nvrtc_options.BASE, "-arch=sm_90a", f"-I{cuda_dir()}",
                    f"-DMODE={MODES[mode]}", f"-DWN={wn}", f"-DTHREADS={threads}",
                    f"-DSTAGES={stages}")
            mod = cp.RawModule(code=SOURCE, options=opts)
            fn = mod.get_function("hmma_ceiling")
            smem = stages * (128 * 128 + 64 * 512) if mode != "regs" else 0
            if smem:
                fn.max_dynamic_shared_size_bytes = smem
            blocks = sms * bps
            out = cp.zeros(blocks * threads, dtype=cp.float32)
            launch = (fn, (blocks,), (threads,), (src, out, cp.int32(args.iters)), smem)
            call(launch)
            cp.cuda.Device().synchronize()
            times = []
            clock.samples.clear()
            clock.on = True
            for _ in range(args.repeats):
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record()
                call(launch)
                e1.record()
                e1.synchronize()
                times.append(cp.cuda.get_elapsed_time(e0, e1) / 1e3)
            clock.on = False
            t = statistics.median(times)
            mmas = blocks * warps * args.iters * 4 * 4 * (wn // 8)
            tflops = mmas * 4096 / t / 1e12
            mhz = statistics.mean(clock.samples) if clock.samples else None
            regs = fn.num_regs
            rec = {"mode": mode, "warps": warps, "warp_tile": f"64x{wn}", "blocks_per_sm": bps,
                   "stages": stages, "regs": regs, "local_bytes": fn.local_size_bytes,
                   "median_s": t, "tflops": tflops, "sm_clock_mhz_avg": mhz,
                   "hmma_per_sm_clk": (mmas / sms) / (t * mhz * 1e6) if mhz else None}
            log.write(json.dumps(rec) + "\n")
            rows.append(rec)
            print(json.dumps(rec), flush=True)
    clock.stop = True
    print("\n" + table(rows))


if __name__ == "__main__":
    main()

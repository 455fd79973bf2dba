"""Issue 42's attempts on the pre-Hopper rungs, each paired with its reference (GPU machine).

    python3 benchmarks/kernel_attempts.py --out DIR [--sgemm-cuda PATH] [--budget 330]
        [--only NAME,..] [--sizes 4096,8192,MxNxK] [--pair-budget-s 1.5]
        [--variant-limit-s 45]
    python3 benchmarks/kernel_attempts.py --list        # the variants and predictions
    python3 benchmarks/kernel_attempts.py --sass        # offline: registers, spills, K loop
    python3 benchmarks/kernel_attempts.py --smoke       # CI: arguments and the table, no GPU

A variant is a level of the registry with template parameters changed, or a level's
attempt source (benchmarks/attempts/*_x.cu: the level's code with switches, not a level)
with its switches set. Each variant is compiled (in parallel processes first, into CuPy's
disk cache), checked against float64 at odd shapes, then at each size timed in one loop
with its reference (kernels/engine/paired.py's run_paired: level and reference
alternately, L2 flushed before each launch, the ratio the median of per-pair ratios with
its 95% interval, the SM clock read per launch), and checked once more after a burst of
back-to-back launches (a race between the stages shows there, not in one launch).
register_2d's family is paired with siboehm's kernel 5 (the same technique) when
``--sgemm-cuda`` names the anchor (the SGEMM_CUDA tarball or its extracted folder; read
only, compiled here with the levels' NVRTC options), else with cuBLAS FP32.

Variants run in the order of VARIANTS, the most promising first; a worker process runs
them, and the parent stops a variant that runs past ``--variant-limit-s`` (or a worker
that faults: CUDA errors poison a process) and carries on with the next in a new worker.
Past ``--budget`` seconds the rest are skipped. Every record is a JSON line in
DIR/kernel_attempts.jsonl and the output is copied to DIR/kernel_attempts.log; the table
comes last: variant, parameters, size, verified, TFLOPS, the reference's, the ratio and
its interval, pairs, registers, SM clocks.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any, NamedTuple

import _smoke

ATTEMPTS = Path(__file__).resolve().parent / "attempts"
SIZES = (4096, 8192)
# odd shapes: edge blocks and the element-wise path; several tiles per persistent block and
# a stream-K remainder (2049 x 4097: 17 x 17 tiles of 128 x 256 over 132 SMs); K a
# multiple of 8 where the TMA levels need it (others skipped for them)
CHECK_SHAPES = ((1000, 999, 1001), (1000, 1000, 1024), (2049, 4097, 136), (7, 13, 8))
BURST = 20  # back-to-back launches before the second check
TAG = "@@attempt "
HARD_STOP_S = 15.0
K5_MEMBER = "sgemm_cuda/src/kernels/5_kernel_2D_blocktiling.cuh"
K5_NAME = "sgemm2DBlocktiling<128, 128, 8, 8, 8>"
K5_MAX_BYTES = 64 * 1024  # the anchor's kernel 5 source is 3 KB
SIBOEHM_K5 = "siboehm_k5"


class Family(NamedTuple):
    """A level's attempt source: the level it is built from, its file and template, and
    the switches appended to the level's parameters (defaults: the level's code)."""

    level: str
    source: str
    kernel: str
    switches: dict[str, int]


FAMILIES = {
    "mma_tma_x": Family("mma_tma", "mma_tma_x.cu", "hgemm_mma_tma_x",
                        {"REL": 1, "ORD": 1, "MINB": 1, "CREGS": 232, "SK": 0,
                         "CONSUMERS": 2, "WAITAT": 0, "WREL": 0, "PREGS": 40, "FRAG": 1}),
    "wmma_x": Family("wmma", "wmma_x.cu", "hgemm_wmma_x", {"LEAN": 1, "LB": 1, "FB": 1}),
    "register_2d_x": Family("register_2d", "register_2d_x.cu", "sgemm_register_2d_x",
                            {"LB": 1, "KU": 1}),
    "wgmma_tma_x": Family("wgmma_tma", "wgmma_tma_x.cu", "bgemm_wgmma_tma", {}),
}
# the wgmma.m64nNk16 BF16 widths wgmma_tma_x.cu adds to the level's 256 and 128, in its
# header benchmarks/attempts/wgmma_x_ops.cuh (wgmma_x_ops(); a test keeps the two equal)
WGMMA_X_SHAPES = (192, 232, 240)
WGMMA_X_OPS = ATTEMPTS / "wgmma_x_ops.cuh"


def wgmma_x_ops() -> str:
    """The text of wgmma_tma_x.cu's header: gen_wgmma's wrappers for WGMMA_X_SHAPES."""
    from gemmscope.kernels.toolchain import gen_wgmma

    return ("// Made by benchmarks/kernel_attempts.py's wgmma_x_ops() (kernels/toolchain/"
            "gen_wgmma.py's\n// wrappers, the widths WGMMA_X_SHAPES); do not edit.\n"
            "#pragma once\n\n"
            + "\n".join(gen_wgmma.wrapper(gen_wgmma.Shape("bf16", "bf16", n, 16, True))
                        for n in WGMMA_X_SHAPES))


class Variant(NamedTuple):
    name: str  # what the table calls it
    base: str  # a level id of the registry or a FAMILIES key
    changes: dict[str, int]
    predict: str  # the prediction, written before the run (docs/perf-notes.md)
    sizes: str = ""  # the shapes it is timed at (as --sizes), where not --sizes'


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    """--sizes: comma-separated N (N x N x N) or MxNxK."""
    from gemmscope.kernels.protocol import parse_shape

    return [parse_shape(x.strip()) for x in text.split(",") if x.strip()]


def size_text(M: int, N: int | None = None, K: int | None = None) -> str:
    N, K = (M if N is None else N), (M if K is None else K)
    return str(M) if M == N == K else f"{M}x{N}x{K}"


# Order = promise (expected gain times confidence), each target's control right before or
# after its first variant, so that a run cut short still answers the main questions.
TWO_CTAS = {"BN": 128, "STAGES": 3, "MINB": 2, "CREGS": 216, "CONSUMERS": 1}
# Round 3 (prepared offline, docs/perf-notes.md "Issue 42: attempts prepared, round 3") comes
# first, so that a run without --only answers it before the measured rounds 1-2.
BF16_ODD = "3000x5000x4096"  # the issue's BF16 shape whose last wave is 0.64 full
VARIANTS: list[Variant] = [
    # round 3, BF16: the tile width for the shape's waves (wgmma_tma_x.cu says the count)
    Variant("wgmma_tma_x", "wgmma_tma_x", {},
            "control, the level's code: 91.4% of cuBLAS BF16 at 3000x5000x4096 (paired, "
            "2026-12-03)", sizes=BF16_ODD),
    Variant("wtx_bn232", "wgmma_tma_x", {"BN": 232, "EPI": 0},
            "528 tiles, 4 full waves (waves x BN 928 against 1024): +5..+9 points at "
            "3000x5000x4096 less the direct stores' cost (wtx_epi0); 4096^3: 18 x 32 = 576 "
            "tiles, 5 waves x 232 = 1160 against 1024, -10%", sizes=f"{BF16_ODD},4096"),
    Variant("wtx_epi0", "wgmma_tma_x", {"EPI": 0},
            "the direct-store epilogue at 256: what EPI 0 costs (0..-2%)", sizes=BF16_ODD),
    Variant("wtx_bn240", "wgmma_tma_x", {"BN": 240, "EPI": 0},
            "504 tiles, 3.82 waves (960): +3..+6 points, below bn232", sizes=BF16_ODD),
    Variant("wtx_bn192", "wgmma_tma_x", {"BN": 192},
            "648 tiles, 5 waves (960) with the TMA epilogue: +2..+6 points; a narrower tile "
            "loads A once for fewer columns (FP8 at 192 lost 0.3-2.3% where the count "
            "said -1.6%)", sizes=BF16_ODD),
    Variant("wmma_fb3_4w", "wmma_x", {"LEAN": 2, "WN": 64, "FB": 3},
            "the 4-warp 64x64 form with all 3 stages in flight and the barrier after the "
            "tile's last fragment loads (240 registers, 2 blocks/SM): +1..+4 points over "
            "wmma_lean_4w, 0.47-0.50 of cuBLAS FP16"),
    Variant("wmma_lean_4w", "wmma_x", {"LEAN": 2, "WN": 64},
            "control of the 4-warp form: 0.46-0.47 / 0.44-0.45 (round 1)"),
    Variant("wmma", "wmma", {}, "control: 0.41-0.44 of cuBLAS FP16"),
    Variant("mma_tma", "mma_tma", {}, "control: 0.63-0.70 of cuBLAS FP16"),
    Variant("mma_tma_wait2", "mma_tma_x", {"WAITAT": 2},
            "half of the last 16-deep step's mma.sync issued before the wait on the next "
            "stage: 0..+2% if stages arrive late, else within noise"),
    Variant("mma_tma_wrel", "mma_tma_x", {"WREL": 1},
            "one 'empty' arrival per warp (8 per stage, not 256): within noise, at most +1%"),
    Variant("mma_tma_wait2_wrel", "mma_tma_x", {"WAITAT": 2, "WREL": 1},
            "both: their sum, if either gains"),
    Variant("wmma_fb3", "wmma_x", {"LEAN": 2, "FB": 3},
            "8 warps of 64x32 (the level's form) with all 3 stages in flight, 128 "
            "registers, 2 blocks/SM: +0..+3% over wmma_lean, below wmma_fb3_4w"),
    Variant("mma_tma_wait1", "mma_tma_x", {"WAITAT": 1},
            "a quarter of the last step's mma.sync before the wait: as wait2, within 1%"),
    Variant("mma_tma_frag2", "mma_tma_x", {"FRAG": 2},
            "A fragments one row ahead in a ring of two (the 96x64 groundwork; XOR "
            "addresses, 245-instruction loop): within noise, or -1..-2%"),
    Variant("wmma_fb2", "wmma_x", {"LEAN": 2, "FB": 2},
            "fragments double-buffered across K tiles, 8 warps of 64x32: 194 registers, so "
            "one block/SM: -5..+3% over wmma_lean"),
    # rounds 1-2 (measured, docs/perf-notes.md)
    Variant("r2d_lb2", "register_2d_x", {"LB": 2},
            "127 registers instead of 152: two blocks per SM as kernel 5; 1.00-1.05 of k5"),
    Variant("register_2d", "register_2d", {}, "control: 0.85-0.87 of k5"),
    Variant("wmma_lean", "wmma_x", {"LEAN": 2},
            "K loop 295 -> 169 instructions, 126 registers: +8-15%, 0.46-0.50 of cuBLAS"),
    Variant("mma_tma_rel3", "mma_tma_x", {"REL": 3},
            "no proxy fence (MEMBAR.ALL.CTA) per K tile: +1-4%; a wrong burst check = race"),
    Variant("mma_tma_2cta", "mma_tma_x", TWO_CTAS,
            "two persistent 128x128 CTAs per SM overlap each other's epilogue: -5..+5%"),
    Variant("mma_tma_sk2", "mma_tma_x", {"SK": 2},
            "stream-K remainder: 8192^3 +1-3% (half-empty last wave), 4096^3 -2..-5%"),
    Variant("r2d_ku2", "register_2d_x", {"KU": 2},
            "kernel 5's loop form (110 registers, 10 LDS per 64 FFMA): 0.95-1.02 of k5"),
    Variant("wmma_lean_lb3", "wmma_x", {"LEAN": 2, "LB": 3},
            "as wmma_lean with 2 blocks per SM asked (128 registers): the same"),
    Variant("cp_async_interior", "cp_async_interior", {},
            "control: 0.90-0.92 of cuBLAS FP32"),
    Variant("cpi_w2x4", "cp_async_interior", {"WMITER": 2, "WNITER": 4},
            "16x16 warp sub-tiles: 235 registers instead of 255, same loop: -2..+3%"),
    Variant("mma_tma_ord2", "mma_tma_x", {"ORD": 2},
            "serpentine mma.sync order (B fragment reused at row changes): within 1%"),
    Variant("mma_tma_rel2", "mma_tma_x", {"REL": 2},
            "stage freed one 16-deep step earlier (fence still behind ldmatrix): within 1%"),
    Variant("mma_tma_rel3_sk2", "mma_tma_x", {"REL": 3, "SK": 2},
            "REL 3 and SK 2 together, if both gain: their sum"),
    Variant("wmma_lean_bk32", "wmma_x", {"LEAN": 2, "BK": 32, "STAGES": 4},
            "LEAN with BK 32 and 4 stages (95 instructions per K tile): within 3% of LEAN"),
    Variant("wmma_lean_64x64", "wmma_x", {"LEAN": 2, "BN": 256, "WN": 64},
            "64x64 warp tiles, 128x256 block, 224 registers, one block per SM: -5..+5%"),
    Variant("mma_tma_gm16", "mma_tma", {"GM": 16}, "within the noise (rounds 5-6: -2..+2%)"),
    Variant("r2d_lb3", "register_2d_x", {"LB": 3}, "as r2d_lb2 (128 registers)"),
    Variant("cpi_w2x2_t8x4", "cp_async_interior",
            {"WMITER": 2, "WNITER": 2, "TM": 8, "TN": 4},
            "32x32 sub-tiles, 8x4 per lane: different broadcast pattern, -3..+2%"),
    Variant("cpi_stages4", "cp_async_interior", {"STAGES": 4}, "within 1% (round 3)"),
    # round 2 (stretch 4): SIMT from 94.0 / 94.8% to 95% (4 stages taken into the level)
    Variant("cpi_bk32_s3", "cp_async_interior", {"BK": 32, "STAGES": 3},
            "half the barriers and waits per FMA (one per 32-deep tile), same bytes in "
            "flight: +0.5..+1.5%"),
    Variant("cpi_gm8", "cp_async_interior", {"GM": 8},
            "grouped block order (8 tile rows): L2 hits at 8192^3, +0..+1%; 4096^3 flat"),
    Variant("cpi_s5", "cp_async_interior", {"STAGES": 5},
            "four K tiles in flight (124 KB): within 0.5% (4 already hides DRAM latency)"),
    Variant("cpi_bk32_s4", "cp_async_interior", {"BK": 32, "STAGES": 4},
            "as cpi_bk32_s3 with one more tile in flight (199 KB): the same or +0.3%"),
    Variant("cpi_bk32_s3_gm8", "cp_async_interior", {"BK": 32, "STAGES": 3, "GM": 8},
            "both, if both gain: their sum"),
    Variant("mma_tma_x", "mma_tma_x", {},
            "the attempt source with default switches: the level's SASS, so its ratio"),
]


def say(msg: str) -> None:
    print(msg, flush=True)


# ------------------------------------------------------------------ the variants' levels

def family_level(name: str) -> Any:
    """The Level of an attempt source with its default switches."""
    from gemmscope.kernels.ladder import registry

    fam = FAMILIES[name]
    base = registry.get(fam.level)
    extra: dict[str, Any] = {}
    if fam.level == "mma_tma":
        # MINB blocks per SM; with stream-K every block of the grid takes part
        extra = {"stream_k_param": "SK", "grid_rule": _mma_tma_x_grid}
    return dataclasses.replace(base, id=name, source=fam.source, source_dir=str(ATTEMPTS),
                               kernel=fam.kernel, params={**base.params, **fam.switches},
                               **extra)


def _mma_tma_x_grid(tiles: int, sms: int, p: dict[str, int]) -> int:
    blocks = sms * p["MINB"]
    return blocks if p["SK"] else min(tiles, blocks)


def variant_level(v: Variant) -> Any:
    """The variant's Level (ValueError where its parameters are not the base's)."""
    from gemmscope.kernels.ladder import registry

    base = family_level(v.base) if v.base in FAMILIES else registry.get(v.base)
    return base.with_params(v.changes) if v.changes else base


def target_of(v: Variant) -> str:
    """The level a variant is an attempt on (the issue's row)."""
    return FAMILIES[v.base].level if v.base in FAMILIES else v.base


def reference_id(v: Variant, k5: bool) -> str:
    from gemmscope.kernels.ladder import registry

    if target_of(v) == "register_2d" and k5:
        return SIBOEHM_K5
    level = registry.get(target_of(v))
    return level.reference or registry.REFERENCE_FOR[level.precision]


def k_ok(level: Any, K: int) -> bool:
    return K % (level.k_multiple or 1) == 0


# ------------------------------------------------------------------ siboehm's kernel 5

def k5_source(path: str) -> str:
    """Kernel 5 of the SGEMM_CUDA anchor (a tarball or its extracted folder), made
    compilable by NVRTC: its #include lines dropped, its macros and types defined."""
    p = Path(path)
    if p.is_dir():
        f = p / K5_MEMBER if (p / K5_MEMBER).is_file() else p / K5_MEMBER.split("/", 1)[1]
        if f.stat().st_size > K5_MAX_BYTES:
            raise ValueError(f"{f} is larger than {K5_MAX_BYTES} bytes")
        text = f.read_text(encoding="utf-8")
    else:
        with tarfile.open(p, "r:gz") as tar:
            member = tar.getmember(K5_MEMBER)
            if not member.isfile() or member.size > K5_MAX_BYTES:
                raise ValueError(f"{K5_MEMBER} in {p} is not a file under {K5_MAX_BYTES} bytes")
            fh = tar.extractfile(member)
            assert fh is not None
            text = io.TextIOWrapper(fh, encoding="utf-8").read()
    body = "\n".join("" if line.lstrip().startswith(("#include", "#pragma once"))
                     else line for line in text.splitlines())
    return ("typedef unsigned int uint;\n#define assert(x)\n"
            "#ifndef CEIL_DIV\n#define CEIL_DIV(M, N) (((M) + (N) - 1) / (N))\n#endif\n" + body)


def k5_paired(bench: Any, level: Any, kernel: Any, S: int, max_pairs: int, warmup: int,
              budget_s: float) -> dict[str, Any]:
    """The level and kernel 5 in one pair loop (paired.py's loop, launch timer and clock),
    kernel 5 on the level's own A and B with a C of its own (zeros: it reads beta * C)."""
    import numpy as np

    from gemmscope.kernels.engine.operands import check
    from gemmscope.kernels.engine.paired import clock_reader, launch_timer, pair_loop
    from gemmscope.kernels.ladder.shape import tflops_of
    from gemmscope.kernels.results.ratio_stats import clock_summary, paired_fields

    cp = bench.cp
    flops = 2.0 * S ** 3
    with bench.stream:
        prep = bench.prepare(level, S, S, S, None, 0)
        a, b = prep.ops.a, prep.ops.b
        c5 = cp.zeros((S, S), cp.float32)
        grid, block = (-(-S // 128), -(-S // 128)), (256,)
        args = (np.int32(S), np.int32(S), np.int32(S), np.float32(1.0), a, b,
                np.float32(0.0), c5)

        def launch_k5() -> None:
            kernel(grid, block, args)

        launch_k5()
        ref64 = cp.matmul(a.astype(cp.float64), b.astype(cp.float64))
        k5_err = float(cp.linalg.norm(c5.astype(cp.float64) - ref64) / cp.linalg.norm(ref64))
        del ref64
        for _ in range(warmup):
            prep.launch()
            launch_k5()
        bench.stream.synchronize()
        read = clock_reader(bench)
        pairs, stop = pair_loop(launch_timer(bench, prep.launch, read),
                                launch_timer(bench, launch_k5, read), bench.clock,
                                budget_s, max_pairs)
        prep.ops.poison()
        for _ in range(BURST):
            prep.launch()
        again = check(prep.ops)
    level_ms = sorted(p.level_ms for p in pairs)
    ref_ms = sorted(p.ref_ms for p in pairs)
    lvl_clock = clock_summary([p.level_clock for p in pairs])
    ref_clock = clock_summary([p.ref_clock for p in pairs])
    fields = paired_fields(pairs, bench.device.sm_clock_max_mhz, stop, budget_s)
    return {"tflops": tflops_of(flops, level_ms[len(level_ms) // 2]),
            "ref_tflops": tflops_of(flops, ref_ms[len(ref_ms) // 2]),
            "ref_verified": k5_err < 1e-4, "ref_rel_err": k5_err,
            "verified": prep.verified, "rel_err": prep.acc.rel_err,
            "burst_verified": again.verified(level.precision), "burst_rel_err": again.rel_err,
            "regs": prep.info.get("regs"), "local_bytes": prep.info.get("local_bytes"),
            "ref_regs": int(kernel.num_regs), "code_key": prep.info.get("code_key"),
            "sm_clock": lvl_clock["sm_clock_mhz_avg"],
            "ref_sm_clock": ref_clock["sm_clock_mhz_avg"],
            **{k: fields[k] for k in ("pct_of_reference", "pct_ci_low", "pct_ci_high",
                                      "pairs", "stop_reason", "throttled_pairs")}}


def compile_k5(path: str) -> Any:
    from gemmscope.kernels.device.gpu import require_cupy
    from gemmscope.kernels.toolchain import nvrtc

    cp = require_cupy()
    module = cp.RawModule(code=k5_source(path), options=nvrtc.BASE_OPTIONS,
                          name_expressions=[K5_NAME])
    return module.get_function(K5_NAME)


# ------------------------------------------------------------------ worker

def burst_check(bench: Any, level: Any, shape: tuple[int, int, int]) -> tuple[bool, float]:
    """Fresh inputs, C poisoned, BURST launches back to back, then the float64 check of the
    last one's C (the stages refilled under load)."""
    from gemmscope.kernels.engine.operands import check

    with bench.stream:
        prep = bench.prepare(level, *shape, None, 0)
        prep.ops.poison()
        for _ in range(BURST):
            prep.launch()
        acc = check(prep.ops)
    return acc.verified(level.precision), acc.rel_err


def first_wrong(bench: Any, level: Any) -> str | None:
    """The first check shape the level gets wrong (C poisoned, one launch, float64), or
    None; shapes its K rule refuses are left out."""
    for M, N, K in (s for s in CHECK_SHAPES if k_ok(level, s[2])):
        r = bench.run(level, M, N, K, repeats=1, warmup=0, energy=False)
        say(f"  check {M}x{N}x{K}: rel_err={r['rel_err']} ok={r['verified']} "
            f"regs={r['regs']} local={r['local_bytes']}")
        if not r["verified"]:
            return f"wrong at {M}x{N}x{K} (rel_err {r['rel_err']})"
    return None


def blocks_per_sm(level: Any) -> int | None:
    """How many blocks of the timed kernel fit an SM (the driver's occupancy calculator).
    A persistent level launched with several blocks per SM (MINB) first asks for the
    largest shared-memory carveout, so that the driver does not leave room for one."""
    from gemmscope.kernels.device.gpu import require_cupy
    from gemmscope.kernels.toolchain import nvrtc

    cp = require_cupy()
    built = nvrtc.compile_level(level)
    kernel = built.kernels[level.use_vector_path(4096, 4096, 4096) or not level.edge_variant]
    smem = level.dyn_smem_bytes(built.params)
    if level.persistent and level.params.get("MINB", 1) > 1:
        driver = cp.cuda.driver
        attr = getattr(driver, "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT", 9)
        driver.funcSetAttribute(kernel.kernel.ptr, attr, 100)  # percent: the most
    if smem + kernel.shared_size_bytes > 48 * 1024:
        kernel.max_dynamic_shared_size_bytes = smem
    threads = level.threads[0] * level.threads[1]
    try:
        return int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, threads, smem))
    except Exception:  # a figure for the table only
        return None


def paired_record(bench: Any, level: Any, ref: Any, shape: tuple[int, int, int],
                  max_pairs: int, warmup: int, budget_s: float) -> dict[str, Any]:
    from gemmscope.kernels.engine.paired import run_paired

    ref_r, lv_r = run_paired(bench, level, ref, *shape, max_pairs, warmup, budget_s,
                             energy=False)
    ok, err = burst_check(bench, level, shape)
    keep = ("tflops", "verified", "rel_err", "regs", "local_bytes", "code_key",
            "pct_of_reference", "pct_ci_low", "pct_ci_high", "pairs", "stop_reason",
            "throttled_pairs")
    return {**{k: lv_r.get(k) for k in keep}, "sm_clock": lv_r.get("sm_clock_mhz_avg"),
            "ref_tflops": ref_r.get("tflops"), "ref_verified": ref_r.get("verified"),
            "ref_sm_clock": ref_r.get("sm_clock_mhz_avg"), "burst_verified": ok,
            "burst_rel_err": err}


def worker(indices: list[int], deadline: float, args: argparse.Namespace) -> int:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.ladder import registry

    dev = device_info()
    bench = Bench(dev, wall_clock())
    say(f"worker: {dev.name}, {dev.sm_count} SMs")
    k5 = None
    if args.sgemm_cuda and any(reference_id(VARIANTS[i], True) == SIBOEHM_K5
                               for i in indices):
        try:
            k5 = compile_k5(args.sgemm_cuda)
            say(f"worker: siboehm kernel 5 compiled, {k5.num_regs} registers")
        except Exception as exc:  # the family falls back to cuBLAS FP32
            say(f"worker: kernel 5 not compiled ({type(exc).__name__}: {exc}); register_2d "
                "is paired with cuBLAS FP32")

    def emit(rec: dict[str, Any]) -> None:
        print(TAG + json.dumps(rec, default=str), flush=True)

    for pos in indices:
        v = VARIANTS[pos]
        head = {"index": pos, "name": v.name, "base": v.base, "changes": v.changes}
        if time.time() > deadline:
            emit({**head, "stage": "skipped", "error": "out of time (--budget)"})
            continue
        say(f"\n[{pos}] {v.name} {v.base} {json.dumps(v.changes)}")
        emit({**head, "stage": "start"})
        where = "params"
        try:
            level = variant_level(v)
            ref_id = reference_id(v, k5 is not None)
            ref = None if ref_id == SIBOEHM_K5 else registry.get(ref_id)
            where = "check"
            wrong = first_wrong(bench, level)
            if wrong is not None:
                emit({**head, "stage": "check", "error": wrong})
                continue
            where = "time"
            per_sm = blocks_per_sm(level)
            for M, N, K in parse_sizes(v.sizes or args.sizes):
                where_ = {"M": M, "N": N, "K": K}
                if time.time() > deadline:
                    emit({**head, "stage": "skipped", **where_, "error": "out of time"})
                    break
                if ref is None and not M == N == K:
                    emit({**head, "stage": "skipped", **where_,
                          "error": "kernel 5 is timed at square sizes only"})
                    continue
                rec = (k5_paired(bench, level, k5, M, args.max_pairs, args.warmup,
                                 args.pair_budget_s) if ref is None else
                       paired_record(bench, level, ref, (M, N, K), args.max_pairs,
                                     args.warmup, args.pair_budget_s))
                emit({**head, "stage": "time", **where_, "ref": ref_id, **rec,
                      "blocks_per_sm": per_sm})
                say(f"  {size_text(M, N, K)}: {rec['tflops']} TFLOPS vs {ref_id} "
                    f"{rec['ref_tflops']} = "
                    f"{rec['pct_of_reference']}% [{rec['pct_ci_low']}, {rec['pct_ci_high']}] "
                    f"({rec['pairs']} pairs) verified={rec['verified']}/"
                    f"{rec['burst_verified']} regs={rec['regs']} blocks/SM={per_sm}")
        except Exception as exc:  # compile error or refusal: next; a CUDA fault ends us
            text = f"{type(exc).__name__}: {exc}"
            emit({**head, "stage": where, "error": text[:600],
                  "trace": traceback.format_exc()[-800:]})
            say(f"  FAILED ({where}): {text[:300]}")
            if "cudaError" in text or "CUDA_ERROR" in text or "CUDARuntimeError" in text:
                return 3
    emit({"done": True})
    return 0


# ------------------------------------------------------------------ precompile

def precompile_one(pos: int) -> str:
    from gemmscope.kernels.toolchain import nvrtc

    try:
        nvrtc.compile_level(variant_level(VARIANTS[pos]))
        return f"{pos} ok"
    except Exception as exc:
        return f"{pos} {type(exc).__name__}"


def precompile(indices: list[int], procs: int, limit_s: float) -> str:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, wait

    t = time.time()
    pool = ProcessPoolExecutor(procs, mp_context=multiprocessing.get_context("spawn"))
    futures = [pool.submit(precompile_one, i) for i in indices]
    finished, pending = wait(futures, timeout=limit_s)
    for f in pending:
        f.cancel()
    pool.shutdown(wait=False, cancel_futures=True)
    bad = [f.result() for f in finished if f.exception() is None and not f.result().endswith("ok")]
    return (f"attempts: precompiled {len(finished)}/{len(futures)} in {time.time() - t:.0f} s;"
            f" {len(bad)} failed {bad[:4]} (their workers say why)\n")


# ------------------------------------------------------------------ offline SASS

def compile_timed(level: Any) -> tuple[Any, str]:
    """The instantiation that the timed sizes run (the vector path where the level has
    two), compiled here for sm_90a with the levels' options (NVRTC, no GPU): the build
    and the kernel's mangled name."""
    from gemmscope.kernels.toolchain import nvrtc

    vec = level.use_vector_path(4096, 4096, 4096) or not level.edge_variant
    expression = level.name_expression(vec)
    built = nvrtc.compile_source(level.id, nvrtc.assemble(level), [expression],
                                 nvrtc.offline_options(level, "sm_90a"), "sm_90a")
    return built, built.lowered[expression]


def sass_rows(indices: list[int]) -> list[dict[str, Any]]:
    """Each variant compiled here for sm_90a (NVRTC, nvdisasm): registers, spills and the K
    loop's instruction mix of the kernel the timed sizes run (no GPU)."""
    import collections

    from gemmscope.kernels.toolchain import cubin, sass

    rows = []
    for pos in indices:
        v = VARIANTS[pos]
        built, name = compile_timed(variant_level(v))
        res = cubin.kernels(built.cubin)
        text = sass.disassemble(built.cubin)[name]
        loop = [ln for ln in sass.in_span(sass.parse(text), sass.main_loop(text)) if ln.counted]
        mix = collections.Counter(ln.op_class for ln in loop)
        rows.append({"name": v.name, "regs": res[name].regs, "local": res[name].local_bytes,
                     "loop": len(loop), **{k: mix.get(k, 0) for k in
                                           ("HMMA", "FFMA", "LDSM", "LDS", "LDS.128",
                                            "LDGSTS", "other")}})
    return rows


def sass_table(rows: list[dict[str, Any]]) -> str:
    cols = ("regs", "local", "loop", "HMMA", "FFMA", "LDSM", "LDS", "LDS.128", "LDGSTS",
            "other")
    lines = [f"{'variant':18s} " + " ".join(f"{c:>7s}" for c in cols)]
    lines += [f"{r['name']:18s} " + " ".join(f"{r[c]!s:>7s}" for c in cols) for r in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------ parent

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--sgemm-cuda", default="", metavar="PATH",
                    help="siboehm's SGEMM_CUDA anchor (its tarball or folder): register_2d's "
                         "family is paired with its kernel 5")
    ap.add_argument("--budget", type=float, default=330.0,
                    help="seconds for the whole run (default 330); later variants skipped")
    ap.add_argument("--variant-limit-s", type=float, default=45.0,
                    help="a variant still running after this long is stopped (default 45)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="comma-separated N (N^3) or MxNxK (default 4096,8192); a variant "
                         "that names its own sizes is timed at those")
    ap.add_argument("--pair-budget-s", type=float, default=1.5,
                    help="seconds of each level-reference pair loop (default 1.5)")
    ap.add_argument("--max-pairs", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--only", default="", help="variant names, bases or targets to run")
    ap.add_argument("--precompile", type=int, default=12,
                    help="processes compiling the variants first (0: none)")
    ap.add_argument("--list", action="store_true", help="the variants and predictions")
    ap.add_argument("--sass", action="store_true",
                    help="offline: compile each variant here, print registers and K loop")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--indices", default="", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    indices = [i for i, v in enumerate(VARIANTS)
               if not only or only & {v.name, v.base, target_of(v)}]
    if args.worker:
        return worker([int(i) for i in args.indices.split(",") if i], args.deadline, args)
    if args.list or args.smoke:
        for i in indices:
            v = VARIANTS[i]
            level = variant_level(v)  # a bad parameter fails here, not on the GPU
            say(f"{i:3d} {v.name:18s} {v.base:18s} {json.dumps(v.changes):58s} "
                f"{level.threads[0]:4d} threads  {v.predict}")
        if args.list:
            return 0
        say(f"smoke: every variant made as a level ({len(indices)})")
        _smoke.made_up(table(made_up_records(indices)))
        return _smoke.needs_gpu()
    if args.sass:
        say(sass_table(sass_rows(indices)))
        return 0
    return run(indices, args)


def run(indices: list[int], args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    deadline = t0 + args.budget
    records: list[dict[str, Any]] = []
    done: set[int] = set()
    log = (out / "kernel_attempts.jsonl").open("w")
    text_log = (out / "kernel_attempts.log").open("w")

    def echo(line: str) -> None:
        print(line, end="", flush=True)
        text_log.write(line)

    echo(f"attempts: {len(indices)} variants, budget {args.budget:.0f} s, out {out}\n")
    if args.precompile > 0:
        echo(precompile(indices, args.precompile, min(90.0, args.budget / 4)))
    while True:
        todo = [i for i in indices if i not in done]
        if not todo:
            break
        proc = subprocess.Popen(worker_command(todo, deadline, args), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1)
        state = {"started": time.time(), "index": None}

        def watchdog(p: subprocess.Popen[str] = proc, st: dict[str, Any] = state) -> None:
            while p.poll() is None:
                now = time.time()
                if (st["index"] is not None and now - st["started"] > args.variant_limit_s) \
                        or now > deadline + HARD_STOP_S:
                    st["killed"] = True
                    say(f"attempts: variant {st['index']} past {args.variant_limit_s:.0f} s "
                        "(or the budget): stopping its worker")
                    p.kill()
                    return
                time.sleep(0.5)

        threading.Thread(target=watchdog, daemon=True).start()
        assert proc.stdout is not None
        for line in proc.stdout:
            if not line.startswith(TAG):
                echo(line)
                continue
            rec = json.loads(line[len(TAG):])
            if rec.get("done"):
                done.update(todo)
                continue
            rec["t"] = round(time.time() - t0, 1)
            if rec.get("stage") == "start":
                if state["index"] is not None:
                    done.add(state["index"])
                state.update(index=rec["index"], started=time.time())
            records.append(rec)
            log.write(json.dumps(rec) + "\n")
            log.flush()
        proc.stdout.close()
        proc.wait()
        if state["index"] is not None:
            done.add(state["index"])  # the variant that ended the worker is not run again
            if state.get("killed") or proc.returncode:
                why = (f"stopped past the limit of {args.variant_limit_s:.0f} s per variant "
                       "(or the budget)" if state.get("killed") else
                       f"its worker exited {proc.returncode} (a CUDA fault ends a worker)")
                rec = {"index": state["index"], "name": VARIANTS[state["index"]].name,
                       "changes": VARIANTS[state["index"]].changes, "stage": "stopped",
                       "error": why}
                records.append(rec)
                log.write(json.dumps(rec) + "\n")
        elif proc.returncode:
            echo(f"attempts: the worker exited {proc.returncode} before any variant; stopping\n")
            break
        if time.time() > deadline + HARD_STOP_S:
            break
    log.close()
    echo(table(records) + f"\nattempts: {time.time() - t0:.0f} s; "
         f"{out / 'kernel_attempts.jsonl'}\n")
    text_log.close()
    return 0


def worker_command(todo: list[int], deadline: float, args: argparse.Namespace) -> list[str]:
    """The worker process's command line: this script with the variants left and the
    options a worker needs."""
    return [sys.executable, __file__, "--worker", "--indices", ",".join(map(str, todo)),
            "--deadline", str(deadline), *argv_of(args)]


def argv_of(args: argparse.Namespace) -> list[str]:
    """The options a worker needs, as arguments."""
    return ["--sizes", args.sizes, "--pair-budget-s", str(args.pair_budget_s),
            "--max-pairs", str(args.max_pairs), "--warmup", str(args.warmup),
            *(["--sgemm-cuda", args.sgemm_cuda] if args.sgemm_cuda else [])]


def made_up_records(indices: list[int]) -> list[dict[str, Any]]:
    """A timed record per variant and size as the worker prints them, made up (--smoke)."""
    return [{"index": i, "name": VARIANTS[i].name, "changes": VARIANTS[i].changes,
             "stage": "time", "M": n, "ref": "cublas_fp16", "tflops": 500.0 - i,
             "ref_tflops": 760.0, "pct_of_reference": 65.0 - i / 10, "pct_ci_low": 64.0,
             "pct_ci_high": 66.0, "pairs": 120, "verified": True, "burst_verified": True,
             "regs": 168, "blocks_per_sm": 1, "sm_clock": 1755.0,
             "ref_sm_clock": 1740.0}
            for i in indices for n in SIZES]


def compact(changes: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in changes.items()) or "-"


def table(records: list[dict[str, Any]]) -> str:
    head = (f"{'variant':18s} {'params':40s} {'size':>14s} {'ok':>5s} {'TFLOPS':>7s} "
            f"{'ref':>7s} {'ratio':>6s} {'95% CI':>13s} {'pairs':>5s} {'regs':>4s} "
            f"{'B/SM':>4s} {'MHz':>9s}")
    lines = ["", "== issue 42 attempts (burst, paired with the reference, L2 flushed; ratio = "
             "median of per-pair ratios; ok: check / burst check; B/SM: blocks per SM; MHz: "
             "level / reference) ==", head]
    by_index: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        by_index.setdefault(r["index"], []).append(r)
    for i in sorted(by_index):
        rs = by_index[i]
        name = rs[0]["name"]
        params = compact(rs[0]["changes"])[:40]
        for r in (x for x in rs if x.get("stage") == "time"):
            def f(x: Any, spec: str) -> str:
                return format(x, spec) if isinstance(x, (int, float)) else "-"

            ok = ("y" if r.get("verified") else "N") + "/" + (
                "y" if r.get("burst_verified") else "N")
            ci = f"[{f(r.get('pct_ci_low'), '.1f')},{f(r.get('pct_ci_high'), '.1f')}]"
            mhz = f"{f(r.get('sm_clock'), '.0f')}/{f(r.get('ref_sm_clock'), '.0f')}"
            lines.append(
                f"{name:18s} {params:40s} {size_text(r['M'], r.get('N'), r.get('K')):>14s} "
                f"{ok:>5s} {f(r.get('tflops'), '7.1f')} "
                f"{f(r.get('ref_tflops'), '7.1f')} {f(r.get('pct_of_reference'), '6.1f')} "
                f"{ci:>13s} {f(r.get('pairs'), '5d')} {f(r.get('regs'), '4d')} "
                f"{f(r.get('blocks_per_sm'), '4d')} {mhz:>9s}")
        for r in [x for x in rs if "error" in x][:1]:
            lines.append(f"{name:18s} {params:40s} {r.get('stage', '')}: "
                         f"{str(r['error'])[:80]}")
    lines.append("ratio: % of the reference (register_2d's family: of siboehm's kernel 5 "
                 "where --sgemm-cuda was given, else of cuBLAS FP32)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

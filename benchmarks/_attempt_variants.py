"""The variants benchmarks/kernel_attempts.py builds, checks and times (issue 42), with
their predictions, and the attempt sources' families (benchmarks/attempts/*_x.cu): the
table apart from the machinery that runs it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, NamedTuple

ATTEMPTS = Path(__file__).resolve().parent / "attempts"


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
                         "CONSUMERS": 2, "WAITAT": 0, "WREL": 0, "PREGS": 40, "FRAG": 1,
                         "OUT16": 2}),
    "wmma_x": Family("wmma", "wmma_x.cu", "hgemm_wmma_x",
                     {"LEAN": 1, "LB": 1, "FB": 1, "GM": 1}),
    "wmma_rf": Family("wmma", "wmma_rf.cu", "hgemm_wmma_rf", {"RF": 0}),
    "wmma_p": Family("wmma", "wmma_p.cu", "hgemm_wmma_p", {"GM": 8}),
    "register_2d_x": Family("register_2d", "register_2d_x.cu", "sgemm_register_2d_x",
                            {"LB": 1, "KU": 1}),
    "wgmma_tma_x": Family("wgmma_tma", "wgmma_tma_x.cu", "bgemm_wgmma_tma", {}),
    "fp8_deep_x": Family("fp8_deep", "fp8_deep_x.cu", "fp8gemm_deep_x", {"ORDER": 0, "STSM": 0}),
    "cp_async_interior_x": Family("cp_async_interior", "cp_async_interior_x.cu",
                                  "sgemm_cp_async_interior_x", {"SPREAD": 0, "ORD": 0}),
}
# the wgmma.m64nNk16 BF16 widths wgmma_tma_x.cu adds to the level's 256 and 128, in its
# header benchmarks/attempts/wgmma_x_ops.cuh (wgmma_x_ops(); a test keeps the two equal)
WGMMA_X_SHAPES = (192, 240)  # 232: the level's own (wgmma_bf16_ops.cuh)
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


# Order = promise (expected gain times confidence), each target's control right before or
# after its first variant, so that a run cut short still answers the main questions.
TWO_CTAS = {"BN": 128, "STAGES": 3, "MINB": 2, "CREGS": 216, "CONSUMERS": 1}
# mma_tma as the attempts on it before round 13 measured it: C in FP32 by each thread's
# stores, 4 stages. Round 13's OUT16 2 (3 stages) is the level since stretch 25, and so the
# family's default; the earlier variants keep the form they were measured in.
BEFORE_ROUND_13 = {"OUT16": 0, "STAGES": 4}
# wmma as the attempts on it before round 14 measured it: 128x128 blocks of 8 warps of
# 64x32. Round 14 (8 warps of 64x64 at 128x256, every stage in flight) is the level since
# stretch 28, so the family's defaults; the earlier variants keep the form they measured.
WMMA_BEFORE_ROUND_14 = {"BN": 128, "WN": 32}
# Round 3 (prepared offline, docs/perf-notes.md "Issue 42: attempts prepared, round 3") comes
# first, so that a run without --only answers it before the measured rounds 1-2.
BF16_ODD = "3000x5000x4096"  # the issue's BF16 shape whose last wave is 0.64 full
VARIANTS: list[Variant] = [
    # round 8, wmma: the level's loader with 64x64 warp tiles (4 warps a 128x128 block),
    # the form wmma_lean_4w measured with the lean loader (+2.8 / +4.5 points)
    Variant("wmma_wn32", "wmma", {**WMMA_BEFORE_ROUND_14, "WN": 32},
            "control, the level before round 8 (8 warps of 64x32): 43.7% / 40.8% of cuBLAS "
            "FP16 at 4096^3 / 8192^3 (the bundled recording)"),
    Variant("wmma_wn64", "wmma", {**WMMA_BEFORE_ROUND_14, "WN": 64},
            "64x64 warp tiles with the level's loader (241 registers, two blocks an SM): as "
            "wmma_lean_4w, 46-47% / 44-45% (measured 40.7 / 42.5: the loader is what the "
            "4-warp form cannot afford)"),
    # round 7, SIMT (cp_async_interior_x.cu says each switch): the refill's copies spread
    # over the next tile's K steps (the level's LSU throttle stalls 0.08 an issue against
    # cuBLAS's 0.002, its 12 copies a thread issued together after one barrier), and the
    # order of a step's FMAs (the dispatch stalls on its FFMAs, 2.4 times cuBLAS's)
    Variant("cpix_spread3", "cp_async_interior_x", {"SPREAD": 3},
            "LSU throttle stalls mostly gone (three bursts of 4 copies, 5 steps apart), "
            "about 30 instructions more a 2,231-instruction tile: +0.5..+1.5% at 4096^3 "
            "and 8192^3 (to 94.6-95.6 / 95.3-96.3% of cuBLAS FP32)"),
    Variant("cpi_control", "cp_async_interior", {},
            "control, the level under a name of its own: 94.0-94.6% of cuBLAS FP32 at "
            "4096^3, 94.8% at 8192^3"),
    Variant("cpix_ord1", "cp_async_interior_x", {"ORD": 1},
            "odd rows right to left: ptxas's reuse flags and register banks move; -1..+1%"),
    Variant("cpix_ord2", "cp_async_interior_x", {"ORD": 2},
            "columns in turn: the B operand reused 16 FMAs running; -2..+1%"),
    Variant("cpix_spread2", "cp_async_interior_x", {"SPREAD": 2},
            "two bursts of 6: fewer extra instructions than spread3, a longer queue; "
            "between the control and spread3"),
    Variant("cpix_spread12", "cp_async_interior_x", {"SPREAD": 12},
            "a copy a step: no queue, but 80 instructions more a tile (+3.7%): -3..-1%"),
    Variant("cpix_spread3_ord2", "cp_async_interior_x", {"SPREAD": 3, "ORD": 2},
            "spread3 and ORD 2's difference"),
    Variant("cp_async_interior_x", "cp_async_interior_x", {},
            "the attempt source with default switches: the level's SASS before round 7, so "
            "cpi_control's ratio"),
    # round 6, FP8 (fp8_deep_x.cu says each switch): the consumers' wgmma groups in turn, and
    # the epilogue by stmatrix (Nsight Compute beside DeepGEMM: the wgmma wait 39% of the
    # samples against 34%, the same instructions; 262,144 st.shared against DeepGEMM's STSM)
    Variant("fp8_deep", "fp8_deep", {},
            "control: 95-97% of cuBLASLt FP8 at 4096^3, 90-91% at 8192^3 (paired, 2026-12-04)"),
    Variant("fdx_order", "fp8_deep_x", {"ORDER": 1},
            "+3..+10% if the Tensor Cores interleave two warpgroups' groups issued together "
            "(both end late, then both promote while they idle); -1..0% if they already "
            "serve them in issue order (two named-barrier operations a group)"),
    Variant("fdx_stsm", "fp8_deep_x", {"STSM": 1},
            "+0.5..+1.5%: the epilogue (about 0.75 us of a 28 us tile at 4096^3) a quarter "
            "of its store instructions"),
    Variant("fdx_order_stsm", "fp8_deep_x", {"ORDER": 1, "STSM": 1}, "their sum"),
    Variant("fp8_deep_x", "fp8_deep_x", {},
            "the attempt source with default switches: the level's SASS before stretch 18 "
            "(its scales by the producer's lanes), so that level's ratio"),
    # round 6, SIMT (Nsight Compute beside cuBLAS FP32 at 4096^3, 2026-12-04: cuBLAS runs
    # sm80_xmma_gemm_f32f32_..._tilesize256x128x8_stage3_warpsize4x2x1_ffma, the same 512
    # blocks of 256 threads and 64 x 64 warp tiles, and issues 89% of cycles against the
    # level's 82%; the level's extra stalls: dispatch 0.24 against 0.10 a issue, no
    # instruction 0.058 against 0.019, LSU throttles 0.08 against 0.002)
    Variant("cpi_bk8_s3", "cp_async_interior", {"BK": 8, "STAGES": 3},
            "cuBLAS's K step: the unrolled loop 3,200 instructions in place of 5,824, so "
            "fewer instruction-cache misses (no-instruction stalls 0.058 -> 0.02); a barrier "
            "every 8 of K: +0..+2% at 4096^3"),
    Variant("cpi_bk8_s4", "cp_async_interior", {"BK": 8, "STAGES": 4},
            "as cpi_bk8_s3 with one more step in flight: the same, or +0.5%"),
    Variant("cpi_256x128_bk8_s3", "cp_async_interior",
            {"BM": 256, "BN": 128, "BK": 8, "STAGES": 3},
            "cuBLAS's whole tile: A's 4-byte copies twice as many as B's saved 16-byte "
            "ones (LSU throttles up): -1..+1% against cpi_bk8_s3"),
    # (round 6's control, cpi_control, runs with round 7 above)
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
    # round 4, BF16 (round 3: bn232 with EPI 0 86.1%, EPI 0 at 256 80.1%, control 91.3%, so
    # the width gained 6 points and the direct stores cost 11): the width with the TMA
    # epilogue, its last 64-column box overlapping the one before (wgmma_tma_x.cu)
    Variant("wtx_bn232e", "wgmma_tma_x", {"BN": 232},
            "round 3's +6 points of width with the TMA epilogue: 96-97% at 3000x5000x4096 "
            "(control 91.3%); 4096^3 -10% (5 waves)", sizes=f"{BF16_ODD},4096"),
    Variant("wtx_bn240e", "wgmma_tma_x", {"BN": 240},
            "3.82 waves with the TMA epilogue: 94-95%, below bn232e", sizes=BF16_ODD),
    Variant("wtx_bn192", "wgmma_tma_x", {"BN": 192},
            "648 tiles, 5 waves (960) with the TMA epilogue: +2..+6 points; a narrower tile "
            "loads A once for fewer columns (FP8 at 192 lost 0.3-2.3% where the count "
            "said -1.6%)", sizes=BF16_ODD),
    # round 5, mma_tma (Nsight Compute, round 3's call: about 7% of the consumers' time in
    # the FP32 epilogue, 2% behind the proxy fence; docs/perf-notes.md)
    Variant("mma_tma_out16", "mma_tma_x", {**BEFORE_ROUND_13, "OUT16": 1},
            "C written as FP16, as the reference writes it: half the epilogue's bytes, "
            "+2..+4% at 4096^3, +1..+3% at 8192^3 (fewer tiles per wave's bytes)"),
    Variant("mma_tma_out16_rel3", "mma_tma_x", {**BEFORE_ROUND_13, "OUT16": 1, "REL": 3},
            "and no proxy fence before a stage's release (REL 3 alone: +1.1 / +0.3): "
            "+3..+5%"),
    # round 13, mma_tma (prepared offline in stretch 23): the epilogue without its 64
    # stores a thread, C as FP16 by stmatrix into a warp's own staging and TMA stores left
    # to run while the next tile starts (Nsight Compute, round 3: the epilogue ~7% of the
    # consumers' time, its samples waiting on the stores' address work and registers)
    Variant("mma_tma_st3", "mma_tma_x", {**BEFORE_ROUND_13, "STAGES": 3},
            "control of the 3-stage ring OUT16 2 needs (64 KB of C staging leave room for 3 "
            "stages of 48 KB): -2..0%"),
    Variant("mma_tma_tmast", "mma_tma_x", {"OUT16": 2, "STAGES": 3},
            "C as FP16 by 16 stmatrix.x4 a thread and two TMA stores a warp, not waited on: "
            "+3..+6% over mma_tma_out16 (the epilogue's issue from 64 stores to 16), less "
            "whatever 3 stages cost (measured +6.6 / +3.7%: the level's form since stretch "
            "25, so the family's defaults)"),
    Variant("mma_tma_tmast4", "mma_tma_x", {**BEFORE_ROUND_13, "OUT16": 3},
            "as mma_tma_tmast with 4 stages and 4 KB a warp: the lower half staged once the "
            "upper half's store has read the buffer: +2..+5%"),
    # round 14, wmma (stretch 28): mma_sync's block form, 128x256 of 8 warps of 64x64 (one
    # block an SM, 255 registers at most), with the lean loader. The 4-warp 64x64 form
    # gained +2..+3 points (round 8) at 128x128; mma.sync measured 285-307 TFLOPS at 128x128
    # against 356-380 at 128x256 (the A and B bytes an FMA from L2 fall by a quarter)
    Variant("wmma_8w256", "wmma_x", {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2},
            "128x256 of 8 warps of 64x64, 3 stages of BK 64: +4..+7 points over wmma, "
            "0.48-0.51 of cuBLAS FP16"),
    Variant("wmma_8w256_s4", "wmma_x", {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "STAGES": 4},
            "as wmma_8w256 with 4 stages (204 KB): 0..+1 point over it"),
    Variant("wmma_8w256_gm8", "wmma_x", {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "GM": 8},
            "as wmma_8w256 in groups of 8 block rows: 0..+2 points over it (mma_sync "
            "gained 6% at 4 stages before its interior loader)"),
    Variant("wmma_8w256x128", "wmma_x", {"LEAN": 2, "BM": 256, "BN": 128, "WN": 64, "LB": 2},
            "256x128 of 8 warps of 64x64: as wmma_8w256 within a point"),
    Variant("wmma_8w256_fb3", "wmma_x", {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "FB": 3},
            "as wmma_8w256 with every stage in flight (FB 3): 0..+1 point over it"),
    Variant("wmma_8w256_bk32", "wmma_x",
            {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "BK": 32, "STAGES": 4},
            "as wmma_8w256 with 4 stages of BK 32: -2..0 points (twice the barriers)"),
    # round 14b: FB 3 measured +4.7 / +5.5 points over wmma_8w256 (H100), so its forms
    Variant("wmma_8w_fb3_s4", "wmma_x",
            {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "FB": 3, "STAGES": 4},
            "wmma_8w256_fb3 with 4 stages: 0..+2 points over it"),
    Variant("wmma_8w_fb3_gm8", "wmma_x",
            {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "FB": 3, "GM": 8},
            "wmma_8w256_fb3 in groups of 8 block rows: 0..+1 point"),
    Variant("wmma_8w_fb3_256x128", "wmma_x",
            {"LEAN": 2, "BM": 256, "BN": 128, "WN": 64, "LB": 2, "FB": 3},
            "wmma_8w256_fb3 at 256x128: within a point of it"),
    Variant("wmma_8w_fb3_bk128", "wmma_x",
            {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "FB": 3, "BK": 128, "STAGES": 2},
            "wmma_8w256_fb3 with 2 stages of BK 128 (both in flight): -2..+1 points"),
    Variant("wmma_8w_fb2", "wmma_x", {"LEAN": 2, "BN": 256, "WN": 64, "LB": 2, "FB": 2},
            "wmma_8w256_fb3 with the next step's fragments loaded while a step multiplies "
            "(a second set, 32 registers more: ptxas may spill): -3..+3 points"),
    # round 16 (stretch 29): the level persistent, one copy stream across a block's tiles
    # (wmma_p.cu), as mma_persistent is mma_sync's. Measured on an H100: 45.4 / 47.3% against
    # the level's 47.0 / 49.3 (docs/perf-notes.md, round 16)
    Variant("wmma_p", "wmma_p", {},
            "one block an SM, the next tile's first K tiles in flight during this one's last "
            "and its stores: +1..+3 points at 4096^3, 0..+1 at 8192^3"),
    Variant("wmma_p_gm1", "wmma_p", {"GM": 1}, "wmma_p in row order: within a point of GM 8"),
    # round 15 (stretch 29): the level's fragments rotating through their registers, so a K
    # tile starts with its first fragments loaded (wmma_rf.cu). Measured on an H100: 46.9 /
    # 49.9% against the level's 47.0 / 49.7 (docs/perf-notes.md, round 15)
    Variant("wmma_rf", "wmma_rf", {"RF": 1},
            "the next step's fragments loaded under this step's HMMAs in the same registers, "
            "the next K tile's first ones after the barrier: +1..+4 points"),
    Variant("wmma_rf0", "wmma_rf", {"RF": 0}, "control: the level's loop from wmma_rf.cu"),
    # round 14c: the level's own form (stretch 28: 47.3 / 49.8% on an H100) at 4096^3, where
    # each block's prologue and epilogue weigh twice what they do at 8192^3
    Variant("wmma_s4", "wmma", {"STAGES": 4},
            "the level with 4 stages (208 KB): 0..+1 point"),
    Variant("wmma_4w", "wmma", {"BN": 128},
            "the level's form in 128x128 blocks of 4 warps, two blocks an SM, so that one "
            "block's prologue and epilogue overlap the other's K loop: +0..+2 points at "
            "4096^3, -2..0 at 8192^3"),
    Variant("wmma_256x128", "wmma", {"BM": 256, "BN": 128},
            "the level at 256x128: within half a point"),
    Variant("wmma_fb3_4w", "wmma_x", {**WMMA_BEFORE_ROUND_14, "LEAN": 2, "WN": 64, "FB": 3},
            "the 4-warp 64x64 form with all 3 stages in flight and the barrier after the "
            "tile's last fragment loads (240 registers, 2 blocks/SM): +1..+4 points over "
            "wmma_lean_4w, 0.47-0.50 of cuBLAS FP16"),
    Variant("wmma_lean_4w", "wmma_x", {**WMMA_BEFORE_ROUND_14, "LEAN": 2, "WN": 64},
            "control of the 4-warp form: 0.46-0.47 / 0.44-0.45 (round 1)"),
    Variant("wmma", "wmma", {}, "control: the level since stretch 28 (wmma_8w256_fb3's "
            "form): 0.46-0.49 of cuBLAS FP16"),
    Variant("wmma_r13", "wmma_x", {**WMMA_BEFORE_ROUND_14, },
            "control: the level before round 14 (the family's code with its loader): 0.41-0.44"),
    Variant("mma_tma", "mma_tma", {},
            "control: 0.70-0.71 of cuBLAS FP16 (H100, paired; 0.63-0.70 in its FP32 form "
            "before stretch 25, as BEFORE_ROUND_13's variants run)"),
    Variant("mma_tma_wait2", "mma_tma_x", {**BEFORE_ROUND_13, "WAITAT": 2},
            "half of the last 16-deep step's mma.sync issued before the wait on the next "
            "stage: 0..+2% if stages arrive late, else within noise"),
    Variant("mma_tma_wrel", "mma_tma_x", {**BEFORE_ROUND_13, "WREL": 1},
            "one 'empty' arrival per warp (8 per stage, not 256): within noise, at most +1%"),
    Variant("mma_tma_wait2_wrel", "mma_tma_x", {**BEFORE_ROUND_13, "WAITAT": 2, "WREL": 1},
            "both: their sum, if either gains"),
    Variant("wmma_fb3", "wmma_x", {**WMMA_BEFORE_ROUND_14, "LEAN": 2, "FB": 3},
            "8 warps of 64x32 (the level's form) with all 3 stages in flight, 128 "
            "registers, 2 blocks/SM: +0..+3% over wmma_lean, below wmma_fb3_4w"),
    Variant("mma_tma_wait1", "mma_tma_x", {**BEFORE_ROUND_13, "WAITAT": 1},
            "a quarter of the last step's mma.sync before the wait: as wait2, within 1%"),
    Variant("mma_tma_frag2", "mma_tma_x", {**BEFORE_ROUND_13, "FRAG": 2},
            "A fragments one row ahead in a ring of two (the 96x64 groundwork; XOR "
            "addresses, 245-instruction loop): within noise, or -1..-2%"),
    Variant("wmma_fb2", "wmma_x", {**WMMA_BEFORE_ROUND_14, "LEAN": 2, "FB": 2},
            "fragments double-buffered across K tiles, 8 warps of 64x32: 194 registers, so "
            "one block/SM: -5..+3% over wmma_lean"),
    # rounds 1-2 (measured, docs/perf-notes.md)
    Variant("r2d_lb2", "register_2d_x", {"LB": 2},
            "127 registers instead of 152: two blocks per SM as kernel 5; 1.00-1.05 of k5"),
    Variant("register_2d", "register_2d", {}, "control: 0.85-0.87 of k5"),
    Variant("wmma_lean", "wmma_x", {**WMMA_BEFORE_ROUND_14, "LEAN": 2},
            "K loop 295 -> 169 instructions, 126 registers: +8-15%, 0.46-0.50 of cuBLAS"),
    Variant("mma_tma_rel3", "mma_tma_x", {**BEFORE_ROUND_13, "REL": 3},
            "no proxy fence (MEMBAR.ALL.CTA) per K tile: +1-4%; a wrong burst check = race"),
    Variant("mma_tma_2cta", "mma_tma_x", {**BEFORE_ROUND_13, **TWO_CTAS},
            "two persistent 128x128 CTAs per SM overlap each other's epilogue: -5..+5%"),
    Variant("mma_tma_sk2", "mma_tma_x", {**BEFORE_ROUND_13, "SK": 2},
            "stream-K remainder: 8192^3 +1-3% (half-empty last wave), 4096^3 -2..-5%"),
    Variant("r2d_ku2", "register_2d_x", {"KU": 2},
            "kernel 5's loop form (110 registers, 10 LDS per 64 FFMA): 0.95-1.02 of k5"),
    Variant("wmma_lean_lb3", "wmma_x", {**WMMA_BEFORE_ROUND_14, "LEAN": 2, "LB": 3},
            "as wmma_lean with 2 blocks per SM asked (128 registers): the same"),
    Variant("cp_async_interior", "cp_async_interior", {},
            "control: 0.90-0.92 of cuBLAS FP32"),
    Variant("cpi_w2x4", "cp_async_interior", {"WMITER": 2, "WNITER": 4},
            "16x16 warp sub-tiles: 235 registers instead of 255, same loop: -2..+3%"),
    Variant("mma_tma_ord2", "mma_tma_x", {**BEFORE_ROUND_13, "ORD": 2},
            "serpentine mma.sync order (B fragment reused at row changes): within 1%"),
    Variant("mma_tma_rel2", "mma_tma_x", {**BEFORE_ROUND_13, "REL": 2},
            "stage freed one 16-deep step earlier (fence still behind ldmatrix): within 1%"),
    Variant("mma_tma_rel3_sk2", "mma_tma_x", {**BEFORE_ROUND_13, "REL": 3, "SK": 2},
            "REL 3 and SK 2 together, if both gain: their sum"),
    Variant("wmma_lean_bk32", "wmma_x", {**WMMA_BEFORE_ROUND_14, "LEAN": 2, "BK": 32, "STAGES": 4},
            "LEAN with BK 32 and 4 stages (95 instructions per K tile): within 3% of LEAN"),
    Variant("wmma_lean_64x64", "wmma_x", {"LEAN": 2, "BN": 256, "WN": 64},
            "64x64 warp tiles, 128x256 block, 224 registers, one block per SM: -5..+5%"),
    Variant("mma_tma_gm16", "mma_tma_x", {**BEFORE_ROUND_13, "GM": 16},
            "within the noise (rounds 5-6: -2..+2%)"),
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


def family_level(name: str) -> Any:
    """The Level of an attempt source with its default switches."""
    from gemmscope.kernels.ladder import registry

    fam = FAMILIES[name]
    base = registry.get(fam.level)
    extra: dict[str, Any] = {}
    if fam.level == "mma_tma":
        # MINB blocks per SM; with stream-K every block of the grid takes part
        extra = {"stream_k_param": "SK", "grid_rule": _mma_tma_x_grid}
    elif name == "wmma_p":
        # one block per SM walking its tiles, and 1 KB a warp for edge fragments after the ring
        extra = {"sm_grid": True, "dyn_smem": _wmma_p_smem}
    return dataclasses.replace(base, id=name, source=fam.source, source_dir=str(ATTEMPTS),
                               kernel=fam.kernel, params={**base.params, **fam.switches},
                               **extra)


def _wmma_p_smem(p: dict[str, int]) -> int:
    """wmma's ring and each warp's 1 KB of edge-fragment scratch after it (wmma_p.cu)."""
    from gemmscope.kernels.ladder import registry

    warps = (p["BM"] // p["WM"]) * (p["BN"] // p["WN"])
    return registry.get("wmma").dyn_smem(p) + warps * 16 * 16 * 4


def _mma_tma_x_grid(tiles: int, sms: int, p: dict[str, int]) -> int:
    blocks = sms * p["MINB"]
    return blocks if p["SK"] else min(tiles, blocks)

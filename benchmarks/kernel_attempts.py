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
alternately, L2 flushed before each launch, the ratio the pseudo-median of per-pair ratios
with its 95% interval, the SM clock read per launch), and checked once more after a burst of
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
import json
import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import _smoke
from _args import amount, count, shapes
from _attempt_sass import compile_timed as compile_timed
from _attempt_sass import sass_rows, sass_table
from _attempt_table import size_text as size_text
from _attempt_table import table as table
from _attempt_variants import ATTEMPTS as ATTEMPTS
from _attempt_variants import BF16_ODD as BF16_ODD
from _attempt_variants import FAMILIES as FAMILIES
from _attempt_variants import TWO_CTAS as TWO_CTAS
from _attempt_variants import VARIANTS as VARIANTS
from _attempt_variants import WGMMA_X_OPS as WGMMA_X_OPS
from _attempt_variants import WGMMA_X_SHAPES as WGMMA_X_SHAPES
from _attempt_variants import Family as Family
from _attempt_variants import Variant as Variant
from _attempt_variants import family_level as family_level
from _attempt_variants import wgmma_x_ops as wgmma_x_ops
from _siboehm_k5 import K5_MAX_BYTES as K5_MAX_BYTES
from _siboehm_k5 import compile_k5, k5_paired
from _siboehm_k5 import k5_source as k5_source

SIZES = (4096, 8192)
# odd shapes: edge blocks and the element-wise path; several tiles per persistent block and
# a stream-K remainder (2049 x 4097: 17 x 17 tiles of 128 x 256 over 132 SMs); K a
# multiple of 8 where the TMA levels need it (others skipped for them)
CHECK_SHAPES = ((1000, 999, 1001), (1000, 1000, 1024), (2049, 4097, 136), (7, 13, 8))
BURST = 20  # back-to-back launches before the second check
TAG = "@@attempt "
HARD_STOP_S = 15.0
SIBOEHM_K5 = "siboehm_k5"


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    """--sizes (or a variant's own): comma-separated N (N x N x N) or MxNxK, read as
    ``_args.shapes`` reads them (argparse.ArgumentTypeError where one is wrong)."""
    return shapes(text)


def say(msg: str) -> None:
    print(msg, flush=True)


# ------------------------------------------------------------------ the variants' levels

# mma_tma_x's C staging a consumer warp, by OUT16 (mma_tma_x.cu): none where each thread
# stores its C (0: FP32, 1: FP16), its 64 x 64 FP16 tile (2: the level's), half of it (3)
OUT16_STAGING = {0: 0, 1: 0, 2: 8192, 3: 4096}


def variant_level(v: Variant) -> Any:
    """The variant's Level (ValueError where its parameters are not the base's)."""
    from gemmscope.kernels.ladder import registry

    fam = FAMILIES.get(v.base)
    base = family_level(v.base) if fam is not None else registry.get(v.base)
    # a family switch set to 0 (OUT16 0: the form before round 13) is no count or size,
    # which the level's checks hold to 1 or more: set after them
    zeros = {k: 0 for k, x in v.changes.items() if x == 0 and fam and k in fam.switches}
    checked = {k: x for k, x in v.changes.items() if k not in zeros}
    level = base.with_params(checked) if checked else base
    if zeros:
        level = dataclasses.replace(level, params={**level.params, **zeros})
    if "OUT16" in level.params:
        # mma_tma_x writes C as FP16 (as cuBLAS FP16 does) but where OUT16 is 0, and stages
        # it per warp by OUT16, beside mma_tma's own stages
        out = registry.OutputFormat.FP16 if level.params["OUT16"] else registry.OutputFormat.FP32
        level = dataclasses.replace(level, output_format=out, dyn_smem=_mma_tma_x_smem)
    return level


def _mma_tma_x_smem(p: dict[str, int]) -> int:
    from gemmscope.kernels.ladder import registry

    return registry.mma_tma_smem(p, OUT16_STAGING[p["OUT16"]])


def selected(only: str) -> list[int]:
    """The variants --only names, in the table's order: a variant's own name picks that one
    (the control "mma_tma" alone, not every attempt on mma_tma); any other word every
    variant whose base or target it is; nothing, all of them."""
    words = {w.strip() for w in only.split(",") if w.strip()}
    names = {v.name for v in VARIANTS}
    return [i for i, v in enumerate(VARIANTS)
            if not words or v.name in words
            or (words - names) & {v.base, target_of(v)}]


def only_words(text: str) -> str:
    """--only's argparse ``type``: the text, where each word names a variant, a base or a
    target (a word that picks nothing is refused, not a run with fewer variants)."""
    known = list(dict.fromkeys(w for v in VARIANTS for w in (v.name, v.base, target_of(v))))
    unknown = [w for w in (w.strip() for w in text.split(",")) if w and w not in known]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"no variant, base or level {', '.join(map(repr, unknown))} here; known: "
            f"{', '.join(known)}")
    return text


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
                                 args.pair_budget_s, BURST) if ref is None else
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
    ap.add_argument("--max-pairs", type=count, default=400)
    ap.add_argument("--warmup", type=amount, default=3)
    ap.add_argument("--only", default="", type=only_words,
                    help="variants to run: a variant's name picks it alone, another word every "
                         "variant of that base or target (e.g. mma_tma_x: its family)")
    ap.add_argument("--precompile", type=amount, default=12,
                    help="processes compiling the variants first (0: none)")
    ap.add_argument("--list", action="store_true", help="the variants and predictions")
    ap.add_argument("--sass", action="store_true",
                    help="offline: compile each variant here, print registers and K loop")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--indices", default="", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    try:  # the sizes said wrong here, not as a traceback from the first variant's run
        parse_sizes(args.sizes)
    except argparse.ArgumentTypeError as e:
        ap.error(f"argument --sizes: {e}")
    indices = selected(args.only)
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
        say(sass_table(sass_rows([(VARIANTS[i].name, variant_level(VARIANTS[i]))
                                  for i in indices])))
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


if __name__ == "__main__":
    sys.exit(main())

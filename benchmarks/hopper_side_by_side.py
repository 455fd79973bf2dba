"""The sm_90a candidates (wgmma BF16, FP8) checked, then timed side by side with their
references (GPU machine; written for issue 17).

    python benchmarks/hopper_side_by_side.py --out DIR [--budget 330] [--repeats 30]
                                             [--only bf16|fp8] [--full-check]
    python benchmarks/hopper_side_by_side.py --smoke  # CI: arguments and the table, no GPU

One call on the H200 of at most about six minutes (``--budget`` seconds, default 330, after
which what is left is reported as skipped). Two phases, each run by child processes of this
script (``--child``) through the runner's own Bench, burst mode (same verification and
timing as ``gemmscope bench``):

1. check: every candidate at odd shapes (ragged M and N, an odd number of tile rows, N
   not a multiple of 8, K at 128 multiples; --full-check adds more); a candidate with a
   wrong result, a failed compile or a failed launch is reported and left out of phase 2;
2. timing: per shape, the references and the surviving candidates one after the other
   (side by side), at 4096^3, 6144^3 and 8192^3 (BF16) and at 8192^3 and DeepGEMM's six
   dense shapes (FP8; M = 4096).

A kernel that faults leaves a sticky CUDA error that poisons its process: the child
prints ``BEGIN`` before each job and ``RESULT`` after it, so when a child dies the parent
marks the job that was running as crashed and starts a fresh child with the jobs left.
Every result goes to DIR/hopper_side_by_side.jsonl as a JSON line; the table comes last
(candidate, params, shape, TFLOPS, % of reference(s), verified).
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import _smoke
from _args import count

# (label, level id, parameter changes): the references first, then the candidates
BF16_REFS = [("cublas_bf16", "cublas_bf16", {})]
BF16_CANDIDATES = [
    ("wgmma_tma", "wgmma_tma", {}),
    ("wgmma_stream_k", "wgmma_stream_k", {}),
    ("wgmma_stream_k GM=16", "wgmma_stream_k", {"GM": 16}),
    ("wgmma_stream_k GM=4", "wgmma_stream_k", {"GM": 4}),
    ("wgmma_tma GM=8", "wgmma_tma", {"GM": 8}),
]
FP8_REFS = [("cublaslt_fp8", "cublaslt_fp8", {}),
            ("cublaslt_fp8_blocks", "cublaslt_fp8_blocks", {})]
FP8_CANDIDATES = [
    # round 6: 192-wide tiles (one wgmma.m64n192k32 part, two Bt scale blocks per tile)
    # where they need fewer waves (the levels pick BN per shape: N = 2112 = 11 x 192),
    # side by side with the fixed 256 of before
    ("fp8_block_scaled", "fp8_block_scaled", {}),
    ("fp8_block_scaled BN=256", "fp8_block_scaled", {"BN": 256}),
    ("fp8_stream_k", "fp8_stream_k", {}),
    ("fp8_stream_k BN=256", "fp8_stream_k", {"BN": 256}),
    ("fp8_block_scaled BN=192", "fp8_block_scaled", {"BN": 192}),
]
CORE = 8  # candidates timed first, side by side (the rest after every shape's core)
BF16_SHAPES = [(4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192)]
FP8_SHAPES = [(8192, 8192, 8192), (4096, 2112, 7168), (4096, 24576, 1536), (4096, 32768, 512),
              (4096, 7168, 16384), (4096, 4096, 7168), (4096, 7168, 2048)]
# odd shapes: ragged M and N (partial tiles, an odd cluster row count), N % 8 != 0 (the
# direct-store epilogue), K at 8 (BF16) or 128 (FP8) multiples, and small ones
CHECK_SHAPES = [(7, 13, 128), (100, 100, 256), (1000, 999, 1024), (4099, 4104, 512),
                (4099, 17, 512), (129, 264, 384), (384, 2112, 1024), (4099, 4097, 2048),
                (1000, 1000, 1000)]
SHORT_CHECK = [CHECK_SHAPES[i] for i in (0, 2, 3, 5, 6)]


# ------------------------------------------------------------------ child
def child(jobs: list[dict[str, Any]], repeats: int) -> None:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, Refused, refusal, wall_clock
    from gemmscope.kernels.ladder import registry

    dev = device_info()
    bench = Bench(dev, wall_clock())
    for job in jobs:
        print("BEGIN " + json.dumps(job["key"]), flush=True)
        M, N, K = job["shape"]
        out: dict[str, Any] = {**job["key"]}
        t0 = time.time()
        try:
            level = registry.get(job["level"])
            params = job["params"]
            if params:
                level = level.with_params(params)
            why = refusal(level, M, N, K, dev)
            if why is not None:
                out["refused"] = str(why)
            else:
                r = bench.run(level, M, N, K, repeats=repeats if job["timed"] else 2,
                              warmup=3 if job["timed"] else 1,
                              params=level.params if params else None, energy=False)
                out.update({k: r.get(k) for k in (
                    "tflops", "median_ms", "min_ms", "verified", "rel_err", "deepgemm_diff",
                    "regs", "local_bytes", "smem_bytes", "variant", "sm_clock_mhz_avg", "params")})
        except Refused as exc:
            out["refused"] = str(exc)
        except Exception as exc:  # a compile error, a failed launch: report, go on
            out["error"] = f"{type(exc).__name__}: {str(exc)[:800]}"
        out["seconds"] = round(time.time() - t0, 2)
        print("RESULT " + json.dumps(out), flush=True)


# ------------------------------------------------------------------ parent
def make_jobs(entries: list[tuple[str, str, dict[str, int]]],
              shapes: list[tuple[int, int, int]], timed: bool) -> list[dict[str, Any]]:
    """Per shape, every entry in turn (side by side)."""
    return [{"key": {"label": label, "level": lid, "params": params, "M": s[0], "N": s[1],
                     "K": s[2], "timed": timed},
             "level": lid, "params": params, "shape": list(s), "timed": timed}
            for s in shapes for label, lid, params in entries]


def child_output(cmd: list[str], stdin: str, deadline: float, job_timeout: float,
                 on_line: Any) -> tuple[str, int]:
    """Run a child with the jobs on stdin; kill it when the deadline passes or when it
    prints nothing for ``job_timeout`` seconds (a kernel that hangs, say a cluster
    deadlock). Each line of its stdout goes to ``on_line`` as it comes. Returns (stderr,
    exit code; -1 when killed)."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()
    errs: list[str] = []

    def pump_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def pump_err() -> None:
        assert proc.stderr is not None
        errs.append(proc.stderr.read())

    threads = [threading.Thread(target=f, daemon=True) for f in (pump_out, pump_err)]
    for t in threads:
        t.start()
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    why = ""
    while True:
        wait = min(job_timeout, deadline - time.time())
        try:
            line = lines.get(timeout=max(wait, 0.1))
        except queue.Empty:
            why = "timeout (budget)" if time.time() >= deadline else \
                f"no output for {job_timeout:.0f} s (hung?)"
            proc.kill()
            break
        if line is None:
            break
        on_line(line.rstrip("\n"))
    rc = proc.wait()
    for t in threads:
        t.join(timeout=5)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    err = "".join(errs) + (f"\n{why}" if why else "")
    return err, (-1 if why else rc)


def run_jobs(jobs: list[dict[str, Any]], repeats: int, deadline: float,
             log: Any, job_timeout: float = 60) -> list[dict[str, Any]]:
    """Run ``jobs`` in child processes until each has a result (a crash or a hang ends the
    job that was running and restarts the rest in a fresh child) or the deadline passes."""
    results: list[dict[str, Any]] = []
    pending = list(jobs)
    while pending:
        left = deadline - time.time()
        if left < 5:
            for job in pending:
                results.append({**job["key"], "skipped": "out of time"})
            break
        cmd = [sys.executable, __file__, "--child", "--repeats", str(repeats)]
        t0 = time.time()
        done = 0
        running = None

        def on_line(line: str) -> None:
            nonlocal done, running
            if line.startswith("BEGIN "):
                running = json.loads(line[6:])
            elif line.startswith("RESULT "):
                r = json.loads(line[7:])
                results.append(r)
                log.write(json.dumps(r) + "\n")
                log.flush()
                print(f"  {fmt_progress(r)}", flush=True)
                done += 1
                running = None

        err, rc = child_output(cmd, json.dumps(pending), deadline, job_timeout, on_line)
        pending = pending[done:]
        if rc == 0 and not pending:
            break
        tail = (err or "").strip().splitlines()[-3:]
        print(f"# child exited {rc} after {time.time() - t0:.0f} s: {' | '.join(tail)[:400]}",
              flush=True)
        if running is not None and pending:  # the job that was running killed the child
            r = {**pending[0]["key"], "error": f"crashed the process (exit {rc}): "
                 + " | ".join(tail)[:600]}
            results.append(r)
            log.write(json.dumps(r) + "\n")
            pending = pending[1:]
        elif pending:  # died (or was killed) before any job began: give up on these
            for job in pending:
                results.append({**job["key"], "error": f"child failed (exit {rc}): "
                                + " | ".join(tail)[:300]})
            break
    return results


def fmt_progress(r: dict[str, Any]) -> str:
    shape = f"{r['M']}x{r['N']}x{r['K']}"
    if "tflops" in r and r.get("tflops") is not None:
        what = f"{r['tflops']:.1f} TFLOPS ok={r.get('verified')} rel={r.get('rel_err') or 0:.1e}"
    else:
        what = r.get("refused") or r.get("error") or r.get("skipped") or "?"
    return f"{r['label']:<32} {shape:<18} {what}"[:220]


def failed_check(results: list[dict[str, Any]]) -> dict[str, str]:
    """Labels whose check runs went wrong, with the first reason."""
    bad: dict[str, str] = {}
    for r in results:
        if r["label"] in bad:
            continue
        if "error" in r:
            bad[r["label"]] = r["error"][:200]
        elif "tflops" in r and not r.get("verified"):
            bad[r["label"]] = (f"wrong at {r['M']}x{r['N']}x{r['K']}: rel_err "
                               f"{r.get('rel_err')}, deepgemm_diff {r.get('deepgemm_diff')}")
    return bad


def table(rows: list[dict[str, Any]], refs: dict[str, list[str]]) -> None:
    """The timed rows: TFLOPS and the percentage of each reference at the same shape."""
    by_shape: dict[tuple[str, tuple[int, int, int]], float] = {}
    for r in rows:
        if r.get("tflops") and r.get("verified"):
            by_shape[(r["label"], (r["M"], r["N"], r["K"]))] = r["tflops"]
    print(f"\n{'candidate':<32} {'shape':<18} {'TFLOPS':>8}  {'% of reference':<40} ok  regs lmem")
    for r in rows:
        shape = (r["M"], r["N"], r["K"])
        s = f"{shape[0]}x{shape[1]}x{shape[2]}"
        if r.get("tflops") is None:
            why = r.get("refused") or r.get("error") or r.get("skipped") or "?"
            print(f"{r['label']:<32} {s:<18} {why[:90]}")
            continue
        pct = []
        for ref in refs.get(r["family"], []):
            base = by_shape.get((ref, shape))
            if base and ref != r["label"]:
                pct.append(f"{100 * r['tflops'] / base:5.1f}% {ref}")
        print(f"{r['label']:<32} {s:<18} {r['tflops']:8.1f}  {', '.join(pct):<40} "
              f"{'Y' if r.get('verified') else 'N'}   {r.get('regs')} {r.get('local_bytes')}")


def made_up_rows(families: dict[str, tuple[list, list, list]]
                 ) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """(rows, references per family) as phase 2 gives them, at each family's first shape
    with made-up figures (--smoke)."""
    rows, refs = [], {}
    for fam, (ref_entries, cands, shapes) in families.items():
        refs[fam] = [label for label, _, _ in ref_entries]
        for i, job in enumerate(make_jobs(ref_entries + cands, shapes[:1], True)):
            rows.append({**job["key"], "family": fam, "tflops": 600.0 - 10 * i,
                         "verified": True, "regs": 168, "local_bytes": 0})
    return rows, refs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--budget", type=float, default=330, help="seconds for the whole run")
    ap.add_argument("--repeats", type=count, default=30)
    ap.add_argument("--only", choices=["bf16", "fp8"], default=None)
    ap.add_argument("--full-check", action="store_true",
                    help=f"all {len(CHECK_SHAPES)} check shapes (default: {len(SHORT_CHECK)})")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.child:
        child(json.loads(sys.stdin.read()), args.repeats)
        return 0
    start = time.time()
    deadline = start + args.budget
    families = {"bf16": (BF16_REFS, BF16_CANDIDATES, BF16_SHAPES),
                "fp8": (FP8_REFS, FP8_CANDIDATES, FP8_SHAPES)}
    if args.only:
        families = {args.only: families[args.only]}
    if args.smoke:  # the first shape's jobs of each family, with made-up results
        _smoke.level_variants((lid, p) for refs, cands, _ in families.values()
                              for _, lid, p in refs + cands)
        print(_smoke.MADE_UP)
        table(*made_up_rows(families))
        return _smoke.needs_gpu()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    checks = CHECK_SHAPES if args.full_check else SHORT_CHECK
    with (out_dir / "hopper_side_by_side.jsonl").open("w") as log:
        # phase 1: every candidate at the odd shapes (references need no check)
        jobs = []
        for fam, (_, cands, _) in families.items():
            for job in make_jobs(cands, checks, False):
                job["key"]["family"] = fam
                jobs.append(job)
        print(f"# phase 1: {len(jobs)} check runs", flush=True)
        check_results = run_jobs(jobs, args.repeats, start + 0.4 * args.budget, log)
        bad = failed_check(check_results)
        for label, why in bad.items():
            print(f"# LEFT OUT {label}: {why}", flush=True)
        # phase 2: per shape, references and surviving candidates side by side; first
        # the base level and the new level's defaults, then the variants (so that a run
        # cut short by the budget still has the main comparison)
        core: list[dict[str, Any]] = []
        extra: list[dict[str, Any]] = []
        refs: dict[str, list[str]] = {}
        for fam, (ref_entries, cands, shapes) in families.items():
            refs[fam] = [label for label, _, _ in ref_entries]
            keep = [c for c in cands if c[0] not in bad]
            for part, entries in ((core, ref_entries + keep[:CORE]), (extra, keep[CORE:])):
                for job in make_jobs(entries, shapes, True):
                    job["key"]["family"] = fam
                    part.append(job)
        jobs = core + extra
        print(f"# phase 2: {len(jobs)} timed runs, {deadline - time.time():.0f} s left",
              flush=True)
        timed = run_jobs(jobs, args.repeats, deadline, log)
    print(f"\n# checks: {sum(1 for r in check_results if r.get('verified'))} verified, "
          f"{sum(1 for r in check_results if 'refused' in r)} refused, "
          f"{len(bad)} candidate(s) left out; {time.time() - start:.0f} s in all")
    for label, why in bad.items():
        print(f"#   {label}: {why}")
    table(timed, refs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

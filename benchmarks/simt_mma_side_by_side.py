"""The pre-Hopper candidates (SIMT and mma.sync) against cuBLAS, side by side (GPU machine;
written for issue 17).

    python benchmarks/simt_mma_side_by_side.py [--out DIR] [--budget 300] [--quick] [--only A,B]
    python benchmarks/simt_mma_side_by_side.py --smoke  # CI: arguments and the table, no GPU

For every candidate (a level of the registry with some template parameters changed):
compile, check it at odd shapes (edge and vector paths, several tiles per persistent
block), then time it and its cuBLAS reference of the same precision back to back at 4096^3
and 8192^3 through the runner's own Bench (L2 flushed before each launch, median of 20,
every timed run verified). Baselines and the new levels come first, the parameter sweep
after them, so a run cut short by --budget still has the answers that matter.

The candidates are first compiled in parallel processes (--precompile N, into CuPy's
disk cache), then run one after another in a worker process. Robust by construction: a
candidate that fails to compile or to verify is reported and skipped; a CUDA fault (which
poisons the process) or a hang (no output for --stall seconds) ends the worker, and a new
one carries on with the next candidate. Every result is a JSON line in
DIR/simt_mma_side_by_side.jsonl ($OUT, else .); progress is printed with flush, and a
table comes last: candidate, parameters, size, TFLOPS, the reference's TFLOPS, percent of
it, verified, registers, spilled bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import _smoke
from _args import amount, level_ids

SIZES = (4096, 8192)
# odd shapes: the edge (scalar) path; the vector path with interior and edge blocks and K a
# multiple of every BK (cp_async_interior's guard-free loop); enough tiles (over 132) that
# a persistent block walks several, on the vector and on the edge path; odd M and N with K
# a multiple of 8 for the TMA level (which refuses other K; k_ok skips those shapes there)
CHECK_SHAPES = ((7, 13, 5), (1000, 999, 1001), (1000, 1000, 1024), (2056, 4104, 264),
                (2049, 4097, 129), (7, 13, 8), (2049, 4097, 136))
QUICK_CHECK_SHAPES = CHECK_SHAPES[:3]
REPEATS = 20
TAG = "@@candidate "  # a worker's result line
HARD_STOP_S = 15.0  # past the budget, a worker still running is stopped after this long

# (name, level id, template parameters changed). Order = priority.
CANDIDATES: list[tuple[str, str, dict[str, int]]] = [
    # baselines and new levels
    ("mma_sync", "mma_sync", {}),
    ("mma_persistent", "mma_persistent", {}),
    ("mma_tma", "mma_tma", {}),
    ("mma_tma", "mma_tma", {"GM": 16}),
    ("mma_tma", "mma_tma", {"STAGES": 2}),  # 4 do not fit beside its 64 KB of C staging
    ("mma_tma", "mma_tma", {"BM": 256, "BN": 128}),
    ("wmma", "wmma", {}),
    ("cp_async", "cp_async", {}),
    ("cp_async_interior", "cp_async_interior", {}),
    # sweep: the knobs most likely to matter
    ("cp_async_interior", "cp_async_interior", {"BK": 32, "STAGES": 2}),
    ("cp_async_interior", "cp_async_interior", {"GM": 4}),
    ("mma_persistent", "mma_persistent", {"STAGES": 3}),
    ("mma_persistent", "mma_persistent", {"BK": 128, "STAGES": 2}),
    ("mma_persistent", "mma_persistent", {"GM": 1}),
    ("mma_persistent", "mma_persistent", {"GM": 16}),
    ("mma_persistent", "mma_persistent", {"BM": 256, "BN": 128}),
    ("mma_persistent", "mma_persistent", {"BN": 128, "WN": 32}),
    ("wmma", "wmma", {"STAGES": 2}),
    ("cp_async", "cp_async", {"GM": 4}),
    ("cp_async", "cp_async", {"GM": 8}),
    ("cp_async", "cp_async", {"STAGES": 4}),
    ("cp_async_interior", "cp_async_interior", {"BK": 32, "STAGES": 3}),
    ("cp_async_interior", "cp_async_interior", {"GM": 8}),
    ("cp_async", "cp_async", {"BK": 32, "STAGES": 2}),
]


def say(msg: str) -> None:
    print(msg, flush=True)


# ------------------------------------------------------------------ worker

def k_ok(lv, K: int) -> bool:
    """Whether the level takes this K (a TMA level: a multiple of 8)."""
    return K % (lv.k_multiple or 1) == 0


def worker(start: int, indices: list[int], deadline: float, quick: bool) -> int:
    """Run candidates ``indices[start:]`` in this process; one TAG line per result."""
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.ladder import registry

    dev = device_info()
    bench = Bench(dev, wall_clock())
    say(f"worker: {dev.name}, {dev.sm_count} SMs")
    shapes = QUICK_CHECK_SHAPES if quick else CHECK_SHAPES

    def emit(rec: dict) -> None:
        print(TAG + json.dumps(rec, default=str), flush=True)

    def fatal(exc: BaseException) -> bool:
        text = f"{type(exc).__name__} {exc}"
        return "cudaError" in text or "CUDA_ERROR" in text or "CUDARuntimeError" in text

    def run(lv, M: int, N: int, K: int, repeats: int, warmup: int) -> dict:
        r = bench.run(lv, M, N, K, repeats=repeats, warmup=warmup, energy=False)
        return {k: r.get(k) for k in ("level", "M", "N", "K", "variant", "tflops",
                                      "median_ms", "q1_ms", "q3_ms", "verified", "rel_err",
                                      "regs", "local_bytes", "smem_bytes",
                                      "sm_clock_mhz_avg")}

    for pos in indices[start:]:
        name, lid, changes = CANDIDATES[pos]
        head = {"index": pos, "name": name, "level": lid, "changes": changes}
        if time.time() > deadline:
            emit({**head, "stage": "skipped", "error": "out of time (--budget)"})
            continue
        say(f"\n[{pos}] {name} {json.dumps(changes)}")
        emit({**head, "stage": "start"})
        try:
            lv = registry.get(lid).with_params(changes)
        except (KeyError, ValueError) as exc:
            emit({**head, "stage": "params", "error": str(exc)})
            continue
        ref = registry.get(lv.reference or registry.REFERENCE_FOR[lv.precision])
        ok, where = True, "check"
        try:  # the shapes the level takes (a TMA level: K a multiple of 8)
            for (M, N, K) in (s for s in shapes if k_ok(lv, s[2])):
                r = run(lv, M, N, K, repeats=1, warmup=0)
                emit({**head, "stage": "check", **r})
                say(f"  check {M}x{N}x{K} {r['variant']}: rel_err={r['rel_err']} "
                    f"ok={r['verified']} regs={r['regs']} local={r['local_bytes']}")
                if not r["verified"]:
                    ok = False
                    break
            if ok:
                where = "time"
                for S in SIZES:
                    if time.time() > deadline:
                        emit({**head, "stage": "skipped", "M": S,
                              "error": "out of time (--budget)"})
                        break
                    rr = run(ref, S, S, S, repeats=REPEATS, warmup=2)
                    rc = run(lv, S, S, S, repeats=REPEATS, warmup=2)
                    pct = 100 * rc["tflops"] / rr["tflops"] if rr["tflops"] else 0.0
                    emit({**head, "stage": "time", **rc, "ref": ref.id,
                          "ref_tflops": rr["tflops"], "ref_verified": rr["verified"],
                          "pct_of_ref": pct})
                    say(f"  {S}^3: {rc['tflops']:.1f} TFLOPS vs {ref.id} {rr['tflops']:.1f}"
                        f" = {pct:.1f}%  verified={rc['verified']} regs={rc['regs']} "
                        f"local={rc['local_bytes']}")
        except Exception as exc:  # a compile error or refusal skips; a CUDA fault ends us
            emit({**head, "stage": where, "error": f"{type(exc).__name__}: {exc}"[:600],
                  "trace": traceback.format_exc()[-600:]})
            say(f"  FAILED ({where}): {type(exc).__name__}: {str(exc)[:300]}")
            if fatal(exc):
                say("  CUDA fault: this worker ends, a new one continues")
                return 3
    emit({"done": True})
    return 0


# ------------------------------------------------------------------ precompile

def precompile_one(pos: int) -> str:
    """Compile candidate ``pos`` with CuPy (both variants) in a process of its own, so
    that CuPy's disk cache has it when the worker asks; errors are the worker's to report."""
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.toolchain import nvrtc as build

    _, lid, changes = CANDIDATES[pos]
    try:
        build.compile_level(registry.get(lid).with_params(changes))
        return f"{pos} ok"
    except Exception as exc:
        return f"{pos} {type(exc).__name__}"


def precompile(indices: list[int], procs: int, limit_s: float) -> None:
    """NVRTC on ``procs`` CPU cores at once (a candidate's compile takes seconds; the
    worker would do them one after another), for at most ``limit_s``."""
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
    say(f"simt_mma: precompiled {len(finished)}/{len(futures)} candidates in "
        f"{time.time() - t:.0f} s; {len(bad)} failed ({', '.join(sorted(bad)[:4])}"
        f"{' ...' if len(bad) > 4 else ''}), their workers will say why")


# ------------------------------------------------------------------ parent

def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--budget", type=float, default=300.0,
                    help="seconds for the whole run; later candidates are skipped")
    ap.add_argument("--stall", type=float, default=120.0,
                    help="seconds without output after which a worker counts as hung")
    ap.add_argument("--quick", action="store_true", help="three check shapes")
    ap.add_argument("--only", default=[], help="candidate names or level ids to run",
                    type=level_ids(dict.fromkeys(x for c in CANDIDATES for x in c[:2])))
    ap.add_argument("--list", action="store_true", help="print the candidates and exit")
    ap.add_argument("--precompile", type=amount, default=8,
                    help="processes compiling the candidates before the run (0: none)")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--indices", default="", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.worker is not None:
        indices = [int(i) for i in args.indices.split(",") if i]
        return worker(args.worker, indices, args.deadline, args.quick)

    only = set(args.only)
    indices = [i for i, (name, lid, _) in enumerate(CANDIDATES)
               if not only or name in only or lid in only]
    if args.list:
        for i in indices:
            say(f"{i:3d} {CANDIDATES[i][0]:16s} {json.dumps(CANDIDATES[i][2])}")
        return 0
    if args.smoke:
        _smoke.level_variants((CANDIDATES[i][1], CANDIDATES[i][2]) for i in indices)
        say(_smoke.MADE_UP)
        table(made_up_records(indices))
        return _smoke.needs_gpu()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    deadline = t0 + args.budget
    records: list[dict] = []
    done: set[int] = set()
    log = (out / "simt_mma_side_by_side.jsonl").open("w")
    say(f"simt_mma: {len(indices)} candidates, budget {args.budget:.0f} s, out {out}")
    if args.precompile > 0:
        precompile(indices, args.precompile, min(120.0, args.budget / 3))
    while True:
        todo = [i for i in indices if i not in done]
        if not todo:
            break
        cmd = [sys.executable, __file__, "--worker", "0", "--indices",
               ",".join(map(str, todo)), "--deadline", str(deadline)]
        if args.quick:
            cmd.append("--quick")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
        last = [time.time()]

        def watchdog(p: subprocess.Popen = proc, seen: list[float] = last) -> None:
            while p.poll() is None:
                now = time.time()
                if now - seen[0] > args.stall or now > deadline + HARD_STOP_S:
                    say(f"simt_mma: no output for {now - seen[0]:.0f} s; stopping the worker")
                    p.kill()
                    return
                time.sleep(1.0)

        threading.Thread(target=watchdog, daemon=True).start()
        current = None
        assert proc.stdout is not None
        for line in proc.stdout:
            last[0] = time.time()
            if not line.startswith(TAG):
                print(line, end="", flush=True)
                continue
            rec = json.loads(line[len(TAG):])
            if rec.get("done"):
                done.update(todo)
                continue
            rec["t"] = round(time.time() - t0, 1)
            records.append(rec)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            if current is not None and rec["index"] != current:
                done.add(current)
            current = rec["index"]
        proc.wait()
        if current is not None:
            done.add(current)  # the candidate that ended the worker is not run again
        if proc.returncode and current is None:
            # no candidate started: the worker itself cannot run here (no GPU, no CuPy)
            say(f"simt_mma: the worker exited {proc.returncode} before any candidate; stopping")
            break
        if time.time() > deadline + HARD_STOP_S:
            break
    log.close()
    table(records)
    say(f"simt_mma: {time.time() - t0:.0f} s; results in {out / 'simt_mma_side_by_side.jsonl'}")
    return 0


def made_up_records(indices: list[int]) -> list[dict]:
    """A timed record per candidate and size as the worker prints them, the figures made
    up (--smoke)."""
    return [{"index": i, "name": CANDIDATES[i][0], "changes": CANDIDATES[i][2],
             "stage": "time", "M": n, "N": n, "K": n, "tflops": 40.0 - i, "ref_tflops": 50.0,
             "pct_of_ref": 2.0 * (40.0 - i), "verified": True, "regs": 128, "local_bytes": 0}
            for i in indices for n in SIZES]


def table(records: list[dict]) -> None:
    say("\n== issue 17 candidates (burst, L2 flushed, median of 20; % of the reference "
        "timed just before) ==")
    say(f"{'candidate':18s} {'params':34s} {'size':>5s} {'TFLOPS':>8s} {'ref':>8s} "
        f"{'%ref':>6s} {'ok':>3s} {'regs':>4s} {'spill':>5s}")
    by_index: dict[int, list[dict]] = {}
    for r in records:
        by_index.setdefault(r["index"], []).append(r)
    for i in sorted(by_index):
        rs = by_index[i]
        name, changes = rs[0]["name"], json.dumps(rs[0]["changes"], separators=(",", ":"))
        timed = [r for r in rs if r.get("stage") == "time" and "error" not in r]
        for r in timed:
            say(f"{name:18s} {changes:34s} {r['M']:5d} {r['tflops']:8.1f} "
                f"{r['ref_tflops']:8.1f} {r['pct_of_ref']:6.1f} "
                f"{'yes' if r['verified'] else 'NO':>3s} {r['regs']!s:>4s} "
                f"{r['local_bytes']!s:>5s}")
        bad = [r for r in rs if "error" in r or (r.get("stage") == "check"
                                                 and not r.get("verified"))]
        for r in bad[:1]:
            what = r.get("error") or (f"wrong at {r['M']}x{r['N']}x{r['K']} "
                                      f"(rel_err {r.get('rel_err')})")
            say(f"{name:18s} {changes:34s} {r.get('stage', '')}: {what[:90]}")


if __name__ == "__main__":
    sys.exit(main())

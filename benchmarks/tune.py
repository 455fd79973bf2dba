"""Check and time every level, then try tile variants of the fast levels (GPU machine).

    python benchmarks/tune.py [--quick] [--out DIR]
    python benchmarks/tune.py --smoke  # CI: arguments and the variants, no GPU

Runs in one process through the runner's own Bench (same timing and verification as
`gemmscope bench`). Prints a correctness table, a 4096^3 table and a variants table last;
writes every result as JSON lines to DIR/tune.jsonl. Variants that fail verification or
compilation are reported, never ranked.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import _smoke
from _args import level_ids, square_size

from gemmscope.kernels.device.gpu import device_info
from gemmscope.kernels.device.telemetry import Nvml, Sampler
from gemmscope.kernels.engine.measure import Bench, wall_clock
from gemmscope.kernels.ladder import registry

CHECK_SHAPES = [(1, 1, 1), (7, 13, 5), (100, 100, 100), (1000, 999, 1001), (1000, 1000, 1000),
                (4097, 4097, 4097), (4099, 17, 515), (17, 4099, 515)]


# Variants around the registry's choices (the history of all rounds: docs/perf-notes.md).
B256T = dict(BN=256, WM=64, WN=64, WMITER=4, WNITER=2)  # 128x256 tile, 16x8 per thread
T128 = dict(BN=128, WM=32, WN=64, WMITER=2, WNITER=2, MINB=2)  # 8x8 per thread, 2 blocks/SM
VARIANTS = {
    "warp_tiling": [dict(BN=128, WM=32, WN=64, WMITER=2, WNITER=2, MINB=2),
                    dict(BN=256, WM=64, WN=64, WMITER=2, WNITER=4)],
    "cp_async": [{"GM": 4}, {"STAGES": 4}, {"STAGES": 2}, {"BK": 8, "STAGES": 6},
                 {"BK": 32, "STAGES": 2}, {**T128, "BK": 16, "STAGES": 3}],
    "wmma": [{"BK": 32}, {"STAGES": 2}, {"STAGES": 4}, dict(BN=256, WM=64, WN=64)],
    "mma_sync": [dict(BK=128, STAGES=2), {"GM": 2}, dict(BK=32, STAGES=6),
                 dict(BN=128, STAGES=3), {"WN": 32}, {"GM": 8}],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=".")
    ap.add_argument("--size", type=square_size, default=4096)
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--only", type=level_ids(), default=[],
                    help="comma-separated levels to time (default all)")
    ap.add_argument("--check-only", type=level_ids(), default=[],
                    help="levels to check (default all)")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.smoke:
        only = args.only
        _smoke.level_variants([*((lv.id, {}) for lv in registry.ladder() + registry.references()
                                 if not only or lv.id in only),
                               *((lid, v) for lid, vs in VARIANTS.items() for v in vs
                                 if not only or lid in only)])
        return _smoke.needs_gpu()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = (out / "tune.jsonl").open("w")
    dev = device_info()
    clock = wall_clock()
    nvml = Nvml()
    sampler = Sampler(nvml, None, clock, hz=20)
    sampler.start()
    bench = Bench(dev, clock, sampler)
    print(f"device: {dev.name}, {dev.sm_count} SMs, cupy {dev.cupy}", flush=True)
    levels = registry.ladder()
    if args.only:
        levels = [lv for lv in levels if lv.id in args.only]

    def run(level: registry.Level, M: int, N: int, K: int, repeats: int, tag: str = "") -> dict:
        t = time.time()
        try:
            # times only: the energy window (a second per run) is for recordings
            r = bench.run(level, M, N, K, repeats=repeats, warmup=2 if repeats > 2 else 0,
                          energy=False)
        except Exception as exc:
            r = {"level": level.id, "M": M, "N": N, "K": K, "error": repr(exc)[:300],
                 "trace": traceback.format_exc()[-800:]}
            if "cudaError" in repr(exc) or "CUDA" in type(exc).__name__:
                print(f"FATAL CUDA error in {level.id} {tag}: {exc}", flush=True)
                log.write(json.dumps({**r, "tag": tag}) + "\n")
                log.flush()
                raise
        r["tag"] = tag
        r["params"] = level.params
        r["wall_s"] = round(time.time() - t, 2)
        log.write(json.dumps(r) + "\n")
        log.flush()
        return r

    failures = []
    if not args.skip_check:
        print("\n== correctness ==", flush=True)
        for lv in [*levels, *registry.references()]:
            if args.check_only and lv.id not in args.check_only:
                continue
            for (M, N, K) in CHECK_SHAPES[: 4 if args.quick else None]:
                r = run(lv, M, N, K, repeats=1, tag="check")
                ok = r.get("verified")
                if not ok:
                    failures.append(r)
                print(f"{lv.id:14s} {M}x{N}x{K:<6} {r.get('variant', '-'):7s} "
                      f"err={r.get('rel_err')} ok={ok} {r.get('error', '')}", flush=True)

    S = args.size
    print(f"\n== {S}^3 ==", flush=True)
    main_rows = []
    for lv in [*registry.references(), *levels]:
        r = run(lv, S, S, S, repeats=10 if lv.id in ("naive",) else 20, tag="main")
        main_rows.append(r)
        print(f"{lv.id:14s} {r.get('tflops', 0):8.2f} TFLOPS  regs={r.get('regs')} "
              f"ok={r.get('verified')} clk={r.get('sm_clock_mhz_avg')} {r.get('error', '')}",
              flush=True)
    var_rows = []
    if not args.quick:
        print("\n== variants ==", flush=True)
        for lid, vs in VARIANTS.items():
            if args.only and lid not in args.only:
                continue
            base = registry.get(lid)
            for v in vs:
                lv = base.with_params(v)
                r = run(lv, S, S, S, repeats=20, tag="variant")
                if r.get("verified"):
                    r2 = run(lv, 1000, 999, 1001, repeats=1, tag="variant-check")
                    r["edge_ok"] = r2.get("verified")
                var_rows.append((lid, v, r))
                print(f"{lid:12s} {v}: {r.get('tflops', 0):.2f} TFLOPS regs={r.get('regs')} "
                      f"ok={r.get('verified')} edge={r.get('edge_ok')} {r.get('error', '')}",
                      flush=True)
    sampler.stop()
    print("\n== summary ==")
    refs = {r["level"]: r.get("tflops") for r in main_rows if r["level"].startswith("cublas")}
    for r in main_rows:
        ref = refs.get(registry.REFERENCE_FOR[registry.get(r["level"]).precision])
        pct = 100 * r.get("tflops", 0) / ref if ref else float("nan")
        print(f"{r['level']:14s} {r.get('tflops', 0):8.2f} TFLOPS {pct:6.1f}% "
              f"med={r.get('median_ms', 0):.3f}ms q1-q3={r.get('q1_ms', 0):.3f}-"
              f"{r.get('q3_ms', 0):.3f} regs={r.get('regs')} ok={r.get('verified')}")
    for lid, v, r in var_rows:
        print(f"  {lid:12s} {json.dumps(v):60s} {r.get('tflops', 0):8.2f} ok={r.get('verified')}"
              f"/{r.get('edge_ok')} regs={r.get('regs')}")
    print(f"correctness failures: {len(failures)}")
    for f in failures:
        print("  FAIL", f["level"], f["M"], f["N"], f["K"], f.get("rel_err"), f.get("error"))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())

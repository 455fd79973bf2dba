"""Check and time the Hopper levels and their references, each group in its own process.

    python benchmarks/hopper_bench.py [--out DIR] [--sizes 4096,8192] [--variants]
                                      [--only wgmma_tma,...] [--repeats 20]
    python benchmarks/hopper_bench.py --smoke  # CI: arguments and the table, no GPU

A wgmma kernel that faults leaves a sticky CUDA error that poisons its process, so every
(level, parameters) group runs in a child process (``--child``) through the runner's own
Bench (same verification and timing as ``gemmscope bench``): first the check shapes
(odd shapes the level accepts; refused ones are listed with the reason), then the timed
sizes. Prints a table last and writes every result to DIR/hopper_bench.jsonl.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _smoke
from _args import count, level_ids, square_sizes

CHECK_SHAPES = [(1, 1, 1), (7, 13, 5), (100, 100, 100), (1000, 999, 1001), (1000, 1000, 1000),
                (1000, 999, 1024), (1000, 1000, 1024), (4099, 4104, 512), (4099, 17, 512),
                (17, 4099, 512), (256, 256, 128), (4099, 4097, 4096)]
LEVELS = ["cublas_bf16", "wgmma_tma", "cublaslt_fp8", "fp8_block_scaled"]
VARIANTS: dict[str, list[dict[str, int]]] = {
    "wgmma_tma": [{"EPI": 0}, {"KPIPE": 0}, {"GM": 8}],
    "fp8_block_scaled": [{"EPI": 0}, {"BN": 256, "STAGES": 4, "KPIPE": 0}, {"GM": 8}],
}


def child(level_id: str, params: dict[str, int] | None, sizes: list[int], repeats: int,
          check: bool) -> None:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, Refused, refusal, wall_clock
    from gemmscope.kernels.ladder import registry

    dev = device_info()
    bench = Bench(dev, wall_clock())
    level = registry.get(level_id)
    if params:
        level = level.with_params(params)
    shapes = (CHECK_SHAPES if check else []) + [(s, s, s) for s in sizes]
    for i, (M, N, K) in enumerate(shapes):
        timed = i >= (len(CHECK_SHAPES) if check else 0)
        out: dict[str, Any] = {"level": level_id, "params": params or {}, "M": M, "N": N,
                               "K": K, "timed": timed}
        why = refusal(level, M, N, K, dev)
        if why is not None:
            out["refused"] = str(why)
        else:
            try:
                r = bench.run(level, M, N, K, repeats=repeats if timed else 2, warmup=2,
                              params=level.params if params else None, energy=False)
                out.update({k: r.get(k) for k in ("tflops", "median_ms", "verified",
                                                  "rel_err", "deepgemm_diff", "regs",
                                                  "local_bytes", "smem_bytes", "variant")})
            except Refused as exc:
                out["refused"] = str(exc)
        print("RESULT " + json.dumps(out), flush=True)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'level':<19} {'params':<27} {'shape':<16}   TFLOPS  ok   rel_err   dg_diff   "
             "regs"]
    for r in rows:
        shape = f"{r['M']}x{r['N']}x{r['K']}"
        p = ",".join(f"{k}={v}" for k, v in r["params"].items())
        if "refused" in r:
            lines.append(f"{r['level']:<19} {p:<27} {shape:<16} refused: {r['refused'][:60]}")
            continue
        tf = r.get("tflops")
        tf_s = f"{tf:8.1f}" if tf and r["timed"] else "       -"
        dg = r.get("deepgemm_diff")
        ok = "Y" if r.get("verified") else "N"
        lines.append(f"{r['level']:<19} {p:<27} {shape:<16} {tf_s}  {ok}  "
                     f"{(r.get('rel_err') or 0):.2e}  "
                     f"{(dg if dg is not None else float('nan')):.1e}  {r.get('regs')}")
    return "\n".join(lines)


def made_up_rows(levels: list[str], sizes: list[int]) -> list[dict[str, Any]]:
    """A row per level and timed size as the children print them, made up (--smoke)."""
    return [{"level": lid, "params": {}, "M": n, "N": n, "K": n, "timed": True,
             "tflops": 500.0 + i, "median_ms": 2.0 * n ** 3 / (500.0 + i) / 1e9,
             "verified": True, "rel_err": 1e-3, "deepgemm_diff": None, "regs": 168}
            for i, lid in enumerate(levels) for n in sizes]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--sizes", type=square_sizes, default="4096,8192")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--only", type=level_ids(), default="")
    ap.add_argument("--repeats", type=count, default=20)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    _smoke.add_flag(ap)
    args = ap.parse_args()
    sizes = args.sizes
    if args.smoke:
        levels = args.only or LEVELS
        _smoke.level_variants([*((lid, {}) for lid in levels),
                               *((lid, p) for lid in levels for p in VARIANTS.get(lid, []))])
        _smoke.made_up(table(made_up_rows(levels, sizes)))
        return _smoke.needs_gpu()
    if args.child:
        spec = json.loads(args.child)
        child(spec["level"], spec["params"], sizes, args.repeats, spec["check"])
        return 0
    levels = args.only or LEVELS
    groups: list[tuple[str, dict[str, int] | None, bool]] = [
        (lid, None, not args.no_check) for lid in levels]
    if args.variants:
        groups += [(lid, p, False) for lid in levels for p in VARIANTS.get(lid, [])]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with (out_dir / "hopper_bench.jsonl").open("w") as log:
        for lid, params, check in groups:
            spec = json.dumps({"level": lid, "params": params, "check": check})
            cmd = [sys.executable, __file__, "--child", spec, "--sizes", ",".join(map(str, sizes)),
                   "--repeats", str(args.repeats)]
            t0 = time.time()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
                text, rc = proc.stdout, proc.returncode
                err = proc.stderr
            except subprocess.TimeoutExpired as exc:
                text = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
                rc, err = -1, "timeout"
            got = [json.loads(line[7:]) for line in text.splitlines() if line.startswith("RESULT ")]
            rows += got
            for r in got:
                log.write(json.dumps(r) + "\n")
            last = err.strip().splitlines()[-1:] if err else ""
            status = "ok" if rc == 0 else f"exit {rc}: {last}"
            print(f"# {lid} {params or ''}: {len(got)} results, {time.time() - t0:.0f} s, {status}",
                  flush=True)
            if rc != 0 and err:
                print(err[-3000:], flush=True)
    print("\n" + table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

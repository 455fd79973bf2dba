"""The TF32 level checked at odd and aligned shapes, then its variants timed in pairs with
cuBLAS TF32 (GPU machine; issue 42, the TF32 row).

    python benchmarks/tf32_variants.py [--variants base,st3,...] [-s 4096 -s 8192]
        [--pair-budget-s 2.5] [--no-check] [--json FILE]
    python benchmarks/tf32_variants.py --list   # the variants and what each changes
    python benchmarks/tf32_variants.py --smoke  # CI: the registry makes every variant

One runner process (``gemmscope bench``'s path, kernels/drive/session.py), so each level
is built once. Phase 1, unless --no-check: the level (and each variant asked, at the
first two shapes) at odd and aligned shapes against float64, and one K it must refuse
(K % 4 != 0), which must come back refused before launch. Phase 2: each variant at each
shape (default 4096^3 and 8192^3) as a paired burst with the level's reference
(cuBLAS TF32 on the same Bt; docs/protocol.md "Paired ratios"), then cuBLAS TF32 on B
(K x N, the NN call) alone. Phase 3, unless --no-nn: after the runner has exited, the
level (its registry parameters) paired with that NN call in this process
(kernels/engine/paired.py's run_paired on a Bench of its own): the issue's anchor is
"cuBLAS TF32", which users call with B as K x N. Variants are template-parameter changes
(``VARIANTS``: tile width, stages, block order, K pipelining, stream-K), so timing one
more configuration is one more line there, and all of them run in one call.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import _smoke
from _args import shape

LEVEL = "tf32_wgmma"
# name -> parameter changes over the registry's (BM 128, BN 256, BK 32, STAGES 4,
# CONSUMERS 2, GM 16, KPIPE 1, SK 0); each fits the 227 KB of shared memory a block may have
VARIANTS: dict[str, dict[str, int]] = {
    "base": {},
    "st3": {"STAGES": 3},  # fewer stages in flight (144 KB)
    "gm8": {"GM": 8},  # the block order wgmma_stream_k uses
    "kpipe0": {"KPIPE": 0},  # wait for each K step's wgmmas before freeing its stage
    "sk2": {"SK": 2},  # stream-K for the partial last wave (8192^3: 15.5 waves)
    "bn192": {"BN": 192, "STAGES": 5},  # 40 KB stages, a narrower tile
    "bn128": {"BN": 128, "STAGES": 6},  # 32 KB stages, six of them
}
DEFAULT_VARIANTS = ("base", "st3", "gm8", "kpipe0", "sk2", "bn192")
# odd shapes: ragged M and N (partial tiles), N odd (element stores) and N % 4 != 0, K a
# multiple of 4 but not of BK = 32 (a partly filled last K step), tiny and one-tile ones
CHECK_SHAPES = [(7, 13, 4), (1000, 999, 1004), (4099, 17, 516), (129, 264, 388),
                (1, 1, 36), (384, 2112, 1024), (4096, 4096, 4096)]
REFUSED_SHAPE = (1000, 1000, 1001)  # K % 4 != 0: the TMA row pitch
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]
NN_REFERENCE = "cublas_tf32"  # cuBLAS TF32 with B as K x N (the ladder's layout)


def chosen(names: str) -> dict[str, dict[str, int]]:
    """An argparse ``type``: the named variants, in order; a name not in VARIANTS, or none
    at all, is refused by argparse in one line (exit 2)."""
    picked = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in picked if n not in VARIANTS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown variant(s) {', '.join(map(repr, unknown))}; known: {', '.join(VARIANTS)}")
    if not picked:
        raise argparse.ArgumentTypeError(f"name at least one variant of {', '.join(VARIANTS)}")
    return {n: VARIANTS[n] for n in picked}


def check_variants(variants: dict[str, dict[str, int]]) -> list[str]:
    """Each variant as the registry makes it, and its shared memory against the H100/H200's
    227 KB per block; the problems found (none: every variant can be built)."""
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.ladder.fp8_deep_level import SMEM_PER_BLOCK

    base = registry.get(LEVEL)
    problems = []
    for name, changes in variants.items():
        level = base.with_params(changes)
        smem = level.dyn_smem_bytes()
        if smem > SMEM_PER_BLOCK:
            problems.append(f"{name}: {smem} bytes of shared memory > {SMEM_PER_BLOCK}")
    return problems


def requests(variants: dict[str, dict[str, int]], shapes: list[tuple[int, int, int]],
             check: bool, budget_s: float) -> list[Any]:
    """The runs, in order: checks (unpaired, one repeat), then per shape each variant
    paired with the reference, then cuBLAS TF32 (NN) alone; no energy windows (a second
    each, and only the ratios are wanted here)."""
    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.protocol.plan import RunRequest

    runs = []
    if check:
        first = dict(list(variants.items())[:1])
        for M, N, K in CHECK_SHAPES:
            runs.append(RunRequest(LEVEL, Shape(M, N, K), 1, warmup=0, compare=False, energy_s=0))
        for name, changes in variants.items():
            if name in first or not changes:
                continue
            for M, N, K in CHECK_SHAPES[1:3]:
                runs.append(RunRequest(LEVEL, Shape(M, N, K), 1, warmup=0, compare=False,
                                       params=changes, energy_s=0))
        M, N, K = REFUSED_SHAPE
        runs.append(RunRequest(LEVEL, Shape(M, N, K), 1, warmup=0, compare=False, energy_s=0))
    for M, N, K in shapes:
        for changes in variants.values():
            runs.append(RunRequest(LEVEL, Shape(M, N, K), 1000, pair_budget_s=budget_s,
                                   params=changes or None, energy_s=0))
        runs.append(RunRequest(NN_REFERENCE, Shape(M, N, K), 50, compare=False, energy_s=0))
    return runs


def variant_name(params: dict[str, int] | None, variants: dict[str, dict[str, int]]) -> str:
    from gemmscope.kernels.ladder import registry

    base = registry.get(LEVEL).params
    for name, changes in variants.items():
        if {**base, **changes} == {**base, **(params or {})}:
            return name
    return "?"


def rows_of(events: list[Any], variants: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    from gemmscope.kernels.protocol.records import Error, Result

    rows = []
    for e in events:
        if isinstance(e, Result):
            rows.append({"level": e.level, "variant": variant_name(e.params, variants)
                         if e.level == LEVEL else "-", "shape": f"{e.M}x{e.N}x{e.K}",
                         "tflops": e.tflops, "verified": e.verified, "rel_err": e.rel_err,
                         "paired": bool(e.paired), "pct": e.pct_of_reference,
                         "ci": (e.pct_ci_low, e.pct_ci_high), "stop": e.stop_reason,
                         "pairs": e.pairs, "reference": e.reference,
                         "regs": e.regs, "clock": e.sm_clock_mhz_avg})
        elif isinstance(e, Error):
            rows.append({"level": e.level, "variant": variant_name(e.params, variants)
                         if e.level == LEVEL else "-", "shape": f"{e.M}x{e.N}x{e.K}",
                         "error": e.kind, "message": e.message[:160]})
    return rows


def nn_rows(shapes: list[tuple[int, int, int]], budget_s: float) -> list[dict[str, Any]]:
    """The level paired with cuBLAS TF32 NN, in this process, at each shape."""
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.engine.paired import run_paired
    from gemmscope.kernels.ladder import registry

    level, nn = registry.get(LEVEL), registry.get(NN_REFERENCE)
    rows = []
    bench = None
    for M, N, K in shapes:
        shape = f"{M}x{N}x{K}"
        try:
            bench = bench or Bench(device_info(), wall_clock())
            _ref, r = run_paired(bench, level, nn, M, N, K, 200, 3, budget_s, energy=False)
        except Exception as exc:  # reported as a row; the table still prints
            rows.append({"level": LEVEL, "variant": "base/NN", "shape": shape,
                         "error": type(exc).__name__, "message": str(exc)[:160]})
            continue
        rows.append({"level": LEVEL, "variant": "base/NN", "shape": shape,
                     "tflops": r["tflops"], "verified": r["verified"], "rel_err": r["rel_err"],
                     "paired": True, "pct": r["pct_of_reference"],
                     "ci": (r["pct_ci_low"], r["pct_ci_high"]), "stop": r["stop_reason"],
                     "pairs": r["pairs"], "reference": NN_REFERENCE, "regs": r.get("regs"),
                     "clock": r.get("sm_clock_mhz_avg")})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'level':<16} {'variant':<8} {'shape':<16} {'TFLOPS':>8} {'ok':>3} "
            f"{'rel_err':>9} {'% ref':>7} {'95% interval':>15} {'stop':>9} {'regs':>4}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['level']:<16} {r['variant']:<8} {r['shape']:<16} "
                         f"{r['error']}: {r['message']}")
            continue
        pct = f"{r['pct']:7.2f}" if r.get("pct") is not None else f"{'-':>7}"
        lo, hi = r.get("ci") or (None, None)
        ci = f"[{lo:.1f},{hi:.1f}]" if lo is not None and hi is not None else "-"
        err = f"{r['rel_err']:.2e}" if r.get("rel_err") is not None else "-"
        lines.append(f"{r['level']:<16} {r['variant']:<8} {r['shape']:<16} "
                     f"{r['tflops']:8.1f} {'yes' if r['verified'] else 'NO':>3} {err:>9} "
                     f"{pct} {ci:>15} {r.get('stop') or '-'!s:>9} "
                     f"{r.get('regs') or '-'!s:>4}")
    lines.append("% ref: the level's paired % of its reference (cuBLAS TF32, B as Bt) with "
                 "the interval; cublas_tf32 rows: the NN call alone; base/NN rows: the level "
                 "paired with that NN call")
    return "\n".join(lines)


MADE_UP_ROWS = [
    {"level": LEVEL, "variant": "base", "shape": "7x13x4", "tflops": 0.0, "verified": True,
     "rel_err": 3.1e-4, "paired": False, "pct": None, "ci": (None, None), "stop": None,
     "regs": 168},
    {"level": LEVEL, "variant": "base", "shape": "1000x1000x1001", "error": "refused",
     "message": "tf32_wgmma needs K to be a multiple of 4 (...); K=1001"},
    {"level": LEVEL, "variant": "sk2", "shape": "8192x8192x8192", "tflops": 300.0,
     "verified": True, "rel_err": 7.0e-4, "paired": True, "pct": 95.0, "ci": (94.5, 95.4),
     "stop": "precision", "regs": 168},
    {"level": LEVEL, "variant": "base/NN", "shape": "4096x4096x4096", "tflops": 390.0,
     "verified": True, "rel_err": 7.0e-4, "paired": True, "pct": 97.0, "ci": (96.5, 97.4),
     "stop": "budget", "regs": 168},
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", type=chosen, default=",".join(DEFAULT_VARIANTS),
                    help=f"comma-separated names (default {','.join(DEFAULT_VARIANTS)})")
    ap.add_argument("-s", "--size", action="append", type=shape, metavar="N|MxNxK",
                    help="timed shape(s) (default 4096 and 8192)")
    ap.add_argument("--pair-budget-s", type=float, default=2.5,
                    help="wall seconds of each variant-reference loop (default 2.5)")
    ap.add_argument("--no-check", action="store_true", help="skip phase 1")
    ap.add_argument("--no-nn", action="store_true", help="skip phase 3 (pairs with NN)")
    ap.add_argument("--list", action="store_true", help="print the variants and exit")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON lines")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    variants = args.variants
    if args.list:
        for name, changes in VARIANTS.items():
            print(f"{name:8s} {json.dumps(changes)}")
        return 0
    problems = check_variants(variants)
    if problems:
        raise SystemExit("variants that cannot be built: " + "; ".join(problems))
    shapes = args.size or SHAPES
    runs = requests(variants, shapes, not args.no_check, args.pair_budget_s)
    if args.smoke:
        _smoke.level_variants((LEVEL, c) for c in variants.values())
        print(f"smoke: {len(runs)} runs planned")
        _smoke.made_up(table(MADE_UP_ROWS))
        return _smoke.needs_gpu()
    from gemmscope.kernels.drive.session import RunnerSession, default_runner_command

    t0 = time.monotonic()
    session = RunnerSession(lambda _e: None, default_runner_command(50), watchdog_s=600)
    try:
        session.wait_ready()
        events = session.run(runs)
    finally:
        session.close()
    rows = rows_of(list(events), variants)
    print(table(rows), flush=True)
    if not args.no_nn:
        nn = nn_rows(shapes, args.pair_budget_s)
        rows += nn
        print(table(nn))
    print(f"{len(runs)} runs in {time.monotonic() - t0:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    # exit 0: every result verified, and the one refusal asked for the only error
    wrong = [r for r in rows if r.get("verified") is False]
    failed = [r for r in rows if "error" in r]
    expected = ([{"error": "refused", "shape": "x".join(map(str, REFUSED_SHAPE))}]
                if not args.no_check else [])
    return 1 if wrong or [{k: r[k] for k in ("error", "shape")} for r in failed] != expected \
        else 0


if __name__ == "__main__":
    sys.exit(main())

"""What TF32 costs in accuracy, measured: the TF32 level, cuBLAS TF32 and cuBLAS FP32
against a float64 product of the same FP32 inputs, at several K (GPU machine; issue 42
item 4).

    python benchmarks/tf32_accuracy.py [-k 1024 -k 4096 -k 16384] [--mn 2048]
        [--operands uniform|normal] [--no-map-experiment] [--json FILE]
    python benchmarks/tf32_accuracy.py --smoke  # CI: the emulations on the CPU, no GPU

For each K, fresh A (M x K) and Bt (N x K) in FP32; every row multiplies exactly these
values (cuBLAS on B = Bt transposed, as the NN call takes it, and on Bt itself). Three
errors of C against the float64 product R:

- rel: ||C - R|| / ||R|| (Frobenius), what the ladder's verification bounds
  (kernels/engine/operands.py; the TF32 tolerance is 5e-3);
- max, mean: of |C - R| / (|A| |B|) element by element, the error in units of the sum of
  the products' magnitudes (what a rounding-error bound is written in), defined wherever
  |R| may be near zero.

Two rows are emulations, not runs: the float64 product of the inputs with their 13 low
mantissa bits dropped, and rounded to nearest (to 10 bits, ties to even). "nearest" says
which of the two a GPU row is closer to (||C - E|| / ||E||, with that distance): how the
hardware reads an FP32 value as TF32. With the map experiment (default on; after the
main table, so a failure there loses nothing) the level also runs with its operands'
tensor maps of the driver's TFLOAT32 type instead of FLOAT32.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import _smoke

EMULATIONS = ("TF32 dropped (emulated)", "TF32 rounded (emulated)")
LEVEL = "tf32_wgmma"
GPU_ROWS = (LEVEL, "cublas_tf32_bt", "cublas_tf32", "cublas_fp32")


def tf32_dropped(x: Any, xp: Any) -> Any:
    """FP32 ``x`` with its 13 low mantissa bits cleared (numpy or CuPy)."""
    return (x.view(xp.uint32) & xp.uint32(0xFFFFE000)).view(xp.float32)


def tf32_rounded(x: Any, xp: Any) -> Any:
    """FP32 ``x`` rounded to a 10-bit mantissa, ties to even (finite values)."""
    u = x.view(xp.uint32).astype(xp.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(xp.uint32).view(xp.float32)


def errors(c: Any, ref: Any, bound: Any, xp: Any) -> dict[str, float]:
    """rel (Frobenius), and max and mean of |C - R| / (|A| |B|)."""
    diff = xp.abs(c.astype(xp.float64) - ref)
    scaled = diff / xp.maximum(bound, xp.finfo(xp.float64).tiny)
    return {"rel": float(xp.linalg.norm(diff) / xp.linalg.norm(ref)),
            "max": float(scaled.max()), "mean": float(scaled.mean())}


def nearest(c: Any, emulated: dict[str, Any], xp: Any) -> tuple[str, float]:
    """The emulation C is closest to, and ||C - E|| / ||E||."""
    dist = {name: float(xp.linalg.norm(c.astype(xp.float64) - e) / xp.linalg.norm(e))
            for name, e in emulated.items()}
    name = min(dist, key=dist.__getitem__)
    return name.split(" (")[0].replace("TF32 ", ""), dist[name]


def draw(shape: tuple[int, int], operands: str, xp: Any, rng: Any) -> Any:
    if operands == "normal":
        return rng.standard_normal(shape, dtype=xp.float32)
    return rng.random(shape, dtype=xp.float32) * 2 - 1


def emulated_rows(a: Any, bt: Any, xp: Any) -> tuple[Any, Any, dict[str, Any]]:
    """R, the bound |A| |B| and the two emulations' products (float64)."""
    a64, b64 = a.astype(xp.float64), bt.astype(xp.float64)
    ref = a64 @ b64.T
    bound = xp.abs(a64) @ xp.abs(b64).T
    emulated = {
        EMULATIONS[0]: tf32_dropped(a, xp).astype(xp.float64)
        @ tf32_dropped(bt, xp).astype(xp.float64).T,
        EMULATIONS[1]: tf32_rounded(a, xp).astype(xp.float64)
        @ tf32_rounded(bt, xp).astype(xp.float64).T}
    return ref, bound, emulated


def row(name: str, K: int, errs: dict[str, float], near: tuple[str, float] | None
        ) -> dict[str, Any]:
    return {"row": name, "K": K, **errs,
            "nearest": near[0] if near else None, "distance": near[1] if near else None}


def table(rows: list[dict[str, Any]], M: int, N: int, operands: str) -> str:
    head = (f"{'':<30} {'K':>6} {'rel (Frobenius)':>15} {'max |C-R|/(|A||B|)':>19} "
            f"{'mean':>9} {'nearest':>16}")
    lines = [f"M = {M}, N = {N}, operands {operands}; R = float64 product of the same FP32 "
             "inputs", head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['row']:<30} {r['K']:>6} {r['error']}")
            continue
        near = f"{r['nearest']} {r['distance']:.0e}" if r.get("nearest") else "-"
        lines.append(f"{r['row']:<30} {r['K']:>6} {r['rel']:15.2e} {r['max']:19.2e} "
                     f"{r['mean']:9.2e} {near:>16}")
    return "\n".join(lines)


def smoke(ks: list[int], operands: str) -> int:
    """The emulations and the error measures on the CPU (numpy) at M = N = 64: a real
    computation of what dropping or rounding the low bits costs, no GPU rows."""
    import numpy as np

    rng = np.random.default_rng(0)
    M = N = 64
    rows = []
    for K in ks:
        a, bt = draw((M, K), operands, np, rng), draw((N, K), operands, np, rng)
        ref, bound, emulated = emulated_rows(a, bt, np)
        for name, e in emulated.items():
            rows.append(row(name, K, errors(e, ref, bound, np), None))
        fp32 = (a @ bt.T).astype(np.float32)  # numpy's FP32 product, not cuBLAS
        rows.append(row("numpy FP32", K, errors(fp32, ref, bound, np),
                        nearest(fp32, emulated, np)))
    print("smoke: numpy on the CPU (emulations and numpy FP32 only; the GPU rows need a GPU)")
    print(table(rows, M, N, operands))
    return _smoke.needs_gpu()


def map_type_launch(level: Any, ops: Any, map_dtype: str) -> Any:
    """The level's launch with its A and Bt maps of ``map_dtype`` ("tf32": the driver's
    TFLOAT32), as measure.py's TMA launcher makes it otherwise (no stream-K)."""
    from gemmscope.kernels.device import hopper
    from gemmscope.kernels.device.gpu import require_cupy
    from gemmscope.kernels.toolchain import nvrtc

    cp = require_cupy()
    M, N, K = ops.shape
    built = nvrtc.compile_level(level)
    kernel = built.kernels[True]
    smem = level.dyn_smem_bytes()
    kernel.max_dynamic_shared_size_bytes = smem
    geo = level.launch_geometry()
    (rows, cols), bk = geo.tile, geo.k_tile
    maps = [hopper.encode(hopper.TiledMap(ops.a.data.ptr, map_dtype, M, K, rows, bk)),
            hopper.encode(hopper.TiledMap(ops.b.data.ptr, map_dtype, N, K, cols, bk))]
    grid = level.grid(M, N, int(cp.cuda.Device().attributes["MultiProcessorCount"]))
    args = [hopper.int32(M), hopper.int32(N), hopper.int32(K), *maps, hopper.blank_map(),
            hopper.pointer(ops.c.data.ptr), hopper.int32(0), hopper.pointer(0),
            hopper.pointer(0)]

    def run() -> None:
        hopper.launch(cp.cuda.driver, kernel.kernel.ptr, grid, (*geo.block, 1), smem,
                      cp.cuda.get_current_stream().ptr, args)

    return run


def measure(ks: list[int], M: int, N: int, operands: str, experiment: bool
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from gemmscope.kernels.device.gpu import require_cupy
    from gemmscope.kernels.engine.measure import level_launcher
    from gemmscope.kernels.engine.operands import Operands
    from gemmscope.kernels.engine.reference_launch import reference_launcher
    from gemmscope.kernels.ladder import registry

    cp = require_cupy()
    rng = cp.random.default_rng(42)
    level = registry.get(LEVEL)
    rows: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    kept = []
    for K in ks:
        a, bt = draw((M, K), operands, cp, rng), draw((N, K), operands, cp, rng)
        b = cp.ascontiguousarray(bt.T)  # K x N for the NN calls: the same values
        ref, bound, emulated = emulated_rows(a, bt, cp)
        for name, e in emulated.items():
            rows.append(row(name, K, errors(e, ref, bound, cp), None))
        for name in GPU_ROWS:
            lv = registry.get(name)
            c = cp.full((M, N), cp.nan, cp.float32)
            ops = (Operands(a, bt, c, "fp32", "fp32", "nk") if lv.b_layout == "nk"
                   else Operands(a, b, c, "fp32", "fp32", "kn"))
            try:
                if lv.library is None:
                    launch, _info = level_launcher(lv, ops)
                else:
                    launch, _info = reference_launcher(lv, ops, cp.cuda.get_current_stream().ptr)
                launch()
                cp.cuda.runtime.deviceSynchronize()
                rows.append(row(name, K, errors(c, ref, bound, cp), nearest(c, emulated, cp)))
            except Exception as exc:  # a row that cannot run says why; the others go on
                rows.append({"row": name, "K": K, "error": f"{type(exc).__name__}: {exc}"[:120]})
        if experiment:
            kept.append((K, a, bt))
        print(f"K = {K} done", file=sys.stderr, flush=True)
    print(table(rows, M, N, operands), flush=True)
    for K, a, bt in kept:  # after the main table: a fault here loses nothing printed
        ref, bound, emulated = emulated_rows(a, bt, cp)
        c = cp.full((M, N), cp.nan, cp.float32)
        name = f"{LEVEL}, TFLOAT32 maps"
        try:
            map_type_launch(level, Operands(a, bt, c, "fp32", "fp32", "nk"), "tf32")()
            cp.cuda.runtime.deviceSynchronize()
            extra.append(row(name, K, errors(c, ref, bound, cp), nearest(c, emulated, cp)))
        except Exception as exc:
            extra.append({"row": name, "K": K, "error": f"{type(exc).__name__}: {exc}"[:120]})
            break
    if extra:
        print("\nthe map experiment: the same level, its A and Bt maps of the driver's "
              "TFLOAT32 type")
        print(table(extra, M, N, operands))
    return rows, extra


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", "--k", action="append", type=int, metavar="K",
                    help="K (a multiple of 4), repeatable (default 1024, 4096, 16384)")
    ap.add_argument("--mn", type=int, default=2048, help="M = N (default 2048)")
    ap.add_argument("--operands", choices=("uniform", "normal"), default="uniform")
    ap.add_argument("--no-map-experiment", action="store_true",
                    help="skip the TFLOAT32 tensor-map rows")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON lines")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    ks = args.k or [1024, 4096, 16384]
    if any(k < 4 or k % 4 or k > 65536 for k in ks) or not 1 <= args.mn <= 16384:
        ap.error("each K must be a multiple of 4 from 4 to 65536, and --mn 1 to 16384")
    if args.smoke:
        return smoke([k for k in ks if k <= 4096] or [1024], args.operands)
    rows, extra = measure(ks, args.mn, args.mn, args.operands, not args.no_map_experiment)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            for r in [*rows, *extra]:
                f.write(json.dumps(r) + "\n")
    level_rows = [r for r in rows if r["row"] == LEVEL]
    from gemmscope.kernels.ladder.registry import TOLERANCE, Precision

    ok = level_rows and all("error" not in r and r["rel"] <= TOLERANCE[Precision.TF32]
                            for r in level_rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

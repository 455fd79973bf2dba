"""Launch one level once, outside the runner: for profilers (ncu) and quick checks.

    python -m gemmscope.kernels.launch LEVEL M N K [--params '{"BK": 16}']

Compiles the level, fills the inputs with random values, launches the kernel once
(after one untimed warm-up launch, so a profiler that skips the first sees the second)
and checks the result against a float64 product. Exit code 0 when it verified.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from gemmscope.kernels import build, registry
from gemmscope.kernels.gpu import require_cupy
from gemmscope.kernels.registry import TOLERANCE, Kind, Precision


def run_once(level_id: str, M: int, N: int, K: int, params: dict[str, int] | None = None,
             launches: int = 1) -> dict[str, Any]:
    cp = require_cupy()
    level = registry.get(level_id)
    if level.kind is not Kind.LEVEL:
        raise ValueError(f"{level_id} is a reference, not a level")
    a = cp.random.random((M, K), dtype=cp.float32) * 2 - 1
    b = cp.random.random((K, N), dtype=cp.float32) * 2 - 1
    if level.precision is Precision.FP16:
        a, b = a.astype(cp.float16), b.astype(cp.float16)
    c = cp.full((M, N), cp.nan, dtype=cp.float32)
    built = build.compile_level(level, params)
    vec = level.use_vector_path(M, N, K)
    args = (np.int32(M), np.int32(N), np.int32(K), a, b, c)
    for _ in range(launches):
        built.kernels[vec](level.grid(M, N), (*level.threads, 1), args,
                           shared_mem=level.dyn_smem_bytes(built.params))
    cp.cuda.runtime.deviceSynchronize()
    ref = a.astype(cp.float64) @ b.astype(cp.float64)
    err = float(cp.linalg.norm(c.astype(cp.float64) - ref) / cp.linalg.norm(ref))
    return {"level": level_id, "M": M, "N": N, "K": K, "variant": "vector" if vec else "scalar",
            "rel_err": err, "verified": err <= TOLERANCE[level.precision],
            "kernel": built.kernels[vec].name if hasattr(built.kernels[vec], "name") else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gemmscope.kernels.launch")
    ap.add_argument("level")
    ap.add_argument("M", type=int)
    ap.add_argument("N", type=int)
    ap.add_argument("K", type=int)
    ap.add_argument("--params", type=json.loads, default=None)
    ap.add_argument("--launches", type=int, default=1)
    args = ap.parse_args(argv)
    out = run_once(args.level, args.M, args.N, args.K, args.params, args.launches)
    print(json.dumps(out))
    return 0 if out["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

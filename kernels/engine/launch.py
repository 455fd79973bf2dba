"""Launch one level once, outside the runner: for profilers (ncu) and quick checks.

    python -m gemmscope.kernels.engine.launch LEVEL M N K [--params '{"BK": 16}']
        [--one-block-per-sm]

Compiles the level, fills the inputs with random values, launches the kernel once
(after one untimed warm-up launch, so a profiler that skips the first sees the second)
and checks the result against a float64 product. Exit code 0 when it verified.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..device.gpu import require_cupy
from ..ladder import registry
from ..ladder.registry import Kind
from .measure import ONE_BLOCK_PER_SM_SMEM, level_launcher
from .operands import check, random_inputs


def run_once(level_id: str, M: int, N: int, K: int, params: dict[str, int] | None = None,
             launches: int = 1, one_block_per_sm: bool = False) -> dict[str, Any]:
    cp = require_cupy()
    level = registry.get(level_id)
    if level.kind is not Kind.LEVEL:
        raise ValueError(f"{level_id} is a reference, not a level")
    if params:
        level = level.with_params(params)
    ops = random_inputs(level, M, N, K)
    ops.poison()
    launch, info = level_launcher(level, ops, params and level.params,
                                  ONE_BLOCK_PER_SM_SMEM if one_block_per_sm else 0)
    for _ in range(launches):
        launch()
    cp.cuda.runtime.deviceSynchronize()
    acc = check(ops)
    return {"level": level_id, "M": M, "N": N, "K": K, "variant": info["variant"],
            "rel_err": acc.rel_err, "deepgemm_diff": acc.deepgemm_diff,
            "verified": acc.verified(level.precision),
            "kernel": info["kernel"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gemmscope.kernels.engine.launch")
    ap.add_argument("level")
    ap.add_argument("M", type=int)
    ap.add_argument("N", type=int)
    ap.add_argument("K", type=int)
    ap.add_argument("--params", type=json.loads, default=None)
    ap.add_argument("--launches", type=int, default=1)
    ap.add_argument("--one-block-per-sm", action="store_true",
                    help="launch with enough (unused) shared memory that blocks do not share "
                         "an SM")
    args = ap.parse_args(argv)
    out = run_once(args.level, args.M, args.N, args.K, args.params, args.launches,
                   args.one_block_per_sm)
    print(json.dumps(out))
    return 0 if out["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

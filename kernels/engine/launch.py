"""Launch one level once, outside the runner: for profilers (ncu) and quick checks.

    python -m gemmscope.kernels.engine.launch LEVEL M N K [--params '{"BK": 16}']
        [--over-shape-rule] [--one-block-per-sm] [--profiled-range]

Compiles the level, fills the inputs with random values, launches the kernel once
(after one untimed warm-up launch, so a profiler that skips the first sees the second)
and checks the result against a float64 product. Exit code 0 when it verified.

``--params`` are taken over the level's own parameters, as a run's ``--param`` is; a level
whose parameters are picked per shape (fp8_deep's KS, CL, RING) then runs with none of the
shape's picks. ``--over-shape-rule`` takes them over the shape's picks instead, to profile
one change to the launch a run of that shape makes (RING 1 at 4096x4096x7168 keeps CL 2
and KS 56).

A reference (cuBLAS, cuBLASLt) is launched the same way, its library call in place of a
kernel. With ``--profiled-range`` the launches are made between cudaProfilerStart and
cudaProfilerStop, after a warm-up call outside them, so that ``ncu --profile-from-start
off`` sees the library's kernels of that call and none of the random fill, the library's
first-call set-up or the float64 check (``record --ncu`` on a reference).

A user's kernel (docs/user-kernels.md) is launched by :func:`run_once` too, as the
runner launches it (``level_launch.level_launcher``, or ``triton_launch`` for Triton), from
the Level the runner makes of its kernel object: ``python -m
gemmscope.kernels.cli.user_launch ID M N K --kernel SPEC.toml`` reads the spec (with
msgspec, which the runner's modules never import) and makes that Level.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..device.gpu import require_cupy
from ..ladder import registry
from ..ladder.level import Level, Toolchain
from ..ladder.registry import Kind
from ..protocol.commands import MAX_DIM
from ..protocol.option_bounds import MAX_LAUNCHES, OneLineParser, OptionRefused, bounded
from .level_launch import ONE_BLOCK_PER_SM_SMEM, level_launcher
from .operands import check, random_inputs
from .reference_launch import reference_launcher
from .triton_launch import triton_launcher
from .user_kernels import LaunchRefused


def _profiler(cp: Any, start: bool) -> None:
    """cudaProfilerStart / Stop, by the name this CuPy gives them."""
    runtime = cp.cuda.runtime
    name = "profilerStart" if start else "profilerStop"
    if hasattr(runtime, name):
        getattr(runtime, name)()
    else:
        getattr(cp.cuda.profiler, "start" if start else "stop")()


def with_given_params(level: Level, M: int, N: int, K: int, params: dict[str, int],
                      sm_count: int | None = None) -> Level:
    """The level with ``params`` over its own parameters, or, given the SM count, over
    those its shape rule picks for M x N x K there (``--over-shape-rule``)."""
    if level.kind is not Kind.LEVEL:
        raise ValueError(f"{level.id} is a reference: it takes no parameters")
    if sm_count is not None:
        level = level.for_shape(M, N, K, sm_count)
    return level.with_params(params)


def run_once(level_id: str, M: int, N: int, K: int, params: dict[str, int] | None = None,
             launches: int = 1, one_block_per_sm: bool = False,
             profiled_range: bool = False, user: Level | None = None,
             over_shape_rule: bool = False) -> dict[str, Any]:
    """``user``: a user's kernel (the Level ``cli/user_launch.py`` makes, as the runner
    makes it) in place of a registry level, its parameters its own; LaunchRefused where
    it cannot run this shape. ``over_shape_rule``: ``params`` over the shape's picks."""
    cp = require_cupy()
    if user is not None:
        level = user
        why = level.shape_refusal(M, N, K)
        if why is not None:
            raise LaunchRefused(why)
    else:
        level = registry.get(level_id)
        if params:
            sms = (int(cp.cuda.Device().attributes["MultiProcessorCount"])
                   if over_shape_rule else None)
            level = with_given_params(level, M, N, K, params, sms)
    ops = random_inputs(level, M, N, K)
    if level.toolchain is Toolchain.TRITON:  # launches once to compile: poisoned after
        launch, info = triton_launcher(level, ops)
        info_kernel = info["kernel"]
    elif level.kind is Kind.LEVEL:
        launch, info = level_launcher(level, ops,
                                      dict(level.params) if user else params and level.params,
                                      ONE_BLOCK_PER_SM_SMEM if one_block_per_sm else 0)
        info_kernel = info["kernel"]
    else:
        launch, info = reference_launcher(level, ops, cp.cuda.get_current_stream().ptr)
        info_kernel = None  # the library's: ncu names it
    ops.poison()
    if profiled_range:
        launch()  # outside the range: the library's first call sets itself up
        cp.cuda.runtime.deviceSynchronize()
        _profiler(cp, True)
    for _ in range(launches):
        launch()
    cp.cuda.runtime.deviceSynchronize()
    if profiled_range:
        _profiler(cp, False)
    acc = check(ops)
    return {"level": level_id, "M": M, "N": N, "K": K, "variant": info["variant"],
            "rel_err": acc.rel_err, "deepgemm_diff": acc.deepgemm_diff,
            "verified": acc.verified(level.precision),
            "kernel": info_kernel,
            **({"params": dict(level.params)} if user is not None or params else {})}


def parser() -> OneLineParser:
    ap = OneLineParser(prog="python -m gemmscope.kernels.engine.launch")
    ap.add_argument("level")
    ap.add_argument("M", type=bounded(int, 1, MAX_DIM))
    ap.add_argument("N", type=bounded(int, 1, MAX_DIM))
    ap.add_argument("K", type=bounded(int, 1, MAX_DIM))
    ap.add_argument("--params", type=json.loads, default=None)
    ap.add_argument("--over-shape-rule", action="store_true",
                    help="take --params over the parameters the level's shape rule picks "
                         "for M N K (not over the level's own)")
    ap.add_argument("--launches", type=bounded(int, 1, MAX_LAUNCHES), default=1)
    ap.add_argument("--one-block-per-sm", action="store_true",
                    help="launch with enough (unused) shared memory that blocks do not share "
                         "an SM")
    ap.add_argument("--profiled-range", action="store_true",
                    help="make the launches between cudaProfilerStart and Stop, after a "
                         "warm-up call (for ncu --profile-from-start off)")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    try:  # every refusal, argparse's or this combination's, in one line (exit 2)
        args = ap.parse_or_refuse(argv)
        if args.over_shape_rule and not args.params:
            ap.error("--over-shape-rule: give --params to take over the shape's picks")
    except OptionRefused as exc:
        sys.stderr.write(exc.line + "\n")
        return 2
    out = run_once(args.level, args.M, args.N, args.K, args.params, args.launches,
                   args.one_block_per_sm, args.profiled_range,
                   over_shape_rule=args.over_shape_rule)
    print(json.dumps(out))
    return 0 if out["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Launch a user's kernel once, outside the runner: the program ncu profiles for ``record
--ncu-source`` (docs/user-kernels.md), and a quick check by hand::

    python -m gemmscope.kernels.cli.user_launch ID M N K --kernel SPEC.toml
        [--param BM=64 ...] [--sha256 HEX] [--one-block-per-sm]

The spec is read by the spec parser (``ladder/spec_file.py``: the bounds of every spec,
the source checked, only that file compiled), the variant (``--param`` over the defaults)
checked at this shape as ``record`` checks it before sending a run, and the run
command's ``kernel`` object made of it is checked by the runner's own ``from_wire`` and
turned into the runner's Level (``engine/user_kernels.py``); ``engine/launch.run_once``
then compiles it (NVRTC, or Triton) and launches it as the runner does, and prints the
launch's JSON line. ID must be the spec's id. ``--sha256``: launch only if the source is
still the one of that hash (``--ncu-source`` profiles the source that ran).

Exit code 0 when it verified, 1 when it did not, 2 when it was not launched (the reason
on stderr, one line). This lives in the CLI, not beside ``engine/launch.py``: reading a
spec needs msgspec, which the runner's modules never import.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from ..engine.launch import run_once
from ..engine.user_kernels import LaunchRefused, UserKernels
from ..ladder.kernel_spec import SpecError
from ..ladder.level import Level
from ..ladder.spec_file import load_spec, read_source
from ..protocol.commands import MAX_DIM
from ..protocol.option_bounds import (
    MAX_LAUNCHES,
    OneLineParser,
    bounded,
    param_assignment,
)
from ..toolchain.variant_check import check_spec

MODULE = "gemmscope.kernels.cli.user_launch"


def spec_level(path: str | Path, level_id: str, params: dict[str, int], M: int, N: int,
               K: int, sha256: str | None = None) -> Level:
    """The Level of a user's kernel from its spec file and parameters, as the runner makes
    it from the run command ``record`` sends for that variant and shape. LaunchRefused
    says why not: a spec or source outside the bounds, another kernel's spec, unknown
    parameters, a source other than the one of ``sha256`` (edited since it ran), or the
    constraint check's refusal."""
    try:
        spec = load_spec(path)
        source = read_source(spec)
        full = spec.with_defaults(params)
    except SpecError as exc:
        raise LaunchRefused(str(exc)) from None
    if spec.id != level_id:
        raise LaunchRefused(f"{path} is the spec of {spec.id!r}, not of {level_id!r}")
    digest = hashlib.sha256(source.encode()).hexdigest()
    if sha256 is not None and digest != sha256:
        raise LaunchRefused(f"{spec.source_path} changed since it ran (sha256 "
                            f"{digest[:12]}, not {sha256[:12]}): not launched")
    _check, launch = check_spec(spec, source, full, M, N, K, compile=False)
    if launch.refused is not None:
        raise LaunchRefused(f"{level_id} was refused before launch: {launch.refused}")
    level, _launch, _event = UserKernels().level(launch.as_wire())
    return level


def parser() -> argparse.ArgumentParser:
    ap = OneLineParser(prog=f"python -m {MODULE}")
    ap.add_argument("level", metavar="ID", help="the kernel's id, as its spec names it")
    ap.add_argument("M", type=bounded(int, 1, MAX_DIM))
    ap.add_argument("N", type=bounded(int, 1, MAX_DIM))
    ap.add_argument("K", type=bounded(int, 1, MAX_DIM))
    ap.add_argument("--kernel", required=True, metavar="SPEC.toml",
                    help="the kernel's spec, beside its .cu or Triton .py")
    ap.add_argument("--param", action="append", default=[], type=param_assignment,
                    metavar="NAME=V", help="a parameter other than its default")
    ap.add_argument("--sha256", metavar="HEX", help="launch only the source of this hash")
    ap.add_argument("--launches", type=bounded(int, 1, MAX_LAUNCHES), default=1)
    ap.add_argument("--one-block-per-sm", action="store_true",
                    help="launch with enough (unused) shared memory that blocks do not "
                         "share an SM (CUDA kernels)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        level = spec_level(args.kernel, args.level, dict(args.param), args.M, args.N,
                           args.K, args.sha256)
        out = run_once(args.level, args.M, args.N, args.K, launches=args.launches,
                       one_block_per_sm=args.one_block_per_sm, user=level)
    except LaunchRefused as exc:
        print(f"gemmscope user_launch: {' '.join(str(exc).split())[:2000]}",
              file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0 if out["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

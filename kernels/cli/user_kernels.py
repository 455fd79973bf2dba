"""``--kernel SPEC.toml`` for bench and record, and ``gemmscope check``: a user's kernel
planned like a level (docs/user-kernels.md).

Each spec is read once here (``spec_file``, msgspec); for every shape and every variant
(``--param NAME=V`` over the defaults; ``--vary NAME=A,B,...`` at most twice: the sweep's
grid) the constraint check runs before anything is sent, and the run command carries the
kernel object (source included, bounded), or the check's refusal in words, which the
runner answers as an error naming the kernel.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from typing import Any, TextIO

from ..ladder.kernel_spec import KernelSpec, SpecError
from ..ladder.level import MAX_PARAM
from ..ladder.shape import Shape
from ..ladder.spec_file import load_spec, read_source
from ..protocol.commands import RunMode
from ..protocol.events import MAX_COMMAND_BYTES
from ..protocol.option_bounds import bounded
from ..protocol.plan import RunRequest
from ..protocol.text_safety import terminal_text
from ..toolchain.variant_check import check_spec
from .options import shape

MAX_VARY = 2  # parameters a sweep varies (a heatmap's two axes)
MAX_VARIANTS = 256
PARAM_VALUE = bounded(int, 0, MAX_PARAM)  # a template parameter, as a spec's values are


class KernelOptionError(ValueError):
    """A ``--kernel`` / ``--param`` / ``--vary`` that cannot be planned (one line)."""


def parse_assignment(text: str) -> tuple[str, list[int]]:
    """'BM=128' or 'BM=64,128,256': each value a whole number from 0 to MAX_PARAM (as a
    spec's values are), at most MAX_VARIANTS of them."""
    name, sep, values = text.partition("=")
    shown = repr(text if len(text) <= 40 else text[:39] + "…")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{shown}: give NAME=VALUE (or NAME=A,B,C)")
    items = [v for v in values.split(",") if v.strip()]
    if len(items) > MAX_VARIANTS:
        raise argparse.ArgumentTypeError(f"{shown}: {len(items):,} values; at most "
                                         f"{MAX_VARIANTS}")
    try:
        parsed = [PARAM_VALUE(v) for v in items]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{shown}: {exc}") from None
    if not parsed:
        raise argparse.ArgumentTypeError(f"{shown}: no value")
    return name.strip(), [int(v) for v in parsed]


def add_kernel_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", action="append", default=[], metavar="SPEC.toml",
                   help="your own kernel: a spec beside its .cu or Triton .py "
                        "(docs/user-kernels.md); repeatable")
    p.add_argument("--param", action="append", default=[], type=parse_assignment,
                   metavar="NAME=V", help="a --kernel parameter other than its default")
    p.add_argument("--vary", action="append", default=[], type=parse_assignment,
                   metavar="NAME=A,B,..", help="run every value (at most two --vary: "
                                               "a grid of variants, the sweep)")


def load_kernels(paths: list[str]) -> list[tuple[KernelSpec, str]]:
    out = []
    for path in paths:
        try:
            spec = load_spec(path)
            out.append((spec, read_source(spec)))
        except SpecError as exc:
            raise KernelOptionError(str(exc)) from None
    ids = [s.id for s, _ in out]
    if len(set(ids)) != len(ids):
        raise KernelOptionError(f"two --kernel specs share an id: {', '.join(ids)}")
    return out


def variants(spec: KernelSpec, fixed: list[tuple[str, list[int]]],
             vary: list[tuple[str, list[int]]]) -> list[dict[str, int]]:
    """The parameter sets of one spec: --param over the defaults, --vary's product."""
    if len(vary) > MAX_VARY:
        raise KernelOptionError(f"--vary: at most {MAX_VARY} parameters (a grid)")
    for name, _values in [*fixed, *vary]:
        if name not in spec.params:
            raise KernelOptionError(f"--param/--vary {name}: {spec.id} has no such "
                                    f"parameter; it has {', '.join(spec.params) or 'none'}")
    for name, values in fixed:
        if len(values) != 1:
            raise KernelOptionError(f"--param {name}: one value (--vary takes several)")
    base = {**spec.defaults, **{n: v[0] for n, v in fixed}}
    count = math.prod(len(v) for _, v in vary)  # counted before any is made
    if count > MAX_VARIANTS:
        raise KernelOptionError(f"--vary: {' x '.join(str(len(v)) for _, v in vary)} = "
                                f"{count:,} variants; at most {MAX_VARIANTS}")
    grid = [dict(zip([n for n, _ in vary], combo, strict=True))
            for combo in itertools.product(*[v for _, v in vary])]
    return [{**base, **g} for g in grid]


def kernel_runs(args: argparse.Namespace, shapes: list[tuple[int, int, int]],
                mode: RunMode, stderr: TextIO | None = None) -> list[RunRequest]:
    """The runs of every --kernel at every shape and variant, each checked first; a
    refused variant is still sent (the runner answers with the refusal, so the session
    and its recording say it)."""
    if not args.kernel:
        if args.param or args.vary:
            raise KernelOptionError("--param and --vary go with --kernel")
        return []
    runs: list[RunRequest] = []
    for spec, source in load_kernels(args.kernel):
        for params in variants(spec, args.param, args.vary):
            for M, N, K in shapes:
                check, launch = check_spec(spec, source, params, M, N, K, compile=False)
                cmd_bytes = len(json.dumps({"cmd": "run", "kernel": launch.as_wire()}))
                if cmd_bytes > MAX_COMMAND_BYTES - 1024:
                    raise KernelOptionError(
                        f"{spec.source_path}: the run command would be {cmd_bytes:,} bytes "
                        f"of JSON; at most {MAX_COMMAND_BYTES - 1024:,} (a smaller source)")
                if stderr is not None and check.refusal:
                    stderr.write(terminal_text(f"{spec.id} {_text(params)} at {M}x{N}x{K}: "
                                               f"refused: {check.refusal}") + "\n")
                runs.append(RunRequest(spec.id, Shape(M, N, K), args.repeats, warmup=args.warmup,
                                       compare=not args.no_compare,
                                       settle_s=args.settle_s,
                                       energy_s=args.energy_s,
                                       kernel=launch.as_wire()).with_mode(mode))
    return runs


def _text(params: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def add_check_parser(sub: Any) -> None:
    c = sub.add_parser("check", help="the constraint check of a --kernel spec (or a "
                                     "level) with its parameters, in words; no GPU")
    c.add_argument("spec", metavar="SPEC.toml")
    c.add_argument("--param", action="append", default=[], type=parse_assignment,
                   metavar="NAME=V")
    c.add_argument("--size", "-s", type=shape, default=(4096, 4096, 4096),
                   metavar="N|MxNxK")
    c.add_argument("--no-compile", action="store_true",
                   help="skip the NVRTC compile that gives registers")


def run_check(args: argparse.Namespace, stdout: TextIO) -> int:
    (spec, source), = load_kernels([args.spec])
    params = variants(spec, args.param, [])[0]
    M, N, K = args.size
    check, _launch = check_spec(spec, source, params, M, N, K, compile=not args.no_compile)
    stdout.write(terminal_text(f"{spec.id} ({spec.source}) {_text(params)} at "
                               f"{M}x{N}x{K}") + "\n")
    for line in check.lines():
        stdout.write(terminal_text(line) + "\n")
    return 0 if check.ok else 1

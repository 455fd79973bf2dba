"""``gemmscope runner``: serve JSON-line commands on stdin (docs/protocol.md).

Apart from the rest of the CLI, so that starting a runner imports only the engine: it
runs on GPU machines that may lack what readers of events use (msgspec; the import
contract "The runner never imports msgspec" holds this module to it)."""

from __future__ import annotations

import argparse

from ..protocol.option_bounds import OneLineParser, gpu_index, telemetry_hz


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--telemetry-hz", type=telemetry_hz(), default=50.0)
    p.add_argument("--levels-from", help="a Python file with extra LEVELS (tests)")
    p.add_argument("--device", type=gpu_index(), metavar="N",
                   help="use GPU N (as nvidia-smi counts them; default: CUDA's first)")


def run(args: argparse.Namespace) -> int:
    from ..engine.runner import main as runner_main

    return runner_main(args.telemetry_hz, args.levels_from, args.device)


def main(argv: list[str]) -> int:
    """``argv``: what follows ``runner`` on the command line."""
    p = OneLineParser(prog="gemmscope runner",
                                description="serve JSON-line commands on stdin")
    add_arguments(p)
    return run(p.parse_args(argv))

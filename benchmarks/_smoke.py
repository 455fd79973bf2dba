"""What every benchmark's ``--smoke`` shares (not a benchmark: the underscore keeps it out
of tests/benchmarks/test_every_benchmark_has_a_smoke_mode.py's list).

``--smoke`` is the small mode CI runs (``.ci/run``, through that test), so that no script
rots unseen: tiny sizes and no GPU where the script allows; a script whose measurement
needs the GPU parses its arguments, renders its table from a made-up row where it has one
(labelled so), and says it measured nothing.
"""

from __future__ import annotations

import argparse

HELP = "a tiny run, no GPU where the script allows (what CI runs)"
# the line a GPU-only script's smoke ends with (the smoke test looks for it)
GPU_LINE = "smoke: arguments ok; needs a GPU for the measurement"


def add_flag(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--smoke", action="store_true", help=HELP)


def needs_gpu() -> int:
    """Ends a GPU-only script's smoke: the arguments parsed, nothing measured. Says whether
    this machine has a usable GPU (CuPy and a device) without starting any work on it."""
    from gemmscope.kernels.device.gpu import get_cupy

    _cp, reason = get_cupy()
    print(f"{GPU_LINE} ({'here: ' + reason if reason else 'one is here: run without --smoke'})")
    return 0

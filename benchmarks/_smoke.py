"""What every benchmark's ``--smoke`` shares (not a benchmark: the underscore keeps it out
of tests/benchmarks/test_every_benchmark_has_a_smoke_mode.py's list).

``--smoke`` is the small mode CI runs (``.ci/run``, through that test), so that no script
rots unseen: tiny sizes and no GPU where the script allows; a script whose measurement
needs the GPU parses its arguments, renders its table from a made-up row where it has one
(labelled so), and says it measured nothing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

HELP = "a tiny run, no GPU where the script allows (what CI runs)"
# the line a GPU-only script's smoke ends with (the smoke test looks for it)
SUPPORT = Path(__file__).resolve().parents[1] / "tests" / "support"  # the tests' stand-ins
GPU_LINE = "smoke: arguments ok; needs a GPU for the measurement"
MADE_UP = "smoke: made-up rows, not a measurement:"  # before a table of made-up rows


def support(name: str) -> ModuleType:
    """A module of tests/support (the synthetic session, the stand-ins for ncu), which the
    smoke modes run on."""
    if str(SUPPORT) not in sys.path:
        sys.path.insert(0, str(SUPPORT))
    return importlib.import_module(name)


def add_flag(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--smoke", action="store_true", help=HELP)


def made_up(text: str) -> None:
    """Prints a GPU-only script's table (or lines) rendered from made-up rows, so that its
    rendering is run too; labelled as what it is."""
    print(MADE_UP)
    print(text)


def level_variants(entries: Iterable[tuple[str, dict[str, int]]]) -> None:
    """Makes each (level id, parameter changes) a GPU-only script would run, as the
    registry makes it: a level since renamed, a parameter it no longer has or a block too
    large fails here, not first on the GPU machine."""
    from gemmscope.kernels.ladder import registry

    made = [registry.get(level_id).with_params(changes) for level_id, changes in entries]
    print(f"smoke: the registry makes every level and variant named ({len(made)})")


def stand_in_ncu(folder: Path, metrics: Iterable[str]) -> str:
    """tests/support/fake_ncu.py's stand-in for ncu, written in ``folder``: it runs nothing
    and prints ncu's raw CSV with made-up counters (1,000 for each of ``metrics``)."""
    fake_ncu = support("fake_ncu")
    print("smoke: ncu is a stand-in (tests/support/fake_ncu.py): made-up counters")
    return str(fake_ncu.write_fake_ncu(folder / "ncu", values=dict.fromkeys(metrics, "1,000")))


def needs_gpu() -> int:
    """Ends a GPU-only script's smoke: the arguments parsed, nothing measured. Says whether
    this machine has a usable GPU (CuPy and a device) without starting any work on it."""
    from gemmscope.kernels.device.gpu import get_cupy

    _cp, reason = get_cupy()
    print(f"{GPU_LINE} ({'here: ' + reason if reason else 'one is here: run without --smoke'})")
    return 0

"""A benchmark script (benchmarks/NAME.py, not a package module) imported for its tests."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import places

BENCHMARKS = places.BENCHMARKS


def load(name: str) -> ModuleType:
    # the scripts import what they share (benchmarks/_smoke.py) from their folder, which
    # is on the path when they run as scripts
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""A benchmark script (benchmarks/NAME.py, not a package module) imported for its tests."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import places

BENCHMARKS = places.BENCHMARKS


def load(name: str) -> ModuleType:
    """benchmarks/NAME.py (NAME may name a subfolder: "attempts/fp8_deep_quad")."""
    # the scripts import what they share (benchmarks/_smoke.py, attempts/ its siblings)
    # from their folder, which is on the path when they run as scripts
    path = BENCHMARKS / f"{name}.py"
    for folder in (str(BENCHMARKS), str(path.parent)):
        if folder not in sys.path:
            sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

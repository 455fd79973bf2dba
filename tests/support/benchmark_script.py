"""A benchmark script (benchmarks/NAME.py, not a package module) imported for its tests."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import places

BENCHMARKS = places.BENCHMARKS


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

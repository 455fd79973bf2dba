#!/usr/bin/env bash
# CI (issue 44 item 7): the runner's declared dependencies are enough. A fresh venv gets the
# package with the `runner` extra alone (no CuPy: there is no GPU here, and the GPU side
# imports CuPy, cuda-bindings and pynvml lazily, in one module each), then every module of
# gemmscope.kernels is imported. A module that needs a package no extra of the runner names
# fails here. Left out, each with its own extra: the Dask worker (`cluster`).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(mktemp -d)/venv
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check ".[runner]"
cd "$(mktemp -d)"  # the installed package, not the checkout
"$venv/bin/python" - <<'PY'
import importlib
import pkgutil
import sys

import gemmscope.kernels as kernels

OTHER_EXTRAS = {"gemmscope.kernels.drive.cluster_worker": "cluster"}
failed, count = [], 0
for module in pkgutil.walk_packages(kernels.__path__, "gemmscope.kernels."):
    if module.name.endswith(".__main__") or module.name in OTHER_EXTRAS:
        continue
    count += 1
    try:
        importlib.import_module(module.name)
    except Exception as exc:  # noqa: BLE001 - every failure is listed, then CI fails
        failed.append(f"{module.name}: {exc!r}")
# Every package the GPU side imports anywhere (lazy imports inside functions too) is one
# the runner extra installs, or belongs to a named extra or an optional tool it checks for.
import ast
import pathlib

ELSEWHERE = {"cupy": "cuda12/cuda13", "cuda": "cuda12/cuda13 (cuda-bindings)",
             "nvidia": "cuda13 (pip CUDA headers)", "distributed": "cluster",
             "dask": "cluster", "psutil": "cluster (through Dask)",
             "ncu_report": "ncu", "torch": "optional (FP8 reference)",
             "triton": "optional (user Triton kernels)", "deep_gemm": "optional (anchor)"}
imported: set[str] = set()
for path in pathlib.Path(kernels.__path__[0]).rglob("*.py"):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
for name in sorted(imported - set(sys.stdlib_module_names) - {"gemmscope"} - set(ELSEWHERE)):
    try:
        importlib.import_module(name)
    except ImportError as exc:
        failed.append(f"{name} is imported by gemmscope.kernels but not installed by the "
                      f"runner extra: {exc}")
for qt in ("PySide6", "pyqtgraph"):
    if qt in sys.modules:
        failed.append(f"{qt} was imported by the GPU side")
print(f"runner smoke: {count} modules of gemmscope.kernels imported with the runner extra"
      f" alone; {len(failed)} failed")
print(*failed, sep="\n")
sys.exit(1 if failed else 0)
PY

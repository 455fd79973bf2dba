"""Packaging and the dependency rule: kernels/ and app/core/ never import Qt."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import places
import pytest

REPO = places.REPO
QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "superqt", "qtpy")
MAPPING = {"app": "gemmscope.app", "kernels": "gemmscope.kernels",
           "resources": "gemmscope.resources"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("folder", ["kernels", "app/core"])
def test_qt_free_side_imports_no_qt(folder):
    for path in (REPO / folder).rglob("*.py"):
        bad = {n for n in imports_of(path) if n.split(".")[0] in QT}
        assert not bad, f"{path.relative_to(REPO)} imports {bad}"
        if folder == "kernels":
            app = {n for n in imports_of(path) if n.startswith("gemmscope.app")}
            assert not app, f"{path.relative_to(REPO)} imports the app: {app}"


def test_every_package_folder_is_listed_in_pyproject():
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(cfg["tool"]["setuptools"]["packages"])
    found = set()
    for folder, pkg in MAPPING.items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder)
            found.add(".".join([pkg, *rel.parts]) if rel.parts else pkg)
    assert found == listed


def test_cupy_torch_and_pynvml_are_imported_in_one_module_each_of_device():
    owners = {"cupy": set(), "pynvml": set(), "torch": set()}
    for path in (REPO / "kernels").rglob("*.py"):
        for name in imports_of(path):
            root = name.split(".")[0]
            if root in owners:
                owners[root].add(path.relative_to(REPO / "kernels").as_posix())
    assert owners["cupy"] <= {"device/gpu.py"}
    assert owners["torch"] <= {"device/gpu.py"}
    assert owners["pynvml"] <= {"device/telemetry.py"}


def test_import_linter_contracts_hold(tmp_path):
    exe = shutil.which("lint-imports")  # the test extra's import-linter; .ci/run runs it too
    assert exe is not None, "lint-imports not found: pip install '.[test]'"
    # this checkout as the package gemmscope, whatever is installed (an editable install's
    # import hook is invisible to the import graph's builder)
    (tmp_path / "gemmscope").symlink_to(REPO, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([exe, "--no-cache", str(REPO / "pyproject.toml")], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_kernels_import_without_gpu_or_qt():
    code = ("import sys; import gemmscope.kernels.cli.main, gemmscope.kernels.engine.runner, "
            "gemmscope.kernels.engine.measure; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6','pyqtgraph','cupy','pynvml')]; print(bad); assert not bad")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr

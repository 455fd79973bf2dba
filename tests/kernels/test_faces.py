"""Each package of the GPU side says in its ``__init__`` what others may use (its
``__all__``, issue 44 item 5), and the app goes through those faces: a face hands on the
very objects its modules define, loads a module only when one of its names is asked for,
and no app file imports a module inside a kernels package."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import gemmscope.app as app_package
import gemmscope.kernels as kernels

PACKAGES = sorted(m.name for m in pkgutil.iter_modules(kernels.__path__) if m.ispkg)
APP = Path(app_package.__path__[0])
# the entry points hand over to the command line by its modules (pyproject's contract)
HANDOVER = {("main.py", "gemmscope.kernels.cli.main"), ("main.py", "gemmscope.kernels.cli.quick"),
            ("main.py", "gemmscope.kernels.cli.subcommands"),
            ("gui_args.py", "gemmscope.kernels.cli.subcommands")}


def face_imports(package: str) -> dict[str, tuple[str, str]]:
    """The names a face's ``TYPE_CHECKING`` block (or, for an eager face, its module-level
    imports of its own modules) hands on: name -> (module, name there)."""
    init = Path(importlib.import_module(f"gemmscope.kernels.{package}").__file__ or "")
    out = {}
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = (node.module, alias.name)
    return out


def test_every_package_of_the_gpu_side_has_a_face():
    assert {"cli", "device", "drive", "engine", "files", "hardware", "ladder", "models",
            "profile", "protocol", "results", "toolchain"} <= set(PACKAGES)
    for package in PACKAGES:
        module = importlib.import_module(f"gemmscope.kernels.{package}")
        assert isinstance(module.__all__, list), package
        assert len(set(module.__all__)) == len(module.__all__), package


@pytest.mark.parametrize("package", PACKAGES)
def test_a_face_hands_on_the_objects_its_modules_define(package):
    module = importlib.import_module(f"gemmscope.kernels.{package}")
    imports = face_imports(package)
    for name in module.__all__:
        value = getattr(module, name)
        if name in imports:  # re-exported: the module's own object, under the face's name
            where, inner = imports[name]
            source = importlib.import_module(f"gemmscope.kernels.{package}.{where}")
            assert value is getattr(source, inner), f"{package}.{name}"
        else:  # defined in the face itself (models: model_for, MODELS...)
            assert getattr(value, "__module__", module.__name__) == module.__name__, name
        # a face's name never stands for one of its modules (a submodule's import would
        # put the module over it)
        assert importlib.util.find_spec(f"gemmscope.kernels.{package}.{name}") is None, name
    if package != "models":  # lazy: the type checker's imports are the face, name for name
        assert set(imports) == set(module.__all__), package


def test_a_face_that_is_not_in_all_is_refused():
    from gemmscope.kernels import protocol

    with pytest.raises(AttributeError, match="no attribute 'not_on_the_face'"):
        _ = protocol.not_on_the_face
    assert "Build" in dir(protocol) and "Recording" in dir(protocol)


def test_a_face_loads_a_module_only_when_one_of_its_names_is_asked_for():
    code = ("import sys\n"
            "import gemmscope.kernels.protocol as p, gemmscope.kernels.results\n"
            "before = [m for m in ('gemmscope.kernels.protocol.records', 'msgspec',\n"
            "          'gemmscope.kernels.results.rows') if m in sys.modules]\n"
            "from gemmscope.kernels.protocol import Build\n"
            "print(before, 'gemmscope.kernels.protocol.records' in sys.modules,\n"
            "      'gemmscope.kernels.results.rows' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.strip()
    assert out == "[] True False"


def deep_imports(source: str, module: str) -> list[str]:
    """The modules inside a kernels package that ``source`` (module ``module``) imports."""
    parts = module.split(".")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = parts[:len(parts) - node.level] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            names = [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            target, names = "", [a.name for a in node.names]
        else:
            continue
        for full in [target, *names]:
            pieces = full.split(".")
            if pieces[:2] == ["gemmscope", "kernels"] and len(pieces) >= 4 and \
                    importlib.util.find_spec(".".join(pieces[:4])) is not None:
                found.append(".".join(pieces[:4]))
    return list(dict.fromkeys(found))


def test_the_app_imports_the_faces_not_the_modules_behind_them():
    bad = []
    for path in sorted(APP.rglob("*.py")):
        name = ".".join(["gemmscope", "app", *path.relative_to(APP).with_suffix("").parts])
        bad += [f"{path.relative_to(APP)}: {module}"
                for module in deep_imports(path.read_text(encoding="utf-8"), name)
                if (str(path.relative_to(APP)), module) not in HANDOVER]
    assert bad == []


def test_the_deep_import_check_sees_a_module_path_in_each_form():
    """The check above fails where an app file names a module inside a package."""
    source = ("from ...kernels.ladder.shape import Shape\n"
              "from ...kernels.results import roofline as rl\n"
              "import gemmscope.kernels.files.reading\n"
              "from ...kernels import protocol as rec\n"
              "from ...kernels.protocol import Build\n")
    assert deep_imports(source, "gemmscope.app.core.probe") == [
        "gemmscope.kernels.ladder.shape", "gemmscope.kernels.results.roofline",
        "gemmscope.kernels.files.reading"]

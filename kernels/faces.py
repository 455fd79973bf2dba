"""A package's face: the names its ``__init__`` hands on to the rest of the program
(its ``__all__``), each imported from its module at first use (PEP 562).

Lazily, because importing one module of a package runs the package's ``__init__``: a face
that imported its modules at once would load them all for anyone who needs one (the runner
would load msgspec through ``protocol``, ``gemmscope report`` numpy through ``models``).
The type checker and the import contracts read the face's ``TYPE_CHECKING`` imports, the
same names (tests/kernels/test_faces.py holds the three lists together).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy(package: str, modules: Mapping[str, tuple[str, ...]]) -> tuple[
        Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``'s face. ``modules`` names, for each
    module of the package, the names the face takes from it: ``"name"`` (the same name
    there) or ``"name=inner"`` (the face's name for the module's ``inner``)."""
    names: dict[str, tuple[str, str]] = {}
    for module, taken in modules.items():
        for entry in taken:
            name, _, inner = entry.partition("=")
            names[name] = (module, inner or name)

    def attribute(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, inner = names[name]
        value = getattr(importlib.import_module(f"{package}.{module}"), inner)
        setattr(sys.modules[package], name, value)  # found in the module from now on
        return value

    def listing() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return attribute, listing

"""What a level is: the level type, the registry of levels, the Hopper entries, shapes.

Data only: nothing here touches the GPU, the files or the wire. The face (``__all__``) is
what the app may use: the level type and its rules, the registry's lookups, user kernels'
specs and the architectures; the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "BY_ID",
    "MAX_PARAM",
    "MAY_BE_ZERO",
    "MODES",
    "SWITCHES",
    "KernelSpec",
    "Kind",
    "Level",
    "Param",
    "Shape",
    "SpecError",
    "catalog",
    "device_arch",
    "get",
    "ladder",
    "load_spec",
    "read_source",
    "runs_on",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .arch import device_arch, runs_on
    from .kernel_spec import KernelSpec, Param, SpecError
    from .level import MAX_PARAM, MAY_BE_ZERO, MODES, SWITCHES, Kind, Level
    from .registry import BY_ID, catalog, get, ladder
    from .shape import Shape
    from .spec_file import load_spec, read_source
else:
    __getattr__, __dir__ = lazy(__name__, {
        "arch": ("device_arch", "runs_on"),
        "kernel_spec": ("KernelSpec", "Param", "SpecError"),
        "level": ("Kind", "Level", "MAX_PARAM", "MAY_BE_ZERO", "MODES", "SWITCHES"),
        "registry": ("BY_ID", "catalog", "get", "ladder"),
        "shape": ("Shape",),
        "spec_file": ("load_spec", "read_source"),
    })

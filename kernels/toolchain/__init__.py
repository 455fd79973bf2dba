"""The toolchain: NVRTC builds of the levels (``nvrtc``), cubin reading, occupancy, SASS and
its check against the access models, build events and build reports.

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "CLASSES",
    "MMA",
    "Check",
    "Finding",
    "SassLine",
    "Status",
    "check",
    "check_spec",
    "in_span",
    "level_variant",
    "param_changes",
    "parse",
    "repo_path",
    "traceable",
    "what_if",
    "with_build",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .build_report import param_changes
    from .constraints import Check, Finding, Status, check
    from .nvrtc import traceable
    from .occupancy import what_if
    from .sass import CLASSES, MMA, SassLine, in_span, parse, repo_path
    from .variant_check import check_spec, level_variant, with_build
else:
    __getattr__, __dir__ = lazy(__name__, {
        "build_report": ("param_changes",),
        "constraints": ("Check", "Finding", "Status", "check"),
        "nvrtc": ("traceable",),
        "occupancy": ("what_if",),
        "sass": ("CLASSES", "MMA", "SassLine", "in_span", "parse", "repo_path"),
        "variant_check": ("check_spec", "level_variant", "with_build"),
    })

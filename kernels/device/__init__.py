"""The only modules that load CUDA, NVML or libcuda: CuPy and the device's facts (``gpu``),
NVML telemetry (``telemetry``), TMA tensor maps and launches through libcuda (``hopper``),
and which GPU a runner uses (``gpu_select``, pure; telemetry needs it). Each loads its
library lazily, at first use, never at import.

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "ENV",
    "CacheFolder",
    "CupyBuild",
    "NvmlFacts",
    "cache_root",
    "cupy_build",
    "folders",
    "nvml_facts",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .build_cache import ENV, CacheFolder, cache_root, folders
    from .gpu import CupyBuild, cupy_build
    from .telemetry import NvmlFacts, nvml_facts
else:
    __getattr__, __dir__ = lazy(__name__, {
        "build_cache": ("CacheFolder", "ENV", "cache_root", "folders"),
        "gpu": ("CupyBuild", "cupy_build"),
        "telemetry": ("NvmlFacts", "nvml_facts"),
    })

"""What NVIDIA GPUs offer, as data: datasheet peaks and memory bandwidth per GPU
(gpu_table.toml, read by gpu_table.py). No CUDA here; what a device says of itself is read
from the device (kernels/device).

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = ["lookup", "problem"]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .gpu_table import lookup, problem
else:
    __getattr__, __dir__ = lazy(__name__, {
        "gpu_table": ("lookup", "problem"),
    })

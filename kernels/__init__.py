"""GPU side of gemmscope: levels, NVRTC build, runner, timing, verification, telemetry.

Nothing here imports Qt, and nothing touches the GPU at import time: CuPy is imported
lazily in :mod:`gemmscope.kernels.gpu` and NVML in :mod:`gemmscope.kernels.telemetry`.
"""

from __future__ import annotations

__version__ = "0.1.0"

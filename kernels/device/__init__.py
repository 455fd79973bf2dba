"""The only modules that load CUDA, NVML or libcuda: CuPy and the device's facts (``gpu``),
NVML telemetry (``telemetry``), TMA tensor maps and launches through libcuda (``hopper``),
and which GPU a runner uses (``gpu_select``, pure; telemetry needs it). Each loads its
library lazily, at first use, never at import.
"""

"""Extra levels for the runner's fault test (loaded with `runner --levels-from`)."""

from pathlib import Path

from gemmscope.kernels.registry import Geometry, Level, Precision

LEVELS = [
    Level(id="test_fault", title="Faults on purpose", adds="an illegal address",
          precision=Precision.FP32, reference="cublas_fp32", follows="tests",
          source="fault.cu", kernel="gs_fault",
          params={"X": 0}, geometry=lambda p: Geometry((32, 1), (32, 32)),
          source_dir=str(Path(__file__).with_name("cuda"))),
]

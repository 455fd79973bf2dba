"""Extra levels for the runner's fault tests (loaded with `runner --levels-from`)."""

from pathlib import Path

from gemmscope.kernels.ladder.registry import Geometry, Level, Precision

LEVELS = [
    Level(id="test_fault", title="Faults on purpose", adds="an illegal address",
          precision=Precision.FP32, reference="cublas_fp32", follows="tests",
          source="fault.cu", kernel="gs_fault",
          params={"X": 0}, geometry=lambda p: Geometry((32, 1), (32, 32)),
          source_dir=str(Path(__file__).with_name("cuda"))),
    # 48000 bytes static + X dynamic: over the H200's 232448 bytes per block once compiled
    Level(id="test_smem_over", title="Over the shared memory limit", adds="static + dynamic",
          precision=Precision.FP32, reference="cublas_fp32", follows="tests",
          source="smem_over.cu", kernel="gs_smem_over", params={"X": 190_000},
          geometry=lambda p: Geometry((32, 1), (32, 32)),
          dyn_smem=lambda p: p["X"], source_dir=str(Path(__file__).with_name("cuda"))),
]

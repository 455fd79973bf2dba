"""Launch one level once at one shape, for a profiler to catch (ncu -k regex:<kernel>).

    python3 benchmarks/launch_one.py LEVEL M N K

Kept small and apart so it is easy to adapt to the GPU-side API: it uses
``gemmscope.kernels.launch.run_once`` when that exists, else compiles and launches with
``gemmscope.kernels.build.compile_level`` and the registry's launch geometry.
"""

from __future__ import annotations

import sys


def run_once(level_id: str, M: int, N: int, K: int) -> None:
    try:
        from gemmscope.kernels.launch import run_once as gpu_run_once
    except ImportError:
        gpu_run_once = None
    if gpu_run_once is not None:
        result = gpu_run_once(level_id, M, N, K)
        # stderr: the profiler's CSV owns stdout
        print(f"launch_one: {result}", file=sys.stderr)
        return
    _run_with_build(level_id, M, N, K)


def _run_with_build(level_id: str, M: int, N: int, K: int) -> None:
    import numpy as np

    from gemmscope.kernels import build, registry
    from gemmscope.kernels.gpu import require_cupy

    cp = require_cupy()
    level = registry.get(level_id)
    fp16 = level.precision == "fp16"
    dtype = cp.float16 if fp16 else cp.float32
    a = (cp.random.random((M, K), dtype=cp.float32) * 2 - 1).astype(dtype)
    b = (cp.random.random((K, N), dtype=cp.float32) * 2 - 1).astype(dtype)
    c = cp.empty((M, N), dtype=cp.float32)
    built = build.compile_level(level)
    vec = level.use_vector_path(M, N, K)
    smem = level.dyn_smem_bytes
    smem = smem(built.params) if callable(smem) else smem
    built.kernels[vec](level.grid(M, N), (*level.threads, 1),
                       (np.int32(M), np.int32(N), np.int32(K), a, b, c), shared_mem=smem)
    cp.cuda.Device().synchronize()


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    run_once(argv[0], int(argv[1]), int(argv[2]), int(argv[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""siboehm's kernel 5 (SGEMM_CUDA's 2D block tiling, the technique of register_2d) as
benchmarks/kernel_attempts.py uses it: read from the anchor (its tarball or folder, bounded,
never copied into the repository), compiled with the levels' NVRTC options, and timed in
one pair loop with a level on the level's own operands."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

K5_MEMBER = "sgemm_cuda/src/kernels/5_kernel_2D_blocktiling.cuh"
K5_NAME = "sgemm2DBlocktiling<128, 128, 8, 8, 8>"
K5_MAX_BYTES = 64 * 1024  # the anchor's kernel 5 source is 3 KB


def k5_source(path: str) -> str:
    """Kernel 5 of the SGEMM_CUDA anchor (a tarball or its extracted folder), made
    compilable by NVRTC: its #include lines dropped, its macros and types defined."""
    p = Path(path)
    if p.is_dir():
        f = p / K5_MEMBER if (p / K5_MEMBER).is_file() else p / K5_MEMBER.split("/", 1)[1]
        if f.stat().st_size > K5_MAX_BYTES:
            raise ValueError(f"{f} is larger than {K5_MAX_BYTES} bytes")
        text = f.read_text(encoding="utf-8")
    else:
        with tarfile.open(p, "r:gz") as tar:
            member = tar.getmember(K5_MEMBER)
            if not member.isfile() or member.size > K5_MAX_BYTES:
                raise ValueError(f"{K5_MEMBER} in {p} is not a file under {K5_MAX_BYTES} bytes")
            fh = tar.extractfile(member)
            assert fh is not None
            text = io.TextIOWrapper(fh, encoding="utf-8").read()
    body = "\n".join("" if line.lstrip().startswith(("#include", "#pragma once"))
                     else line for line in text.splitlines())
    return ("typedef unsigned int uint;\n#define assert(x)\n"
            "#ifndef CEIL_DIV\n#define CEIL_DIV(M, N) (((M) + (N) - 1) / (N))\n#endif\n" + body)


def k5_paired(bench: Any, level: Any, kernel: Any, S: int, max_pairs: int, warmup: int,
              budget_s: float, burst: int) -> dict[str, Any]:
    """The level and kernel 5 in one pair loop (paired.py's loop, launch timer and clock),
    kernel 5 on the level's own A and B with a C of its own (zeros: it reads beta * C)."""
    import numpy as np

    from gemmscope.kernels.engine.operands import check
    from gemmscope.kernels.engine.paired import clock_reader, launch_timer, pair_loop
    from gemmscope.kernels.ladder.shape import tflops_of
    from gemmscope.kernels.results.ratio_stats import clock_summary, paired_fields

    cp = bench.cp
    flops = 2.0 * S ** 3
    with bench.stream:
        prep = bench.prepare(level, S, S, S, None, 0)
        a, b = prep.ops.a, prep.ops.b
        c5 = cp.zeros((S, S), cp.float32)
        grid, block = (-(-S // 128), -(-S // 128)), (256,)
        args = (np.int32(S), np.int32(S), np.int32(S), np.float32(1.0), a, b,
                np.float32(0.0), c5)

        def launch_k5() -> None:
            kernel(grid, block, args)

        launch_k5()
        ref64 = cp.matmul(a.astype(cp.float64), b.astype(cp.float64))
        k5_err = float(cp.linalg.norm(c5.astype(cp.float64) - ref64) / cp.linalg.norm(ref64))
        del ref64
        for _ in range(warmup):
            prep.launch()
            launch_k5()
        bench.stream.synchronize()
        read = clock_reader(bench)
        pairs, stop = pair_loop(launch_timer(bench, prep.launch, read),
                                launch_timer(bench, launch_k5, read), bench.clock,
                                budget_s, max_pairs)
        prep.ops.poison()
        for _ in range(burst):
            prep.launch()
        again = check(prep.ops)
    level_ms = sorted(p.level_ms for p in pairs)
    ref_ms = sorted(p.ref_ms for p in pairs)
    lvl_clock = clock_summary([p.level_clock for p in pairs])
    ref_clock = clock_summary([p.ref_clock for p in pairs])
    fields = paired_fields(pairs, bench.device.sm_clock_max_mhz, stop, budget_s)
    return {"tflops": tflops_of(flops, level_ms[len(level_ms) // 2]),
            "ref_tflops": tflops_of(flops, ref_ms[len(ref_ms) // 2]),
            "ref_verified": k5_err < 1e-4, "ref_rel_err": k5_err,
            "verified": prep.verified, "rel_err": prep.acc.rel_err,
            "burst_verified": again.verified(level.precision), "burst_rel_err": again.rel_err,
            "regs": prep.info.get("regs"), "local_bytes": prep.info.get("local_bytes"),
            "ref_regs": int(kernel.num_regs), "code_key": prep.info.get("code_key"),
            "sm_clock": lvl_clock["sm_clock_mhz_avg"],
            "ref_sm_clock": ref_clock["sm_clock_mhz_avg"],
            **{k: fields[k] for k in ("pct_of_reference", "pct_ci_low", "pct_ci_high",
                                      "pairs", "stop_reason", "throttled_pairs")}}


def compile_k5(path: str) -> Any:
    from gemmscope.kernels.device.gpu import require_cupy
    from gemmscope.kernels.toolchain import nvrtc

    cp = require_cupy()
    module = cp.RawModule(code=k5_source(path), options=nvrtc.BASE_OPTIONS,
                          name_expressions=[K5_NAME])
    return module.get_function(K5_NAME)

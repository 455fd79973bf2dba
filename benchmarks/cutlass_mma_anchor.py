"""The mma.sync anchor of issue 42's mma_tma row: CUTLASS's own sm80 GEMMs (mma.sync
m16n8k16, FP16 in, FP32 accumulate, FP16 C; cp.async multistage pipelines), built from the
CUTLASS headers of the DeepGEMM anchor (../shared/anchors), timed on this GPU in one loop
with mma_tma and cuBLAS FP16 (B as Bt, the layout mma_tma and these kernels read). It
answers: how close does the field's mma.sync GEMM come to cuBLAS (wgmma) here, and where
does mma_tma stand beside it?

    python benchmarks/cutlass_mma_anchor.py --build DIR --anchor TGZ  # nvcc, no GPU
    python benchmarks/cutlass_mma_anchor.py --lib DIR/libgs_cutlass_mma.so [--sizes 4096,8192]
    python benchmarks/cutlass_mma_anchor.py --smoke  # CI: arguments and the table, no GPU

The CUTLASS kernels are instantiated from its public device-level template
(cutlass::gemm::device::Gemm) with the tile shapes its sm80 FP16 profiler lists; nothing
of CUTLASS's is copied here. Each round times one launch of each candidate as the burst
loop does (L2 flushed first, its own CUDA events, the SM clock read while it runs), the
candidates' order turning each round; a candidate's time is the median over the rounds,
and its ratio the median of its per-round ratios to cuBLAS.
Every candidate is checked against cuBLAS's C first (relative Frobenius difference).
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import _smoke
from _anchors import deepgemm_folder
from _args import count, level_ids, square_sizes


class Config(NamedTuple):
    name: str
    block: tuple[int, int, int]  # threadblock M, N, K
    warp: tuple[int, int, int]  # warp M, N, K
    stages: int
    swizzle: int  # GemmIdentityThreadblockSwizzle's N: tile columns walked together


# the tile shapes of CUTLASS's sm80 FP16 Tensor Core GEMMs the nearest to mma_tma's
# (128 x 256 blocks of 64 x 64 warp tiles)
CONFIGS = [
    Config("128x256x64_s3", (128, 256, 64), (64, 64, 64), 3, 1),
    Config("128x256x64_s3_g8", (128, 256, 64), (64, 64, 64), 3, 8),
    Config("256x128x64_s3_g8", (256, 128, 64), (64, 64, 64), 3, 8),
    Config("128x256x32_s4_g8", (128, 256, 32), (64, 64, 32), 4, 8),
    Config("128x128x64_s4_g8", (128, 128, 64), (64, 64, 64), 4, 8),
]
LIB = "libgs_cutlass_mma.so"
TOLERANCE = 2e-3  # FP16 C: the levels' FP16 tolerance (kernels/ladder/level.py)

SOURCE_HEAD = r"""// Written by benchmarks/cutlass_mma_anchor.py: CUTLASS's sm80 GEMMs as a
// measuring instrument, instantiated from its device-level template.
#include <cuda_runtime.h>
#include "cutlass/gemm/device/gemm.h"
#include "cutlass/epilogue/thread/linear_combination.h"

template <int TM, int TN, int TK, int WM, int WN, int WK, int S, int G>
using GsAnchor = cutlass::gemm::device::Gemm<
    cutlass::half_t, cutlass::layout::RowMajor,       // A: M x K
    cutlass::half_t, cutlass::layout::ColumnMajor,    // B: K x N by columns, i.e. Bt (N x K)
    cutlass::half_t, cutlass::layout::RowMajor,       // C: M x N, FP16
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<TM, TN, TK>, cutlass::gemm::GemmShape<WM, WN, WK>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<G>, S>;

template <class Op>
static int gs_run(int M, int N, int K, const void* a, const void* bt, void* c, void* stream) {
    using T = cutlass::half_t;
    typename Op::Arguments args({M, N, K}, {static_cast<const T*>(a), K},
                                {static_cast<const T*>(bt), K}, {static_cast<T*>(c), N},
                                {static_cast<T*>(c), N}, {1.0f, 0.0f});
    Op op;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (op.can_implement(args) != cutlass::Status::kSuccess) return 1;
    if (op.initialize(args, nullptr, s) != cutlass::Status::kSuccess) return 2;
    return op.run(s) == cutlass::Status::kSuccess ? 0 : 3;
}

extern "C" int gs_cutlass_mma(int config, int M, int N, int K, const void* a, const void* bt,
                              void* c, void* stream) {
    switch (config) {
"""


def source() -> str:
    """The instrument's CUDA source: one case per CONFIGS entry."""
    cases = []
    for i, c in enumerate(CONFIGS):
        params = ", ".join(str(v) for v in (*c.block, *c.warp, c.stages, c.swizzle))
        cases.append(f"    case {i}: return gs_run<GsAnchor<{params}>>(M, N, K, a, bt, c, "
                     "stream);")
    return SOURCE_HEAD + "\n".join(cases) + "\n    }\n    return 4;\n}\n"


def build(folder: Path, anchor: Path, nvcc: str = "nvcc") -> Path:
    """Compiles the instrument into folder/LIB with nvcc (sm_90a: the sm80 kernels run on
    Hopper as they are); the CUTLASS headers from the DeepGEMM anchor (its folder or its
    tarball, as fp8_side_by_side.py takes it)."""
    include = deepgemm_folder(str(anchor)) / "deep_gemm" / "include"
    if not (include / "cutlass").is_dir():
        raise SystemExit(f"{anchor} holds no deep_gemm/include/cutlass/")
    folder.mkdir(parents=True, exist_ok=True)
    cu = folder / "gs_cutlass_mma.cu"
    cu.write_text(source(), encoding="utf-8")
    out = folder / LIB
    subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90a", "--shared",
                    "-Xcompiler", "-fPIC", "-I", str(include), str(cu), "-o", str(out)],
                   check=True, timeout=1800)
    return out


class Row(NamedTuple):
    name: str
    size: int
    tflops: float
    cublas_tflops: float
    ratio: float
    low: float
    high: float
    rel_diff: float  # C's relative Frobenius difference from `against`'s
    against: str  # "cuBLAS" (a CUTLASS kernel: cuBLAS's C) or "float64" (a level's check)
    mhz: float | None  # the mean SM clock read while its launches ran (NVML)


def measure(lib_path: Path, sizes: list[int], rounds: int, levels: list[str]) -> list[Row]:
    """Checks every candidate at each size, then times them in one loop with cuBLAS."""
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock

    lib = ctypes.CDLL(str(lib_path))
    fn = lib.gs_cutlass_mma
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int] * 4 + [ctypes.c_void_p] * 4
    bench = Bench(device_info(), wall_clock())
    return [row for size in sizes for row in _measure_size(bench, fn, size, rounds, levels)]


def _measure_size(bench: Any, fn: Any, size: int, rounds: int, levels: list[str]) -> list[Row]:
    from gemmscope.kernels.device.gpu import require_cupy
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.ladder.shape import Shape

    cp = require_cupy()
    M = N = K = size
    with bench.stream:
        rng = cp.random.default_rng(7)
        a = rng.uniform(-1, 1, (M, K), dtype=cp.float32).astype(cp.float16)
        bt = rng.uniform(-1, 1, (N, K), dtype=cp.float32).astype(cp.float16)
        c = cp.empty((M, N), cp.float16)
        ref = cp.matmul(a, bt.T).astype(cp.float32)
        ref_norm = float(cp.linalg.norm(ref))
        stream = bench.stream.ptr
        cands: dict[str, Any] = {"cublas_fp16_bt": lambda: cp.matmul(a, bt.T, out=c)}
        diffs: dict[str, float] = {"cublas_fp16_bt": 0.0}
        for i, cfg in enumerate(CONFIGS):
            def run(i: int = i) -> int:
                return int(fn(i, M, N, K, a.data.ptr, bt.data.ptr, c.data.ptr, stream))
            c.fill(cp.nan)
            status = run()
            if status != 0:
                print(f"{cfg.name} {size}: CUTLASS refused (status {status}): left out")
                continue
            diffs[cfg.name] = float(cp.linalg.norm(c.astype(cp.float32) - ref)) / ref_norm
            if not diffs[cfg.name] <= TOLERANCE:
                print(f"{cfg.name} {size}: C differs from cuBLAS's by "
                      f"{diffs[cfg.name]:.2e}: left out")
                continue
            cands[cfg.name] = run
        for level_id in levels:
            prep = bench.prepare(registry.get(level_id), M, N, K, None, warmup=2)
            if not prep.acc.verified(prep.level.precision):
                print(f"{level_id} {size}: not verified ({prep.acc.rel_err:.2e}): left out")
                continue
            diffs[level_id] = prep.acc.rel_err
            cands[level_id] = prep.launch
        times, clocks = _time(bench, cands, rounds)
    shape = Shape(M, N, K)
    base = times["cublas_fp16_bt"]
    rows = []
    for name, ms in times.items():
        ratios = [b / x for b, x in zip(base, ms, strict=True)]
        rows.append(Row(name, size, shape.tflops(statistics.median(ms)),
                        shape.tflops(statistics.median(base)), statistics.median(ratios),
                        min(ratios), max(ratios), diffs[name],
                        "float64" if name in levels else "cuBLAS",
                        statistics.mean(clocks[name]) if clocks[name] else None))
    return rows


def _time(bench: Any, cands: dict[str, Any], rounds: int) -> tuple[dict[str, list[float]],
                                                                    dict[str, list[float]]]:
    """ms of each candidate's launch and the SM clock (MHz) read while it ran, one of each
    a round, each launch timed as the burst loop times it (kernels/engine/paired.py's
    launch_timer: L2 flushed first, its own events); the order turns each round."""
    from gemmscope.kernels.engine.paired import clock_reader, launch_timer

    read_clock = clock_reader(bench)
    timers = {n: launch_timer(bench, fn, read_clock) for n, fn in cands.items()}
    names = list(cands)
    ms: dict[str, list[float]] = {n: [] for n in names}
    mhz: dict[str, list[float]] = {n: [] for n in names}
    for fn in cands.values():  # warm: every kernel loaded, clocks up
        for _ in range(3):
            fn()
    bench.stream.synchronize()
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t, reading = timers[name]()
            ms[name].append(t)
            if reading.sm_clock_mhz is not None:
                mhz[name].append(reading.sm_clock_mhz)
    return ms, mhz


def table(rows: list[Row]) -> str:
    lines = [f"{'candidate':<20} {'size':>5} {'TFLOPS':>8} {'cuBLAS':>8} "
             f"{'/ cuBLAS':>9} {'[least, most]':>16} {'MHz':>5}  C against"]
    for r in rows:
        lines.append(f"{r.name:<20} {r.size:>5} {r.tflops:>8.1f} {r.cublas_tflops:>8.1f} "
                     f"{r.ratio * 100:>8.1f}% [{r.low * 100:5.1f}, {r.high * 100:5.1f}] "
                     f"{'-' if r.mhz is None else f'{r.mhz:.0f}':>5} "
                     f"{r.rel_diff:.1e} ({r.against})")
    return "\n".join(lines)


def made_up_rows() -> list[Row]:
    """Rows as measure() makes them, the figures made up (--smoke)."""
    return [Row("cublas_fp16_bt", 4096, 745.0, 745.0, 1.0, 1.0, 1.0, 0.0, "cuBLAS", 1980.0),
            Row(CONFIGS[0].name, 4096, 480.0, 745.0, 0.644, 0.64, 0.65, 0.0, "cuBLAS", 1980.0),
            Row("mma_tma", 4096, 526.0, 745.0, 0.706, 0.70, 0.71, 2.5e-4, "float64", None)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path, metavar="DIR", help="compile the instrument (nvcc)")
    ap.add_argument("--anchor", type=Path,
                    help="the DeepGEMM anchor, its folder or tarball (its CUTLASS)")
    ap.add_argument("--lib", type=Path, help="the compiled instrument, to time (GPU)")
    ap.add_argument("--sizes", type=square_sizes, default="4096,8192",
                    help="square sizes (default 4096,8192)")
    ap.add_argument("--rounds", type=count, default=50)
    ap.add_argument("--levels", type=level_ids(), default="mma_tma",
                    help="ladder levels in the same loop")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    sizes = args.sizes
    levels = args.levels
    if args.smoke:
        assert "case 4: return gs_run<GsAnchor<128, 128, 64, 64, 64, 64, 4, 8>>" in source()
        print(f"smoke: the instrument's source has {len(CONFIGS)} CUTLASS configurations")
        _smoke.level_variants((lv, {}) for lv in levels)
        _smoke.made_up(table(made_up_rows()))
        return _smoke.needs_gpu()
    if args.build is not None:
        if args.anchor is None:
            ap.error("--build needs --anchor (the DeepGEMM anchor's tarball)")
        print(f"built {build(args.build, args.anchor)}")
        return 0
    if args.lib is None:
        ap.error("give --build DIR --anchor TGZ, or --lib PATH to time")
    rows = measure(args.lib, sizes, args.rounds, levels)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

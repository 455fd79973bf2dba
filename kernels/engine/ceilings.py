"""``gemmscope record --ceilings``: probe what this GPU sustains and record it as one
``ceilings`` event (kernels/protocol/ceilings.py), the roofline's measured roofs.

The probes (kernels/cuda/probes/): DRAM read and copy bandwidth over buffers far larger
than L2; FP32 FFMA; mma.sync for FP16, BF16, TF32 (and FP8 from sm_89); on sm_90 also
wgmma from shared memory for BF16, FP16, TF32 and FP8, since Hopper's peak needs wgmma. Each compute
probe is calibrated to run about ``target_ms`` and timed with CUDA events (median of
``repeats``); a few seconds in all. Runs in the record process after the runner has gone,
with NVML sampled meanwhile (like the ncu steps)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..device.gpu import require_cupy
from ..device.telemetry import Nvml
from ..protocol import ceilings as event
from ..toolchain import nvrtc

PROBES_DIR = Path(__file__).resolve().parents[1] / "cuda" / "probes"
MAX_BUFFER_BYTES = 1 << 30  # each of the two bandwidth buffers (L2 is at most ~126 MB)
# FLOPs one warp (mma.sync) or warpgroup (wgmma) does per instruction
MMA = {"fp16": ("gs_probe_mma_fp16", "mma.sync m16n8k16 f16", 2 * 16 * 8 * 16),
       "bf16": ("gs_probe_mma_bf16", "mma.sync m16n8k16 bf16", 2 * 16 * 8 * 16),
       "tf32": ("gs_probe_mma_tf32", "mma.sync m16n8k8 tf32", 2 * 16 * 8 * 8),
       "fp8": ("gs_probe_mma_fp8", "mma.sync m16n8k32 e4m3", 2 * 16 * 8 * 32)}
WGMMA = {"bf16": ("gs_probe_wgmma_bf16", "wgmma m64n256k16 bf16", 2 * 64 * 256 * 16),
         "fp16": ("gs_probe_wgmma_fp16", "wgmma m64n256k16 f16", 2 * 64 * 256 * 16),
         "tf32": ("gs_probe_wgmma_tf32", "wgmma m64n256k8 tf32", 2 * 64 * 256 * 8),
         "fp8": ("gs_probe_wgmma_fp8", "wgmma m64n128k32 e4m3", 2 * 64 * 128 * 32)}
# the SASS instruction each tensor probe's FLOP count is made of (its mnemonic's start):
# a probe whose compiled code lacks them measures something else and is no ceiling
# (mma.sync e4m3 on sm_90 compiles to F2FP conversions and FP16 HMMA, which the compiler
# folds: it read 1716 TFLOPS on the H200, and there is no QMMA on Hopper to time)
NATIVE = {"mma.sync m16n8k16 f16": "HMMA.16816.F32", "mma.sync m16n8k16 bf16": "HMMA.16816",
          "mma.sync m16n8k8 tf32": "HMMA.1688", "mma.sync m16n8k32 e4m3": "QMMA.16832",
          "wgmma m64n256k16 bf16": "HGMMA.64x256x16.F32.BF16",
          "wgmma m64n256k16 f16": "HGMMA.64x256x16.F32",
          "wgmma m64n256k8 tf32": "HGMMA.64x256x8.F32.TF32",
          "wgmma m64n128k32 e4m3": "QGMMA.64x128x32"}
MMA_PER_ITER = 16  # 4 rounds of 4 independent accumulators
WGMMA_PER_ITER = 8
FFMA_PER_ITER = 16 * 8


def probe_source(name: str) -> str:
    """A probe file with its headers pasted in (ceilings_hopper.cu includes hopper.cuh),
    as the levels are assembled (kernels/toolchain/nvrtc.py)."""
    return nvrtc.assemble_file(PROBES_DIR / name)


class Probes:
    """The probe kernels compiled for the current device, and a timer."""

    def __init__(self, cp: Any, repeats: int = 5, target_ms: float = 25.0):
        self.cp = cp
        dev = cp.cuda.Device()
        self.cc = dev.compute_capability  # "90"
        attrs = dev.attributes
        self.sms = int(attrs["MultiProcessorCount"])
        self.threads_per_sm = int(attrs["MaxThreadsPerMultiProcessor"])
        self.repeats, self.target_ms = repeats, target_ms
        self.module = cp.RawModule(code=probe_source("ceilings.cu"), options=("-std=c++17",))
        self.hopper = (cp.RawModule(code=probe_source("ceilings_hopper.cu"),
                                    options=("-std=c++17", "-arch=sm_90a"))
                       if self.cc == "90" else None)
        self._sass: dict[str, dict[str, dict[str, int]] | None] = {}

    def not_native(self, file: str, function: str, instruction: str, per_iter: int
                   ) -> str | None:
        """Why the probe's compiled code is not the instruction its FLOPs count (fewer
        than ``per_iter`` of NATIVE[instruction] in its SASS), or None. Compiled offline
        with the same NVRTC and options for this device; where that cannot be done here
        (no NVRTC bindings or nvdisasm), None: the probe is timed as before."""
        mnemonics = self._mnemonics(file)
        if mnemonics is None or function not in mnemonics:
            return None
        want = NATIVE[instruction]
        found = sum(n for m, n in mnemonics[function].items() if m.startswith(want))
        if found >= per_iter:
            return None
        tensor = sorted(m for m in mnemonics[function] if "MMA" in m and m != "HFMA2.MMA")
        return (f"not a ceiling: for sm_{self.cc} the compiler made {found} {want} of "
                f"{per_iter} ({', '.join(tensor) or 'no tensor instruction'} instead)")[:300]

    def _mnemonics(self, file: str) -> dict[str, dict[str, int]] | None:
        if file not in self._sass:
            self._sass[file] = _offline_mnemonics(file, self.cc)
        return self._sass[file]

    def time_ms(self, launch: Callable[[], None]) -> float:
        cp = self.cp
        launch()
        times = []
        for _ in range(self.repeats):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            launch()
            b.record()
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b))
        return statistics.median(times)

    def calibrated(self, launch: Callable[[int], None]) -> tuple[int, float]:
        """(iterations, ms) of a compute probe run for about ``target_ms``."""
        iters = 64
        ms = self.time_ms(lambda: launch(iters))
        iters = max(16, min(1 << 22, int(iters * self.target_ms / max(ms, 1e-3))))
        return iters, self.time_ms(lambda: launch(iters))


def _offline_mnemonics(file: str, cc: str) -> dict[str, dict[str, int]] | None:
    """Per function of the probe file compiled for ``sm_<cc>`` (sm_90a for the wgmma file),
    the count of each SASS mnemonic; None where NVRTC's bindings or nvdisasm are missing."""
    from collections import Counter

    from ..toolchain import sass

    arch = "sm_90a" if file == "ceilings_hopper.cu" else f"sm_{cc}"
    try:
        built = nvrtc.compile_source(file.removesuffix(".cu"), probe_source(file), [],
                                     ("-std=c++17", f"-arch={arch}"), arch)
        if sass.nvdisasm_missing() is not None:
            return None
        texts = sass.disassemble(built.cubin)
    except Exception:  # the check cannot be made here: the probes are timed as before
        return None
    return {name: dict(Counter(ln.mnemonic for ln in sass.parse(text)))
            for name, text in texts.items()}


def _no_ceiling(name: str, precision: str, instruction: str, why: str) -> dict[str, Any]:
    """A tensor probe that was not timed (:meth:`Probes.not_native`): no TFLOPS, the reason."""
    return {"name": name, "precision": precision, "instruction": instruction,
            "tflops": None, "reason": why}


def run_probes(p: Probes, clock: Callable[[], float | None]) -> dict[str, Any]:
    """Every probe; the ``ceilings`` event's fields (without ``type`` and ``t``)."""
    cp = p.cp
    import numpy as np

    probes: list[dict[str, Any]] = []
    read_gbs, copy_gbs, nbytes = _bandwidth(p, clock, probes)
    per_sm = max(1, p.threads_per_sm // 256)
    grid, block = p.sms * per_sm, 256
    out = cp.empty(grid * block, dtype=cp.float32)
    ffma = p.module.get_function("gs_probe_ffma")
    iters, ms = p.calibrated(lambda n: ffma((grid,), (block,), (
        out, np.int32(n), np.float32(0.999), np.float32(1e-3), np.int32(0))))
    flops = grid * block * iters * FFMA_PER_ITER * 2
    probes.append({"name": "ffma", "precision": "fp32", "instruction": "FFMA",
                   "tflops": flops / ms / 1e9, "ms": ms, "sm_clock_mhz": clock()})
    warps = grid * block // 32
    for precision, (name, instruction, per) in MMA.items():
        if precision == "fp8" and int(p.cc) < 89:
            continue
        why = p.not_native("ceilings.cu", name, instruction, MMA_PER_ITER)
        if why is not None:
            probes.append(_no_ceiling(f"mma.sync {precision}", precision, instruction, why))
            continue
        kernel = p.module.get_function(name)

        def mma_launch(n: int, k: Any = kernel) -> None:
            k((grid,), (block,), (out, np.int32(n), np.uint32(0x3C003C00), np.int32(0)))

        iters, ms = p.calibrated(mma_launch)
        flops = warps * iters * MMA_PER_ITER * per
        probes.append({"name": f"mma.sync {precision}", "precision": precision,
                       "instruction": instruction, "tflops": flops / ms / 1e9, "ms": ms,
                       "sm_clock_mhz": clock()})
    if p.hopper is not None:
        tiles = cp.asarray(np.random.default_rng(1).integers(0x3000, 0x3C00, (320 * 64,),
                                                             dtype=np.uint16))
        for precision, (name, instruction, per) in WGMMA.items():
            why = p.not_native("ceilings_hopper.cu", name, instruction, WGMMA_PER_ITER)
            if why is not None:
                probes.append(_no_ceiling(f"wgmma {precision}", precision, instruction, why))
                continue
            kernel = p.hopper.get_function(name)

            def wgmma_launch(n: int, k: Any = kernel) -> None:
                k((p.sms,), (256,), (tiles, out, np.int32(n), np.int32(0)))

            iters, ms = p.calibrated(wgmma_launch)
            flops = p.sms * 2 * iters * WGMMA_PER_ITER * per
            probes.append({"name": f"wgmma {precision}", "precision": precision,
                           "instruction": instruction, "tflops": flops / ms / 1e9,
                           "ms": ms, "sm_clock_mhz": clock()})
    peaks: dict[str, float] = {}
    for probe in probes:
        if probe["precision"] and probe.get("tflops") is not None:
            peaks[probe["precision"]] = max(peaks.get(probe["precision"], 0.0),
                                            probe["tflops"])
    return {"bandwidth_gbs": max(read_gbs, copy_gbs), "read_gbs": read_gbs,
            "copy_gbs": copy_gbs, "peak_tflops": peaks, "probes": probes,
            "buffer_bytes": nbytes}


def _bandwidth(p: Probes, clock: Callable[[], float | None],
               probes: list[dict[str, Any]]) -> tuple[float, float, int]:
    """DRAM read and copy GB/s over two buffers of up to MAX_BUFFER_BYTES (random data:
    no compression helps), and the buffer's bytes; the probes appended to ``probes``."""
    import numpy as np

    cp = p.cp
    free = cp.cuda.runtime.memGetInfo()[0]
    nbytes = int(min(MAX_BUFFER_BYTES, free // 4)) // 16 * 16
    n4 = nbytes // 16
    src = cp.random.random(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    blocks, threads = p.sms * 4, 512
    partial = cp.empty(blocks * threads, dtype=cp.float32)
    read = p.module.get_function("gs_probe_read")
    copy = p.module.get_function("gs_probe_copy")
    ms = p.time_ms(lambda: read((blocks,), (threads,), (src, np.uint64(n4), partial)))
    read_gbs = nbytes / ms / 1e6
    probes.append({"name": "dram read", "precision": "", "instruction": "ld.global.cs.v4",
                   "gbs": read_gbs, "ms": ms, "sm_clock_mhz": clock()})
    ms = p.time_ms(lambda: copy((blocks,), (threads,), (src, dst, np.uint64(n4))))
    copy_gbs = 2 * nbytes / ms / 1e6
    probes.append({"name": "dram copy", "precision": "", "instruction": "ld/st.global.cs.v4",
                   "gbs": copy_gbs, "ms": ms, "sm_clock_mhz": clock()})
    return read_gbs, copy_gbs, nbytes


class CeilingsStep:
    """The profiling step of ``record --ceilings`` (kernels/cli/main.py ProfileStep)."""

    def __init__(self, target_ms: float = 25.0) -> None:
        self.target_ms = target_ms
        self.failed: list[str] = []
        self.found: dict[str, Any] | None = None

    def check(self) -> None:
        for name in ("ceilings.cu", "ceilings_hopper.cu"):
            if not (PROBES_DIR / name).is_file():
                raise FileNotFoundError(f"the ceiling probes are missing: {PROBES_DIR / name}")

    def __call__(self, now: Callable[[], float],
                 emit: Callable[[dict[str, Any]], None]) -> None:
        try:
            cp = require_cupy()
            nvml = Nvml(gpm=False)

            def clock() -> float | None:
                value = nvml.sample().get("sm_clock_mhz")
                return float(value) if isinstance(value, int | float) else None

            fields = run_probes(Probes(cp, target_ms=self.target_ms), clock)
            nvml.close()
        except Exception as exc:  # a probe that cannot run is said, the recording kept
            self.failed.append("ceilings")
            emit({"type": "info", "t": now(), "message": f"ceilings: {exc}"[:500]})
            return
        self.found = fields
        ev = {"type": event.TYPE, "t": now(), **fields}
        emit(ev)

    def summary(self) -> str:
        if self.found is None:
            return "ceilings: not measured" + (" (failed)" if self.failed else "")
        f = self.found
        peaks = ", ".join(f"{k.upper()} {v:.1f}" for k, v in f["peak_tflops"].items())
        return (f"ceilings: DRAM {f['bandwidth_gbs']:.0f} GB/s (read {f['read_gbs']:.0f}, "
                f"copy {f['copy_gbs']:.0f}); {peaks} TFLOPS")

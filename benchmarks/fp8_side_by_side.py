"""DeepGEMM, the FP8 levels and cuBLASLt FP8 in one timing loop per shape (GPU machine;
written for issue 34).

    python3 benchmarks/fp8_side_by_side.py DEEPGEMM [--out DIR] [--repeats 15]
        [--shapes 8192x8192x8192,...] [--levels fp8_block_scaled,fp8_stream_k,fp8_deep]
        [--variant 'fp8_deep CL=1={"CL": 1}'] [--no-check] [--deepgemm-no-multicast]
        [--variant 'fp8_deep ring={}' --variant-source 'fp8_deep ring=attempts/ring']
    python3 benchmarks/fp8_side_by_side.py --smoke  # CI: arguments and the table, no GPU

DEEPGEMM is deepseek-ai/DeepGEMM's Python package as the anchors hold it: the tarball
(extracted to a temporary folder) or a folder that holds ``deep_gemm/``. Nothing of it is
copied here; it is imported from there (its JIT compiles with the machine's nvcc; set
DG_JIT_CACHE_DIR to keep its cubins, a temporary folder otherwise).

Two phases, each in a child process of this script (a kernel that faults poisons its
process's CUDA context; a hang is ended by the child's time limit):

1. check (unless --no-check): each level and variant at odd shapes (ragged M and N, an odd
   tile count, N % 8 != 0, one K block), verified against a float64 product;
2. time: per shape, every candidate is prepared (fresh inputs, one poisoned launch verified
   against float64 of the dequantized inputs, a warm-up launch), then all of them run in
   ONE loop: for each of the --repeats rounds, each candidate in turn gets an L2 flush and
   one launch between CUDA events; the median of its rounds is its time. The SM clock is
   read by NVML right after each launch is queued (the GPU is then running the flush and
   the launch) and averaged per candidate. Before each flush the GPU spins for 1 ms, so
   that every launch's host-side work is queued before its start event and not timed
   (DeepGEMM's Python wrapper encodes four tensor maps per call: without the wait its
   4096^3 read 790 TFLOPS instead of about 1340). After the loop each output is verified again.
   DeepGEMM gets the very inputs of the first block-scaled level (E4M3 A and Bt, FP32
   scales per 1 x 128 of A and per 128 x 128 of Bt) and is checked against the same
   float64 product, and with its own calc_diff against a BF16 torch product.

--variant-source 'LABEL=DIR' builds a variant from DIR's copy of its level's kernel source
(the rest of kernels/cuda included as usual): an attempt timed in the same loop as the level
it would replace, checked first at every odd shape like a new level.

--deepgemm-no-multicast adds "DeepGEMM MC=1": DeepGEMM with its own tile, stages and grid
but no 2-CTA multicast (its config picker's answer taken with the multicast set to one CTA,
for its calls only), to tell what its clusters are worth beside the levels' one-CTA form.

Every candidate writes C as BF16 (DeepGEMM, the levels, cuBLASLt FP8): like for like.
Results go to DIR/fp8_side_by_side.jsonl; the table is printed last.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _smoke
from _anchors import deepgemm_folder
from _args import count, level_ids, shapes

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 2112, 7168), (4096, 24576, 1536),
          (4096, 32768, 512), (4096, 7168, 16384), (4096, 4096, 7168), (4096, 7168, 2048)]
LEVELS = ["fp8_block_scaled", "fp8_stream_k", "fp8_deep"]
REFS = ["cublaslt_fp8_blocks", "cublaslt_fp8"]
CHECK_SHAPES = [(7, 13, 128), (100, 100, 256), (1000, 999, 1024), (4099, 4104, 512),
                (4099, 17, 512), (129, 264, 384), (384, 2112, 1024), (300, 2112, 256),
                (4099, 4097, 2048), (513, 2120, 640)]
# one thread that waits `ns` nanoseconds of the GPU's global timer
SPIN_SOURCE = r"""
extern "C" __global__ void gs_spin(long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""
VARIANT_CHECK_SHAPES = [CHECK_SHAPES[i] for i in (0, 3, 7, 8)]
NEW_LEVELS = ("fp8_deep",)  # the levels checked at odd shapes before timing


def checked(args: argparse.Namespace) -> list[str]:
    """Labels of the candidates checked before timing: the new levels and their variants."""
    return [lab for lab, lid, _ in candidates(args.levels, args.variant) if lid in NEW_LEVELS]


def parse_sources(items: list[str], labels: list[str]) -> dict[str, Path]:
    """--variant-source 'LABEL=DIR' items: the variant's label (which may hold '=', as in
    'fp8_deep ring CL=2': split at the last one) and the folder its level's kernel source
    is taken from. A label no variant has, or a folder that does not exist, is refused
    here, before any child starts."""
    out: dict[str, Path] = {}
    for item in items:
        label, sep, folder = item.rpartition("=")
        label = label.strip()
        if not sep or not folder:
            raise SystemExit(f"--variant-source {item!r}: give LABEL=DIR")
        if label not in labels:
            raise SystemExit(f"--variant-source {item!r}: no --variant is labelled {label!r}")
        if not Path(folder).is_dir():
            raise SystemExit(f"--variant-source {item!r}: {folder} is not a folder")
        out[label] = Path(folder).resolve()
    return out


def variant_sources(args: argparse.Namespace) -> dict[str, Path]:
    """The --variant-source folders of this run's variants, by label (parse_sources)."""
    return parse_sources(args.variant_source,
                         [label for label, _, _ in candidates([], args.variant)])


def built(level: Any, label: str, sources: dict[str, Path]) -> Any:
    """The level a candidate runs: its source from the variant's folder where one is given
    (the code key follows the source, so its build is never the level's)."""
    if label not in sources:
        return level
    if not (sources[label] / level.source).is_file():
        raise SystemExit(f"--variant-source for {label!r}: {sources[label] / level.source} "
                         "does not exist")
    return dataclasses.replace(level, source_dir=str(sources[label]))


def level_for(lid: str, changes: dict[str, int], label: str, sources: dict[str, Path],
              M: int, N: int, K: int, sm_count: int) -> Any:
    """A candidate's level at M x N x K: the level's own parameters for the shape, the
    variant's changes over them, its source where the variant names one."""
    from gemmscope.kernels.ladder import registry

    lv = registry.get(lid).for_shape(M, N, K, sm_count)
    return built(lv.with_params(changes) if changes else lv, label, sources)


def check_shapes(label: str, changes: dict[str, int], sources: dict[str, Path]) -> list:
    """The odd shapes a candidate is checked at: all of them for a level and for a variant
    with its own source, a few for a variant that only changes parameters."""
    return CHECK_SHAPES if not changes or label in sources else VARIANT_CHECK_SHAPES


VARIANT_FORM = 'give \'LEVEL WORDS={"PARAM": INTEGER, ...}\', e.g. \'fp8_deep GW=8={"GW": 8}\''


def candidates(levels: list[str], variants: list[str]) -> list[tuple[str, str, dict[str, int]]]:
    """(label, level id, parameter changes): the levels as registered (parameters picked
    per shape), then each variant 'LABEL=JSON' (its level id the label's first word). A
    variant in another form is refused in one line."""
    out = [(lv, lv, {}) for lv in levels]
    for v in variants:
        label, sep, js = v.partition("={")
        try:
            changes = json.loads("{" + js) if sep and label.strip() else None
        except ValueError:
            changes = None
        if not (isinstance(changes, dict)
                and all(type(x) is int for x in changes.values())):
            raise SystemExit(f"--variant {v!r}: {VARIANT_FORM}")
        out.append((label.strip(), label.split()[0], changes))
    return out


def refuse_unmade(args: argparse.Namespace) -> None:
    """Each level and variant made as the registry makes it, before any child starts: a
    label whose first word is no level, a parameter its level lacks or a value it refuses
    is said in one line here, not as a child's traceback and an empty table."""
    from gemmscope.kernels.ladder import registry

    for label, lid, changes in candidates(args.levels, args.variant):
        try:
            registry.get(lid).with_params(changes)
        except (KeyError, ValueError) as e:
            raise SystemExit(f"{label!r}: {e.args[0] if e.args else e}") from None


# ------------------------------------------------------------------ children
def child_check(args: argparse.Namespace) -> None:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock

    bench = Bench(device_info(), wall_clock())
    sources = variant_sources(args)
    for label, lid, changes in candidates(args.levels, args.variant):
        if label not in checked(args):
            continue
        for M, N, K in check_shapes(label, changes, sources):
            lv = level_for(lid, changes, label, sources, M, N, K, bench.device.sm_count)
            with bench.stream:
                prep = bench.prepare(lv, M, N, K, dict(lv.params), warmup=1)
            print(json.dumps({"phase": "check", "label": label, "shape": [M, N, K],
                              "params": lv.params, "verified": prep.verified,
                              "rel_err": prep.acc.rel_err,
                              "deepgemm_diff": prep.acc.deepgemm_diff}), flush=True)


def child_time(args: argparse.Namespace) -> None:
    import cupy as cp
    import numpy as np
    import pynvml
    import torch

    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.engine.operands import check
    from gemmscope.kernels.ladder.shape import Shape

    sys.path.insert(0, str(args.dg_folder))
    import deep_gemm

    spin = cp.RawKernel(SPIN_SOURCE, "gs_spin")
    pynvml.nvmlInit()
    nv = pynvml.nvmlDeviceGetHandleByIndex(0)
    bench = Bench(device_info(), wall_clock())
    sms = bench.device.sm_count
    stream = torch.cuda.ExternalStream(bench.stream.ptr)
    excluded = set(args.exclude)
    sources = variant_sources(args)
    for M, N, K in args.shapes:
        flops = Shape(M, N, K).flops
        runs: dict[str, dict[str, Any]] = {}
        with bench.stream:
            for label, lid, changes in candidates(args.levels, args.variant) + \
                    [(r, r, {}) for r in REFS]:
                if label in excluded:
                    continue
                lv = level_for(lid, changes, label, sources, M, N, K, sms)
                prep = bench.prepare(lv, M, N, K, dict(lv.params) if lv.params else None,
                                     warmup=1)
                runs[label] = {"prep": prep, "launch": prep.launch, "params": dict(lv.params),
                               "verified": prep.verified, "rel_err": prep.acc.rel_err,
                               "deepgemm_diff": prep.acc.deepgemm_diff}
            # DeepGEMM on the first block-scaled level's inputs
            src = next(r["prep"].ops for r in runs.values()
                       if r["prep"].level.scaling.value == "blocks"
                       and r["prep"].level.library is None)
            dg_launch, dg_check = deepgemm_run(deep_gemm, src, stream)
            dg_runs = {"DeepGEMM": {"launch": dg_launch, "params": {}, **dg_check()}}
            checks = {"DeepGEMM": dg_check}
            if args.deepgemm_no_multicast:
                mc1_launch, mc1_check = deepgemm_run(deep_gemm, src, stream, multicast=False)
                dg_runs["DeepGEMM MC=1"] = {"launch": mc1_launch, "params": {"multicast": 1},
                                            **mc1_check()}
                checks["DeepGEMM MC=1"] = mc1_check
            runs = {**dg_runs, **runs}
            names = list(runs)
            starts = {n: [cp.cuda.Event() for _ in range(args.repeats)] for n in names}
            ends = {n: [cp.cuda.Event() for _ in range(args.repeats)] for n in names}
            clocks: dict[str, list[int]] = {n: [] for n in names}
            for i in range(args.repeats):  # one loop: every candidate once per round
                for n in names:
                    # the GPU waits 1 ms first, so that a launch's host-side work (DeepGEMM's
                    # Python wrapper builds four tensor maps per call) is queued before the
                    # start event runs and is not timed; then the flush, then the launch
                    spin((1,), (1,), (np.int64(1_000_000),))
                    bench._flush_buf.fill(i)
                    starts[n][i].record(bench.stream)
                    runs[n]["launch"]()
                    ends[n][i].record(bench.stream)
                    clocks[n].append(pynvml.nvmlDeviceGetClockInfo(nv, pynvml.NVML_CLOCK_SM))
                    ends[n][i].synchronize()
            bench.stream.synchronize()
            for n in names:
                ms = [cp.cuda.get_elapsed_time(s, e) for s, e in zip(starts[n], ends[n],
                                                                   strict=True)]
                r = runs[n]
                after = checks[n]() if n in checks else _after(check(r["prep"].ops),
                                                               r["prep"])
                row = {"shape": [M, N, K], "candidate": n, "params": r["params"],
                       "median_ms": statistics.median(ms), "min_ms": min(ms),
                       "tflops": flops / (statistics.median(ms) * 1e-3) / 1e12,
                       "sm_clock_mhz": statistics.mean(clocks[n]),
                       "verified": bool(r["verified"]), "rel_err": r["rel_err"],
                       "deepgemm_diff": r["deepgemm_diff"], "calc_diff": r.get("calc_diff"),
                       "verified_after": after["verified"], "output": "bf16"}
                print(json.dumps(row), flush=True)
            del runs, dg_runs, checks, dg_launch, dg_check
            cp.get_default_memory_pool().free_all_blocks()
            torch.cuda.empty_cache()


def deepgemm_run(deep_gemm: Any, src: Any, stream: Any,
                 multicast: bool = True) -> tuple[Any, Any]:
    """DeepGEMM on operands `src` (a block-scaled level's): its launch on `stream`, after two
    warm-up launches (the first JIT-compiles), and a check of its output against the float64
    product of the dequantized inputs (and its own calc_diff against that product in BF16).
    multicast=False: its config picker's answer with the multicast set to one CTA (the
    function its GEMM calls by module name is swapped for the call only)."""
    import cupy as cp
    import torch

    from gemmscope.kernels.engine import quantize as qz

    M, N, _ = src.shape
    a = torch.from_dlpack(src.a).view(torch.float8_e4m3fn)
    b = torch.from_dlpack(src.b).view(torch.float8_e4m3fn)
    sa = torch.from_dlpack(src.scale_a).t()  # (M, K/128), strides (1, M)
    sb = torch.from_dlpack(src.scale_b)  # (N/128, K/128)
    out = torch.empty((M, N), dtype=torch.bfloat16, device="cuda")

    picker = sys.modules["deep_gemm.jit_kernels.gemm"]
    own = picker.get_best_configs

    def one_cta(*args: Any, **kwargs: Any) -> Any:
        sms, bm, bn, stages, _multicast, smem = own(*args, **kwargs)
        return sms, bm, bn, stages, (1, True), smem

    def launch() -> None:
        if not multicast:
            picker.get_best_configs = one_cta
        try:
            with torch.cuda.stream(stream):
                deep_gemm.gemm_fp8_fp8_bf16_nt((a, sa), (b, sb), out)
        finally:
            picker.get_best_configs = own

    out.fill_(float("nan"))
    launch()
    launch()
    torch.cuda.synchronize()
    ref64 = cp.matmul(src.a64(), src.b64())

    def check() -> dict[str, Any]:
        torch.cuda.synchronize()
        c64 = cp.from_dlpack(out.float()).astype(cp.float64)
        err = float(cp.linalg.norm(c64 - ref64) / cp.linalg.norm(ref64))
        diff = qz.deepgemm_diff(c64, ref64, cp)
        ref_bf16 = torch.from_dlpack(ref64).to(torch.bfloat16)
        return {"verified": bool(err <= 2e-2 and diff < 1e-3 and not cp.isnan(c64).any()),
                "rel_err": err, "deepgemm_diff": diff,
                "calc_diff": float(deep_gemm.calc_diff(out, ref_bf16))}

    return launch, check


def _after(acc: Any, prep: Any) -> dict[str, Any]:
    return {"verified": bool(acc.verified(prep.level.precision))}


# ------------------------------------------------------------------ parent
def run_child(phase: str, argv: list[str], limit_s: float, log: Any) -> list[dict[str, Any]]:
    cmd = [sys.executable, "-u", __file__, *argv, "--child", phase]
    rows = []
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit_s)
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err, rc = f"timed out after {limit_s} s", -1
    for line in out.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows.append(row)
            log.write(line + "\n")
    if rc != 0:
        print(f"[{phase}] child exited {rc}: {err[-3000:]}", flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    by_shape: dict[tuple[int, ...], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_shape.setdefault(tuple(r["shape"]), {})[r["candidate"]] = r
    names: list[str] = []
    for cands in by_shape.values():
        names += [n for n in cands if n not in names]
    ours = [n for n in names if n.startswith("fp8_")]
    lines = ["Burst: median of the rounds of one timing loop, L2 flushed before each launch; "
             "TFLOPS (mean NVML SM clock, MHz); * = not verified. C is BF16 for every "
             "candidate (DeepGEMM, the levels, cuBLASLt).",
             "| M x N x K | " + " | ".join(names) + " | best level / DeepGEMM |",
             "|---|" + "---|" * (len(names) + 1)]
    for shape, cands in by_shape.items():
        cells = []
        for n in names:
            r = cands.get(n)
            if r is None:
                cells.append("-")
                continue
            ok = r["verified"] and r["verified_after"]
            cells.append(f"{r['tflops']:.0f}{'' if ok else '*'} ({r['sm_clock_mhz']:.0f})")
        dg = cands.get("DeepGEMM")
        best = max((cands[n]["tflops"] for n in ours if n in cands
                    and cands[n]["verified"] and cands[n]["verified_after"]), default=None)
        ratio = f"{best / dg['tflops']:.3f}" if dg and best else "-"
        lines.append(f"| {'x'.join(map(str, shape))} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("deepgemm", nargs="?",
                    help="DeepGEMM tarball or a folder holding deep_gemm/ (needed)")
    ap.add_argument("--out", default=".")
    ap.add_argument("--repeats", type=count, default=15)
    ap.add_argument("--shapes", type=shapes, default=SHAPES)
    ap.add_argument("--levels", type=level_ids(), default=LEVELS)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--variant-source", action="append", default=[],
                    help="LABEL=DIR: that variant's kernel source from DIR (an attempt)")
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--deepgemm-no-multicast", action="store_true",
                    help="also time DeepGEMM with its clusters' multicast off (MC=1)")
    ap.add_argument("--limit", type=float, default=240, help="seconds for the timing child")
    ap.add_argument("--check-limit", type=float, default=120, help="seconds for the checks")
    ap.add_argument("--child", choices=["check", "time"])
    ap.add_argument("--dg-folder", default=None)
    _smoke.add_flag(ap)
    args = ap.parse_args()
    refuse_unmade(args)  # refused here, before any child starts, as are
    sources = variant_sources(args)  # the variants' sources
    if sources:
        from gemmscope.kernels.ladder import registry

        for label, lid, _ in candidates(args.levels, args.variant):
            built(registry.get(lid), label, sources)  # its source file is there
    if args.smoke:  # the candidates the arguments name (made above), each a made-up row
        names = ["DeepGEMM", *(label for label, _, _ in candidates(args.levels, args.variant)),
                 *REFS]
        _smoke.made_up(table([{"shape": shape, "candidate": name, "tflops": 1000.0 + 10 * i,
                               "sm_clock_mhz": 1980.0, "verified": True,
                               "verified_after": True}
                              for shape in args.shapes[:2] for i, name in enumerate(names)]))
        _smoke.needs_gpu()
        return
    if args.deepgemm is None:
        ap.error("the DeepGEMM tarball or folder is needed")
    if args.child == "check":
        child_check(args)
        return
    if args.child == "time":
        child_time(args)
        return
    folder = deepgemm_folder(args.deepgemm)
    os.environ.setdefault("DG_JIT_CACHE_DIR", tempfile.mkdtemp(prefix="dgcache-"))
    argv = [args.deepgemm, "--repeats", str(args.repeats), "--dg-folder", str(folder),
            "--shapes", ",".join("x".join(map(str, s)) for s in args.shapes),
            "--levels", ",".join(args.levels)]
    for v in args.variant:
        argv += ["--variant", v]
    for v in args.variant_source:
        argv += ["--variant-source", v]
    if args.deepgemm_no_multicast:
        argv.append("--deepgemm-no-multicast")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    with open(Path(args.out) / "fp8_side_by_side.jsonl", "a") as log:
        exclude: list[str] = list(args.exclude)
        if not args.no_check:
            t0 = time.time()
            checks = run_child("check", argv, args.check_limit, log)
            for r in checks:
                if not r["verified"]:
                    print(f"check failed: {r}", flush=True)
                    if r["label"] not in exclude:
                        exclude.append(r["label"])
            # a label whose checks did not all come back (a crash, a hang) is left out
            for lab, _, changes in candidates(args.levels, args.variant):
                if lab not in checked(args):
                    continue
                n = sum(1 for r in checks if r["label"] == lab)
                if n < len(check_shapes(lab, changes, sources)):
                    exclude.append(lab)
            print(f"check: {len(checks)} runs, {sum(r['verified'] for r in checks)} verified, "
                  f"{time.time() - t0:.0f} s; left out: {sorted(set(exclude)) or 'none'}",
                  flush=True)
        for lab in dict.fromkeys(exclude):
            argv += ["--exclude", lab]
        rows = run_child("time", argv, args.limit, log)
    print(table(rows))


if __name__ == "__main__":
    main()

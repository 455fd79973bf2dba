"""What a build rule costs in speed: levels built two ways, timed side by side (GPU machine).

    python benchmarks/build_rule_speed.py --before-cuda DIR [--before-options "-std=c++17
        -lineinfo"] [--levels a,b,...] [--size 4096 --size 8192] [--repeats 15]
        [--rounds 3] [--json out.jsonl]
    python benchmarks/build_rule_speed.py --smoke  # CI: arguments and the table, no GPU

"after" is the level as the app builds it now (kernels/cuda, kernels.toolchain.nvrtc's
options); "before" is the same level compiled from the .cu files and headers in
``--before-cuda`` (e.g. main's kernels/cuda before a source change) with
``--before-options`` as the base options (default: those without
kernels.toolchain.nvrtc_options.DETERMINISTIC, i.e. before the deterministic-build rule).

Per level and shape both builds run on the same operands, each verified once (poisoned C,
float64 reference); then ``--rounds`` rounds alternate the two, each round ``--repeats``
launches with L2 flushed before each (CUDA events around each launch, as burst mode
times), so that a drift of clock or temperature falls on both. The figure is the median
over all launches of a build; the SM clock (NVML, read after each launch) is given as
mean and least. Burst regime: spaced launches at the top clock unless the clock column
says otherwise. The table comes last: TFLOPS before and after, the change in percent, the
registers of each, the clocks.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import _smoke
from _args import count, level_ids, square_size

LEVELS = ("vectorized", "warp_tiling", "cp_async", "cp_async_interior", "mma_sync",
          "mma_persistent", "mma_tma")


def build_pair(level: Any, ops: Any, before_cuda: Path, before_options: tuple[str, ...],
               also: dict[str, Path] | None = None) -> dict[str, tuple[Any, dict[str, Any]]]:
    """{"before"/"after"/each of ``also``: (launch, info)} for one level on one set of
    operands; ``also``: more source folders built with the current options."""
    from gemmscope.kernels.engine.measure import level_launcher
    from gemmscope.kernels.toolchain import nvrtc

    saved = nvrtc.BASE_OPTIONS
    builds = [("before", before_cuda, before_options),
              *((name, folder, saved) for name, folder in (also or {}).items()),
              ("after", None, saved)]
    built: dict[str, tuple[Any, dict[str, Any]]] = {}
    for name, folder, options in builds:
        try:
            nvrtc.BASE_OPTIONS = options
            nvrtc._cache.clear()  # keyed on the level's id: builds must not share it
            lv = level if folder is None else dataclasses.replace(level, source_dir=str(folder))
            built[name] = level_launcher(lv, ops)
        finally:
            nvrtc.BASE_OPTIONS = saved
            nvrtc._cache.clear()
    return built


def time_pair(cp: Any, built: dict[str, tuple[Any, dict[str, Any]]], flush_buf: Any,
              repeats: int, rounds: int, clock_mhz: Any) -> dict[str, dict[str, Any]]:
    times: dict[str, list[float]] = {k: [] for k in built}
    clocks: dict[str, list[float]] = {k: [] for k in built}
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(rounds):
        for name, (launch, _info) in built.items():
            for i in range(repeats):
                flush_buf.fill(float(i))
                start.record()
                launch()
                end.record()
                end.synchronize()
                times[name].append(cp.cuda.get_elapsed_time(start, end))
                mhz = clock_mhz()
                if mhz is not None:
                    clocks[name].append(mhz)
    return {name: {"median_ms": statistics.median(ts), "min_ms": min(ts),
                   "max_ms": max(ts), "launches": len(ts),
                   "sm_clock_mhz_avg": statistics.fmean(clocks[name]) if clocks[name] else None,
                   "sm_clock_mhz_min": min(clocks[name], default=None)}
            for name, ts in times.items()}


def measure(levels: list[str], sizes: list[int], before_cuda: Path,
            before_options: tuple[str, ...], repeats: int, rounds: int,
            also: dict[str, Path] | None = None) -> list[dict[str, Any]]:
    from gemmscope.kernels.device.gpu import device_info, require_cupy
    from gemmscope.kernels.engine.operands import check, random_inputs
    from gemmscope.kernels.ladder import registry

    cp = require_cupy()
    l2 = device_info().l2_bytes
    flush_buf = cp.empty(max(2 * l2, 1 << 20) // 4, cp.float32)
    try:
        import pynvml as nv

        nv.nvmlInit()
        handle = nv.nvmlDeviceGetHandleByIndex(0)

        def clock_mhz() -> float | None:
            return float(nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM))
    except Exception:  # no NVML: no clock column
        def clock_mhz() -> float | None:
            return None

    rows = []
    for size in sizes:
        for level_id in levels:
            level = registry.get(level_id)
            ops = random_inputs(level, size, size, size)
            built = build_pair(level, ops, before_cuda, before_options, also)
            verified = {}
            for name, (launch, _info) in built.items():
                ops.poison()
                launch()
                cp.cuda.runtime.deviceSynchronize()
                verified[name] = check(ops).verified(level.precision)
                for _ in range(3):
                    launch()
            got = time_pair(cp, built, flush_buf, repeats, rounds, clock_mhz)
            flops = 2.0 * size ** 3
            row: dict[str, Any] = {"level": level_id, "size": size}
            for name in built:
                row[name] = {**got[name], "verified": verified[name],
                             "tflops": flops / (got[name]["median_ms"] * 1e-3) / 1e12,
                             "regs": built[name][1].get("regs"),
                             "variant": built[name][1].get("variant")}
            row["change_pct"] = 100.0 * (row["after"]["tflops"] / row["before"]["tflops"] - 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
            del ops, built
            cp.get_default_memory_pool().free_all_blocks()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    def clk(d: dict[str, Any]) -> str:
        if d["sm_clock_mhz_avg"] is None:
            return "-"
        return f"{d['sm_clock_mhz_avg']:.0f}/{d['sm_clock_mhz_min']:.0f}"

    names = [k for k in rows[0] if isinstance(rows[0][k], dict)] if rows else []
    head = f"{'level':<18} {'shape':>6} " + " ".join(
        f"{n + ' TF':>12} {'regs':>4} {'MHz avg/min':>11}" for n in names) + "  change  ok"
    lines = [head]
    for r in rows:
        ok = "yes" if all(r[n]["verified"] for n in names) else "NO"
        cells = " ".join(f"{r[n]['tflops']:>12.2f} {r[n]['regs']!s:>4} {clk(r[n]):>11}"
                         for n in names)
        lines.append(f"{r['level']:<18} {r['size']:>6} {cells}  {r['change_pct']:>+6.2f}%  {ok}")
    return "\n".join(lines)


def made_up_row() -> dict[str, Any]:
    """A row as measure() makes it, made up (--smoke renders it)."""
    def build(tflops: float, regs: int) -> dict[str, Any]:
        ms = 2.0 * 4096 ** 3 / tflops / 1e9
        return {"median_ms": ms, "min_ms": ms, "max_ms": ms, "launches": 45,
                "sm_clock_mhz_avg": 1980.0, "sm_clock_mhz_min": 1965.0, "verified": True,
                "tflops": tflops, "regs": regs, "variant": None}

    before, after = build(30.0, 128), build(30.6, 126)
    return {"level": "cp_async", "size": 4096, "before": before, "after": after,
            "change_pct": 100.0 * (after["tflops"] / before["tflops"] - 1)}


def main(argv: list[str] | None = None) -> int:
    from gemmscope.kernels.toolchain import nvrtc_options

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before-cuda", help="folder of the 'before' .cu files (needed)")
    plain = " ".join(o for o in nvrtc_options.BASE if o not in nvrtc_options.DETERMINISTIC)
    ap.add_argument("--before-options", default=plain)
    ap.add_argument("--levels", type=level_ids(), default=",".join(LEVELS))
    ap.add_argument("--size", type=square_size, action="append", default=[])
    ap.add_argument("--repeats", type=count, default=15)
    ap.add_argument("--rounds", type=count, default=3)
    ap.add_argument("--also", action="append", default=[],
                    help="NAME=DIR: one more build, from DIR's sources with the current options")
    ap.add_argument("--json", help="write the rows here (JSON lines)")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if args.smoke:
        _smoke.level_variants((lid, {}) for lid in args.levels)
        _smoke.made_up(table([made_up_row()]))
        return _smoke.needs_gpu()
    if not args.before_cuda:
        ap.error("--before-cuda is needed")
    rows = measure(args.levels, args.size or [4096, 8192],
                   Path(args.before_cuda).resolve(), tuple(args.before_options.split()),
                   args.repeats, args.rounds,
                   {n: Path(d).resolve() for n, d in (a.split("=", 1) for a in args.also)})
    if args.json:
        Path(args.json).write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(table(rows))
    return 0 if all(v["verified"] for r in rows for v in r.values() if isinstance(v, dict)) \
        else 1


if __name__ == "__main__":
    sys.exit(main())

"""Which side of an FP8 ratio moves from run to run, and is it the buffers? (issue 41
item 8; GPU machine.)

    python3 benchmarks/reference_spread.py [-l cublaslt_fp8 -l fp8_deep] [-s 4096]
        [--reps 6] [--launches 200] [--operands uniform|normal|pm1|zeros] [--kernels]
        [--parts [--busy-s 10] [--rest-s 0]] [--json]
    python3 benchmarks/reference_spread.py --smoke  # CI: arguments and the table, no GPU

At 4096³ the paired % of cuBLASLt of the FP8 levels moved up to 2% between repetitions in
one runner, with the same operands or fresh ones and with 10 pairs or 200, and the
per-side TFLOPS said the reference moved (1.5%) more than the level (0.5%)
(docs/perf-notes.md, "Told apart"). Each repetition prepares both again: new buffers.
Here each level (a reference is a level of the registry) is prepared once and kept, and
in every repetition it is timed on those kept buffers and then on a freshly prepared set
(new operands, new output, new launch), each ``--launches`` launches as the burst loop
times them (L2 flushed before each, held until queued, its own event pair), with an idle
as long as each launch after it (the paired loop's rest). If the kept side holds and the
fresh side spreads, the buffers' placement moves the time; if both spread alike, it is the
GPU's state over the seconds between repetitions.

On GPU-2c571686 (2026-12-03) both spread: cuBLASLt FP8 0.99% kept and 1.24% fresh, fp8_deep
0.79% and 0.13%, the reference falling in the sixth repetition on both sides. Three
causes are left, and each run now reads what tells them apart: the GPU's electrical state
(each side's mean power over its launches, from the energy counter, and the temperature
at its start: a reference slower where it drew more, or ran hotter, is held back by more
than the SM clock NVML reports), the data (``--operands zeros`` draws A and B as zeros,
which toggle few bits and draw little power: if the spread goes with them, the data's
power moved it), and cuBLASLt's choice of kernel (``--kernels``: after the timing, the
names of the GPU kernels each level's launch runs, on the kept buffers and on
``--reps`` fresh preparations, read by torch's profiler: more than one name for a side
means the library picked another kernel for other buffers).

``--parts`` (stretch 36) asks where inside a timed launch the time moves. A cuBLASLt FP8
launch at 4096³ runs two kernels (a memset and the GEMM), fp8_deep one. Each repetition
times ``--launches`` kept launches of each level under torch's profiler (CUPTI: every
kernel's start and end on the GPU) and splits each timed launch, from the end of the hold
that precedes it to the end of its last kernel, into the kernels' own durations and the
gaps before and between them; the table gives each part's median per repetition and its
spread over them. If the event time moves and the GEMM kernel's own duration does not,
the drift is in the gaps (the launches' queueing on the GPU), not in the GEMM. Between
repetitions ``--busy-s`` seconds of wgmma_tma at 8192³ stand for the other levels a paired
run times in between (their heat and power), then ``--rest-s`` idle seconds (on an H100
the first level timed right after 10 busy seconds read 1324-1350 MHz by NVML over its loop,
the second 1895-1965).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import _smoke
from _args import count, square_size

LEVELS = ("cublaslt_fp8", "fp8_deep")
SIDES = ("kept", "fresh")


def _time(bench: Any, launch: Any, n: int) -> dict[str, Any]:
    """``n`` timed launches: their median ms, mean SM clock (MHz, 0 unknown), the
    temperature at the start (C) and the mean power over the loop (W, from the energy
    counter; None where the GPU has none)."""
    from gemmscope.kernels.engine.paired import clock_reader, launch_timer

    timed = launch_timer(bench, launch, clock_reader(bench))
    ms, mhz = [], []
    temp = bench.nvml.temperature_c()
    e0, t0 = bench.nvml.energy_j(), time.perf_counter()
    for _ in range(n):
        t, reading = timed()
        ms.append(t)
        if reading.sm_clock_mhz:
            mhz.append(reading.sm_clock_mhz)
        time.sleep(t / 1000.0)  # the paired loop's rest: idle as long as the launch took
    e1, t1 = bench.nvml.energy_j(), time.perf_counter()
    watts = (e1 - e0) / (t1 - t0) if e0 is not None and e1 is not None and t1 > t0 else None
    return {"ms": statistics.median(ms), "mhz": statistics.fmean(mhz) if mhz else 0.0,
            "temp_c": temp, "power_w": watts}


def kernel_names(bench: Any, launch: Any, times: int = 3) -> list[str]:
    """The GPU kernels ``launch`` runs, by name (torch's profiler, which sees every
    kernel of the process through CUPTI; the L2 flush is not launched here)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(times):
            launch()
        bench.stream.synchronize()
        torch.cuda.synchronize()
    return sorted({name for _start, _end, name in gpu_kernels(prof)})


def gpu_kernels(prof: Any) -> list[tuple[float, float, str]]:
    """The GPU kernels (and memsets) a torch profile saw: (start µs, end µs, name)."""
    return [(e.time_range.start, e.time_range.end, e.name) for e in prof.events()
            if str(getattr(e, "device_type", "")).endswith("CUDA")]


HOLD_NAME = "gemmscope_hold"


def split_launches(kernels: list[tuple[float, float, str]], flush_name: str
                   ) -> list[list[tuple[str, float]]]:
    """Each timed launch's parts from the profiled kernels (start µs, end µs, name), in
    order: after a hold kernel, the kernels up to the next flush, as ("gap", µs) and
    (name, µs) in turn, the first gap from the hold's end. Launches with no kernel after
    their hold are left out."""
    out: list[list[tuple[str, float]]] = []
    parts: list[tuple[str, float]] | None = None
    last_end = 0.0
    for start, end, name in sorted(kernels):
        if HOLD_NAME in name:
            if parts:
                out.append(parts)
            parts, last_end = [], end
        elif parts is not None and name == flush_name:
            if parts:
                out.append(parts)
            parts = None
        elif parts is not None:
            parts.append(("gap", start - last_end))
            parts.append((name, end - start))
            last_end = end
    if parts:
        out.append(parts)
    return out


def parts_summary(launches: list[list[tuple[str, float]]]) -> dict[str, float]:
    """Medians over the launches of each part by position ("gap 1", the first kernel's
    short name, ...) and of the whole span, µs."""
    cols: dict[str, list[float]] = {}
    for parts in launches:
        for i, (name, us) in enumerate(parts):
            key = f"gap {i // 2 + 1}" if name == "gap" else short_name(name)
            cols.setdefault(key, []).append(us)
        cols.setdefault("span", []).append(sum(us for _n, us in parts))
    return {k: statistics.median(v) for k, v in cols.items()}


def short_name(name: str) -> str:
    """A kernel's name short enough for a column (a memset, the first word of a GEMM)."""
    if name.lower().startswith("memset"):
        return "memset"
    return name.split("(")[0].split("<")[0][:24]


def measure_parts(levels: list[str], S: int, reps: int, launches: int,
                  busy_s: float, rest_s: float = 0.0) -> list[dict[str, Any]]:
    """Per level, per repetition: the median event time of ``launches`` timed kept
    launches and the median of each part of them (:func:`split_launches`)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.ladder import registry

    bench = Bench(device_info(), wall_clock())
    rows = {lv: {"level": lv, "runs": []} for lv in levels}
    with bench.stream:
        kept = {lv: bench.prepare(registry.get(lv), S, S, S, None, 3) for lv in levels}
        busy = (bench.prepare(registry.get("wgmma_tma"), 8192, 8192, 8192, None, 1)
                if busy_s > 0 else None)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            bench.flush()
            bench.stream.synchronize()
        flush_name = gpu_kernels(prof)[0][2]
        for rep in range(reps):
            if busy is not None:
                t_end = time.perf_counter() + busy_s
                while time.perf_counter() < t_end:
                    for _ in range(20):
                        busy.launch()
                    bench.stream.synchronize()
            time.sleep(rest_s)
            for lv in levels:
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    timed = _time(bench, kept[lv].launch, launches)
                    torch.cuda.synchronize()
                split = split_launches(gpu_kernels(prof), flush_name)
                run = {"event_us": 1000.0 * timed["ms"], "mhz": timed["mhz"],
                       "launches": len(split), "parts": parts_summary(split)}
                rows[lv]["runs"].append(run)
                print(f"rep {rep + 1} {lv:<14} {json.dumps(run)}", file=sys.stderr,
                      flush=True)
    return list(rows.values())


def _cell(v: float | None) -> str:
    return f"{v:14.2f}" if v is not None else f"{'-':>14}"


def parts_table(rows: list[dict[str, Any]]) -> str:
    lines = []
    for row in rows:
        keys = ["event", *dict.fromkeys(k for run in row["runs"] for k in run["parts"])]
        lines.append(f"{row['level']}: µs, median over each repetition's launches")
        lines.append(f"{'rep':<5}" + "".join(f"{k[:13]:>14}" for k in keys) + f"{'MHz':>7}")
        for i, run in enumerate(row["runs"]):
            vals = [run["event_us"]] + [run["parts"].get(k) for k in keys[1:]]
            lines.append(f"{i + 1:<5}" + "".join(_cell(v) for v in vals)
                         + f"{run.get('mhz', 0):7.0f}")
        spreads = []
        for k in keys:
            vals = [run["event_us"] if k == "event" else run["parts"].get(k)
                    for run in row["runs"]]
            vals = [v for v in vals if v is not None]
            spreads.append(max(vals) - min(vals) if len(vals) > 1 else None)
        lines.append(f"{'range':<5}" + "".join(_cell(v) for v in spreads))
    lines.append("event: the timed launch's event pair; span: the hold's end to the last "
                 "kernel's end (CUPTI); gap n: before the n-th kernel; MHz: NVML's clock "
                 "read during each launch, the loop's mean; range: greatest - least over "
                 "the repetitions, µs")
    return "\n".join(lines)


MADE_UP_PARTS = [
    {"level": "cublaslt_fp8", "runs": [
        {"event_us": 104.1, "mhz": 1980.0, "launches": 200,
         "parts": {"gap 1": 2.1, "memset": 1.2, "gap 2": 1.5, "nvjet_sm90_qqtst": 98.0,
                   "span": 102.8}},
        {"event_us": 105.6, "mhz": 1980.0, "launches": 200,
         "parts": {"gap 1": 2.2, "memset": 1.2, "gap 2": 2.9, "nvjet_sm90_qqtst": 98.1,
                   "span": 104.4}}]},
]


def measure(levels: list[str], S: int, reps: int, launches: int, operands: str = "uniform",
            kernels: bool = False) -> list[dict[str, Any]]:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.ladder.shape import Shape, tflops_of
    from gemmscope.kernels.protocol.events import Distribution

    bench = Bench(device_info(), wall_clock())
    bench.distribution = Distribution(operands)
    flops = Shape(S, S, S).flops
    rows = {(lv, side): {"level": lv, "side": side, "runs": []} for lv in levels
            for side in SIDES}
    with bench.stream:
        kept = {lv: bench.prepare(registry.get(lv), S, S, S, None, 3) for lv in levels}
        for rep in range(reps):
            for lv in levels:
                for side in SIDES:
                    prep = kept[lv] if side == "kept" else bench.prepare(
                        registry.get(lv), S, S, S, None, 3)
                    run = _time(bench, prep.launch, launches)
                    run["tflops"] = tflops_of(flops, run["ms"])
                    run["verified"] = prep.verification().get("verified")
                    rows[(lv, side)]["runs"].append(run)
                    if side == "fresh":
                        del prep
                        bench.cp.get_default_memory_pool().free_all_blocks()
                    print(f"rep {rep + 1} {lv:<14} {side:<6} {json.dumps(run)}",
                          file=sys.stderr, flush=True)
        if kernels:  # after every timed loop: the profiler is not running while they time
            for lv in levels:
                rows[(lv, "kept")]["kernels"] = [kernel_names(bench, kept[lv].launch)]
                fresh = []
                for _ in range(reps):
                    prep = bench.prepare(registry.get(lv), S, S, S, None, 1)
                    fresh.append(kernel_names(bench, prep.launch))
                    del prep
                    bench.cp.get_default_memory_pool().free_all_blocks()
                rows[(lv, "fresh")]["kernels"] = fresh
    return list(rows.values())


def spread_pct(values: list[float]) -> float | None:
    """(greatest - least) / least in percent; None for fewer than two."""
    return (100.0 * (max(values) - min(values)) / min(values)
            if len(values) > 1 and min(values) > 0 else None)


def table(rows: list[dict[str, Any]]) -> str:
    reps = max((len(r["runs"]) for r in rows), default=0)
    lines = [f"{'level':<16}{'side':<7}" + "".join(f"{'rep' + str(i + 1):>17}"
                                                  for i in range(reps)) + f"{'spread %':>10}"]
    for row in rows:
        tf = [run["tflops"] for run in row["runs"] if run.get("tflops")]
        cells = [f"{run['tflops']:7.1f} {run.get('mhz', 0):5.0f}MHz".rjust(17)
                 if run.get("tflops") else f"{'-':>17}" for run in row["runs"]]
        s = spread_pct(tf)
        lines.append(f"{row['level']:<16}{row['side']:<7}" + "".join(cells)
                     + (f"{s:10.2f}" if s is not None else f"{'-':>10}"))
        state = [f"{run['power_w']:5.0f}W {run['temp_c']:3.0f}C".rjust(17)
                 if run.get("power_w") is not None and run.get("temp_c") is not None
                 else f"{'-':>17}" for run in row["runs"]]
        lines.append(f"{'':<23}" + "".join(state))
    lines.append("cells: TFLOPS (median of the launches) and the mean SM clock read during "
                 "them, below them the mean power over the loop and the temperature at its "
                 "start; kept: the buffers prepared once; fresh: prepared again per "
                 "repetition; spread: (greatest - least) / least")
    for row in rows:
        if "kernels" in row:
            names = {name for per_prep in row["kernels"] for name in per_prep}
            lines.append(f"kernels of {row['level']} {row['side']} "
                         f"({len(row['kernels'])} preparations, {len(names)} distinct "
                         f"names): " + "; ".join(sorted(names))[:600])
    return "\n".join(lines)


MADE_UP_ROWS = [
    {"level": "cublaslt_fp8", "side": "kept",
     "runs": [{"tflops": 1320.0, "mhz": 1980.0, "power_w": 410.0, "temp_c": 41.0},
              {"tflops": 1322.5, "mhz": 1980.0, "power_w": 415.0, "temp_c": 44.0}],
     "kernels": [["sm90_xmma_gemm_e4m3_example"]]},
    {"level": "cublaslt_fp8", "side": "fresh",
     "runs": [{"tflops": 1301.0, "mhz": 1980.0}, {"tflops": 1336.0, "mhz": 1980.0}],
     "kernels": [["sm90_xmma_gemm_e4m3_example"], ["sm90_xmma_gemm_e4m3_other"]]},
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-l", "--level", action="append",
                    help=f"a level or reference id (default: {', '.join(LEVELS)})")
    ap.add_argument("-s", "--size", type=square_size, default=4096, help="M = N = K (default 4096)")
    ap.add_argument("--reps", type=count, default=6)
    ap.add_argument("--launches", type=count, default=200, help="timed launches per side")
    ap.add_argument("--operands", choices=("uniform", "normal", "pm1", "zeros"),
                    default="uniform", help="what A and B are drawn from (default uniform, "
                    "the runner's default; zeros: little power)")
    ap.add_argument("--kernels", action="store_true",
                    help="after the timing, name the GPU kernels each side's launch runs "
                         "(torch's profiler)")
    ap.add_argument("--parts", action="store_true",
                    help="instead: each timed launch split into its kernels and the gaps "
                         "between them (torch's profiler), per repetition")
    ap.add_argument("--busy-s", type=float, default=10.0,
                    help="with --parts: seconds of wgmma_tma at 8192^3 before each "
                         "repetition (default 10)")
    ap.add_argument("--rest-s", type=float, default=0.0,
                    help="with --parts: idle seconds after the busy ones (default 0)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if not 1 <= args.reps <= 100 or not 1 <= args.launches <= 100_000:
        ap.error("--reps must be 1 to 100 and --launches 1 to 100000")
    if not 1 <= args.size <= 65_536:
        ap.error("--size must be 1 to 65536")
    if not 0 <= args.busy_s <= 600 or not 0 <= args.rest_s <= 600:
        ap.error("--busy-s and --rest-s must be 0 to 600")
    if args.smoke:
        _smoke.made_up(table(MADE_UP_ROWS) + "\n" + parts_table(MADE_UP_PARTS))
        print(_smoke.GPU_LINE)
        return 0
    if args.parts:
        rows = measure_parts(args.level or list(LEVELS), args.size, args.reps,
                             args.launches, args.busy_s, args.rest_s)
        print(parts_table(rows))
        if args.json:
            print(json.dumps(rows))
        return 0
    rows = measure(args.level or list(LEVELS), args.size, args.reps, args.launches,
                   args.operands, args.kernels)
    print(table(rows))
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

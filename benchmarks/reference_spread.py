"""Which side of an FP8 ratio moves from run to run, and is it the buffers? (issue 41
item 8; GPU machine.)

    python3 benchmarks/reference_spread.py [-l cublaslt_fp8 -l fp8_deep] [-s 4096]
        [--reps 6] [--launches 200] [--json]
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
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import _smoke

LEVELS = ("cublaslt_fp8", "fp8_deep")
SIDES = ("kept", "fresh")


def _time(bench: Any, launch: Any, n: int) -> tuple[float, float]:
    """Median ms of ``n`` timed launches and their mean SM clock (MHz, 0 unknown)."""
    from gemmscope.kernels.engine.paired import clock_reader, launch_timer

    timed = launch_timer(bench, launch, clock_reader(bench))
    ms, mhz = [], []
    for _ in range(n):
        t, reading = timed()
        ms.append(t)
        if reading.sm_clock_mhz:
            mhz.append(reading.sm_clock_mhz)
        time.sleep(t / 1000.0)  # the paired loop's rest: idle as long as the launch took
    return statistics.median(ms), (statistics.fmean(mhz) if mhz else 0.0)


def measure(levels: list[str], S: int, reps: int, launches: int) -> list[dict[str, Any]]:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.ladder.shape import Shape, tflops_of

    bench = Bench(device_info(), wall_clock())
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
                    ms, mhz = _time(bench, prep.launch, launches)
                    run = {"ms": ms, "tflops": tflops_of(flops, ms), "mhz": mhz,
                           "verified": prep.verification().get("verified")}
                    rows[(lv, side)]["runs"].append(run)
                    if side == "fresh":
                        del prep
                        bench.cp.get_default_memory_pool().free_all_blocks()
                    print(f"rep {rep + 1} {lv:<14} {side:<6} {json.dumps(run)}",
                          file=sys.stderr, flush=True)
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
    lines.append("cells: TFLOPS (median of the launches) and the mean SM clock read during "
                 "them; kept: the buffers prepared once; fresh: prepared again per repetition; "
                 "spread: (greatest - least) / least")
    return "\n".join(lines)


MADE_UP_ROWS = [
    {"level": "cublaslt_fp8", "side": "kept",
     "runs": [{"tflops": 1320.0, "mhz": 1980.0}, {"tflops": 1322.5, "mhz": 1980.0}]},
    {"level": "cublaslt_fp8", "side": "fresh",
     "runs": [{"tflops": 1301.0, "mhz": 1980.0}, {"tflops": 1336.0, "mhz": 1980.0}]},
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-l", "--level", action="append",
                    help=f"a level or reference id (default: {', '.join(LEVELS)})")
    ap.add_argument("-s", "--size", type=int, default=4096, help="M = N = K (default 4096)")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--launches", type=int, default=200, help="timed launches per side")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if not 1 <= args.reps <= 100 or not 1 <= args.launches <= 100_000:
        ap.error("--reps must be 1 to 100 and --launches 1 to 100000")
    if not 1 <= args.size <= 65_536:
        ap.error("--size must be 1 to 65536")
    if args.smoke:
        _smoke.made_up(table(MADE_UP_ROWS))
        print(_smoke.GPU_LINE)
        return 0
    rows = measure(args.level or list(LEVELS), args.size, args.reps, args.launches)
    print(table(rows))
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

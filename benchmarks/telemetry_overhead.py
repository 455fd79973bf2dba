"""Does NVML sampling slow the kernels down? (GPU machine)

    python benchmarks/telemetry_overhead.py [--level cp_async] [--size 4096] [--rounds 8]
    python benchmarks/telemetry_overhead.py --smoke  # CI: arguments and the table, no GPU

In one process, alternates runs of the level with the runner's sampler at --hz (default
100 Hz, samples written as JSON lines to a file, as the runner writes them to its pipe)
and with telemetry off (no NVML call at all during the run). Prints each run's median
and the median over runs of each setting; the difference should stay within 1%.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import _smoke
from _args import count, level_id, square_size

from gemmscope.kernels.device.gpu import device_info
from gemmscope.kernels.device.telemetry import Nvml, Sampler
from gemmscope.kernels.engine.measure import Bench, wall_clock
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol.events import dumps


def table(runs: dict[str, list[float]], hz: float) -> tuple[str, float]:
    """(the table of the medians over runs, sampling on and off; the difference in %)."""
    on, off = statistics.median(runs["on"]), statistics.median(runs["off"])
    diff = 100 * (on - off) / off
    return "\n".join([f"{'setting':>14s} {'median TFLOPS':>14s} {'runs':>5s}",
                      f"{'sampling ' + str(int(hz)) + ' Hz':>14s} {on:14.3f} "
                      f"{len(runs['on']):5d}",
                      f"{'sampling off':>14s} {off:14.3f} {len(runs['off']):5d}",
                      f"difference: {diff:+.2f}% (target: within 1%)"]), diff


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--level", default="cp_async", type=level_id())
    ap.add_argument("--size", type=square_size, default=4096)
    ap.add_argument("--rounds", type=count, default=8)
    ap.add_argument("--repeats", type=count, default=30)
    ap.add_argument("--hz", type=float, default=100.0)
    ap.add_argument("--out", default=os.devnull, help="where the samples go (JSON lines)")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.smoke:
        _smoke.level_variants([(args.level, {})])
        _smoke.made_up(table({"on": [30.1, 30.0, 29.9], "off": [30.2, 30.0, 30.1]},
                             args.hz)[0])
        return _smoke.needs_gpu()
    dev = device_info()
    clock = wall_clock()
    sink = open(args.out, "w")
    nvml = Nvml()
    if not nvml.available:
        print(f"telemetry unavailable: {nvml.reason}")
        return 2
    sampler = Sampler(nvml, lambda ev: sink.write(dumps(ev) + "\n"), clock, hz=0)
    sampler.start()
    with_tel = Bench(dev, clock, sampler)
    without = Bench(dev, clock, None)
    level = registry.get(args.level)
    S = args.size
    runs: dict[str, list[float]] = {"on": [], "off": []}
    samples_seen = []
    for i in range(args.rounds):
        order = ("on", "off") if i % 2 == 0 else ("off", "on")
        for mode in order:
            if mode == "on":
                sampler.set_rate(args.hz)
                r = with_tel.run(level, S, S, S, repeats=args.repeats, warmup=3)
                sampler.set_rate(0)
                samples_seen.append(r.get("telemetry_samples"))
            else:
                r = without.run(level, S, S, S, repeats=args.repeats, warmup=3)
            assert r["verified"], r
            runs[mode].append(r["tflops"])
            print(f"round {i} {mode:3s} {r['tflops']:.3f} TFLOPS (median of {args.repeats})",
                  flush=True)
    sampler.stop()
    sink.close()
    text, diff = table(runs, args.hz)
    print(json.dumps({"level": args.level, "size": S, "hz": args.hz, "runs_on": runs["on"],
                      "runs_off": runs["off"], "samples_per_run": samples_seen}))
    print("\n" + text)
    return 0 if abs(diff) <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())

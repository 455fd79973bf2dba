"""The energy counter step by step around one long back-to-back run (GPU machine): where
the joules of a window go (issue 31, item 4).

    python benchmarks/energy_trace.py [-l LEVEL ...] [-s 4096] [--run-s 8] [--idle-s 1]
        [--tail-s 1.5] [--cooldown-s 5] [--json out.jsonl]
    python benchmarks/energy_trace.py --smoke  # CI: the analysis of made-up steps, no GPU

A thread polls NVML's total-energy counter every 0.5 ms and keeps each new value with the
host time it appeared, the SM clock and the temperature, while the main thread idles
``--idle-s``, runs the level (verified first, then batches of a CUDA graph, as the
sustained mode does, or plain launches for a cuBLAS reference) back to back for
``--run-s`` of GPU time, then idles ``--tail-s``. From the steps:

- the power of each step interval, in bins of 0.5 s from the start of the work, and the
  idle power before and the power of the first steps after the work ended (a counter
  that lagged behind the work would show load power there);
- J per GEMM as a counter window around the work would give it (a step before the first
  launch to the first step after the GPU finished, idle ends included: the sustained
  mode's and energy_check's method), for windows of the whole run and of its first
  1.5 s and 3 s (from the same steps);
- J per GEMM from the steady interval only (steps both inside the work, edges left out):
  power there times the GPU seconds per GEMM.

Prints one line per level; --json writes the series too.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import threading
import time
from typing import Any

import _smoke
from _args import square_size

POLL_S = 0.0005


class Poller:
    """Counter steps on a thread: (host time, joules, SM MHz, temperature C)."""

    def __init__(self, nv: Any, handle: Any):
        self.nv, self.handle = nv, handle
        self.steps: list[tuple[float, float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        nv, h = self.nv, self.handle
        last = None
        while not self._stop.is_set():
            e = nv.nvmlDeviceGetTotalEnergyConsumption(h) / 1000.0
            t = time.perf_counter()
            if e != last:
                mhz = float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM))
                temp = float(nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))
                self.steps.append((t, e, mhz, temp))
                last = e
            time.sleep(POLL_S)

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


def energy_between(steps: list[tuple[float, float, float, float]], t0: float, t1: float
                   ) -> tuple[float, float] | None:
    """(joules, seconds) from the last step at or before t0 to the first at or after t1."""
    before = [s for s in steps if s[0] <= t0]
    after = [s for s in steps if s[0] >= t1]
    if not before or not after:
        return None
    return after[0][1] - before[-1][1], after[0][0] - before[-1][0]


def analyse(steps: list[tuple[float, float, float, float]], t_work0: float, t_work1: float,
            launches: int, gpu_s: float) -> dict[str, Any]:
    intervals = [(a[0], b[0], (b[1] - a[1]) / (b[0] - a[0]), b[2], b[3])
                 for a, b in itertools.pairwise(steps) if b[0] > a[0]]
    idle = [p for t0, t1, p, _c, _T in intervals if t1 <= t_work0]
    busy = [(t0, t1, p, c, T) for t0, t1, p, c, T in intervals
            if t0 >= t_work0 and t1 <= t_work1]
    tail = [p for t0, _t1, p, _c, _T in intervals if t0 >= t_work1]
    bins: dict[float, list[float]] = {}
    for t0, t1, p, _c, _T in busy:
        bins.setdefault(0.5 * int(((t0 + t1) / 2 - t_work0) / 0.5), []).append(p)
    s_per = gpu_s / launches
    around = energy_between(steps, t_work0, t_work1)
    out: dict[str, Any] = {
        "step_s": statistics.median(t1 - t0 for t0, t1, *_ in intervals) if intervals else None,
        "idle_w": statistics.fmean(idle) if idle else None,
        "tail_w": [round(p, 1) for p in tail[:8]],
        "bins_w": {f"{k:.1f}": round(statistics.fmean(v), 1) for k, v in sorted(bins.items())},
        "clock_mhz": [round(c) for *_x, c, _T in busy[::5]],
        "temp_c": [T for *_x, T in busy[::5]],
        "s_per_gemm": s_per, "launches": launches, "gpu_s": gpu_s,
        "j_around_whole": around[0] / launches if around else None,
        "edge_s_whole": (around[1] - (t_work1 - t_work0)) if around else None,
    }
    for w in (1.5, 3.0):
        got = energy_between(steps, t_work0, t_work0 + w)
        n = w / s_per
        out[f"j_around_first_{w:g}s"] = (got[0] - (got[1] - w) * (out["idle_w"] or 0)) / n \
            if got and out["idle_w"] is not None else None
    if busy:
        inner = [(t0, t1, p) for t0, t1, p, _c, _T in busy if t0 >= t_work0 + 0.2]
        span = sum(t1 - t0 for t0, t1, _p in inner)
        p_steady = sum((t1 - t0) * p for t0, t1, p in inner) / span if span else None
        out["steady_w"] = p_steady
        out["j_steady"] = p_steady * s_per if p_steady else None
    return out


def trace_level(level_id: str, size: int, args: argparse.Namespace, nv: Any, handle: Any
                ) -> dict[str, Any]:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.energy import run_batches
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.ladder.level import Kind

    level = registry.get(level_id)
    bench = Bench(device_info(), wall_clock())
    with bench.stream:
        prep = bench.prepare(level, size, size, size, None, 3)
        batches = bench.batches(prep.launch, graph=level.kind is Kind.LEVEL)
        time.sleep(args.cooldown_s)
        with Poller(nv, handle) as poller:
            time.sleep(args.idle_s)
            t_work0 = time.perf_counter()
            run = run_batches(batches, args.run_s)
            t_work1 = time.perf_counter()
            time.sleep(args.tail_s)
    row = {"level": level_id, "size": size, "verified": prep.verified,
           "method": batches.method,
           **analyse(poller.steps, t_work0, t_work1, run.launches, run.gpu_s)}
    if args.json:
        row["steps"] = [(round(t - t_work0, 5), e, c, T) for t, e, c, T in poller.steps]
    return row


def line(r: dict[str, Any]) -> str:
    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.4g}"

    return (f"{r['level']} {r['size']}^3 ({r['method']}, step {f(r['step_s'])} s): "
            f"idle {f(r['idle_w'])} W, busy bins {r['bins_w']}, tail {r['tail_w']}; "
            f"J/GEMM around whole {f(r['j_around_whole'])} (edge {f(r['edge_s_whole'])} s), "
            f"first 1.5 s {f(r['j_around_first_1.5s'])}, first 3 s {f(r['j_around_first_3s'])}, "
            f"steady {f(r.get('j_steady'))} at {f(r.get('steady_w'))} W; "
            f"clock {r['clock_mhz']}; temp {r['temp_c']}")


def made_up_steps() -> list[tuple[float, float, float, float]]:
    """A counter stepping every 0.1 s: 1 s idle at 100 W, 4 s of work at 600 W (the work
    from t = 1 to 5), 1 s idle; (host s, counter J, SM MHz, temperature C). Made up."""
    steps, joules = [], 0.0
    for i in range(61):
        t = 0.1 * i
        steps.append((t, joules, 1980.0 if 1.0 <= t < 5.0 else 345.0, 40.0 + (t > 1.0)))
        joules += 0.1 * (600.0 if 1.0 <= t < 5.0 else 100.0)
    return steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-l", "--level", action="append", default=[])
    ap.add_argument("-s", "--size", type=square_size, action="append", default=[])
    ap.add_argument("--run-s", type=float, default=8.0)
    ap.add_argument("--idle-s", type=float, default=1.0)
    ap.add_argument("--tail-s", type=float, default=1.5)
    ap.add_argument("--cooldown-s", type=float, default=5.0)
    ap.add_argument("--json", help="write the rows with their steps here (JSON lines)")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if args.smoke:
        _smoke.level_variants((lid, {}) for lid in args.level or ["cp_async"])
        _smoke.made_up(line({"level": "cp_async", "size": 4096, "method": "graph",
                             **analyse(made_up_steps(), 1.0, 5.0, 4000, 4.0)}))
        return _smoke.needs_gpu()
    import pynvml as nv

    nv.nvmlInit()
    handle = nv.nvmlDeviceGetHandleByIndex(0)
    rows = []
    for size in args.size or [4096]:
        for level_id in args.level or ["cp_async"]:
            r = trace_level(level_id, size, args, nv, handle)
            rows.append(r)
            print(line(r), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

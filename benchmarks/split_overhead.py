"""Wall time of one sweep through one runner, split over two (--devices 0,1 --split), and
on a local Dask cluster of two workers (--cluster), with stand-in runners (no GPU): what
the bookkeeping of several runners costs, and what splitting saves.

    python benchmarks/split_overhead.py [--runs 12] [--repeats 5] [--no-cluster]
    python benchmarks/split_overhead.py --smoke  # CI: 4 runs of one repeat, no cluster

Each stand-in run takes repeats x 0.2 s (tests/support/fake_runner.py --mode slow). Prints a table.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import _smoke
from _args import count

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import recording

FAKE = Path(__file__).parents[1] / "tests" / "support" / "fake_runner.py"


def timed(argv: list[str]) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as folder:
        out = str(Path(folder) / "r.jsonl")
        t0 = time.perf_counter()
        code = cli.main(["record", "-o", out, *argv], stdout=io.StringIO(),
                        stderr=io.StringIO())
        wall = time.perf_counter() - t0
        assert code == 0, argv
        return wall, len(recording.read_session(out).results)


def cluster_row(rows: list[tuple[str, float, int]], base: list[str], left_out: bool) -> None:
    """The sweep on a local Dask cluster of two workers, where Dask is installed."""
    if left_out:
        print("(--no-cluster: the cluster row is left out)")
        return
    try:
        import dask
        from distributed import LocalCluster
    except ImportError:
        print("(no Dask: the cluster row is left out)")
        return
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               resources={"GPU": 1}, dashboard_address=None)
    try:
        rows.append(("--cluster (2 local workers)",
                     *timed([*base, "--cluster", cluster.scheduler_address])))
    finally:
        cluster.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=count, default=12)
    ap.add_argument("--repeats", type=count, default=5)
    ap.add_argument("--no-cluster", action="store_true", help="leave the Dask row out")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.smoke:  # a local cluster's start alone takes seconds
        args.runs, args.repeats, args.no_cluster = 4, 1, True
    levels = [lv.id for lv in registry.ladder()]
    sizes = [16 * (i + 1) for i in range(-(-args.runs // len(levels)))]
    chosen = [(lv, n) for n in sizes for lv in levels][:args.runs]
    level_arg = ",".join(dict.fromkeys(lv for lv, _ in chosen))
    size_args = [a for n in dict.fromkeys(n for _, n in chosen) for a in ("-s", str(n))]
    base = ["--runner", f"{sys.executable} {FAKE} --mode slow", "-l", level_arg, *size_args,
            "-r", str(args.repeats), "--no-compare"]
    rows = [("one runner", *timed(base)),
            ("--devices 0,1 --split", *timed([*base, "--devices", "0,1", "--split"]))]
    cluster_row(rows, base, args.no_cluster)
    ideal = args.repeats * 0.2
    print(f"{'how':30s} {'runs':>5s} {'wall s':>8s} {'s/run':>7s}  (a run: {ideal:.1f} s)")
    for how, wall, runs in rows:
        print(f"{how:30s} {runs:5d} {wall:8.2f} {wall / max(runs, 1):7.2f}")


if __name__ == "__main__":
    main()

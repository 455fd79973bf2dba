"""How long ``gemmscope report`` takes on a recording, start to exit, and what of it is
reading: a table of the median of a few runs.

    python benchmarks/report_speed.py [FILE] [--runs 5]
    python benchmarks/report_speed.py --smoke  # CI: one run each on the synthetic session

Each run is a fresh process (``python -m gemmscope.app.main report FILE``), as a user types
it: wall time, and the CPU time it used (user + system, which a loaded machine does not
inflate the way it does wall time). Twice: in this environment as it is (where
PYTHONDONTWRITEBYTECODE is set, as on the team's machines, every run compiles gemmscope's
sources anew), and with the bytecode cached, as an installed package has it (in a
PYTHONPYCACHEPREFIX folder of its own, written by a first run: nothing is written into the
checkout). Then, in this process, the reading alone: the report's reader (results and
errors only) and the whole recording as the app reads it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _smoke
from _args import count

DEFAULT = Path(__file__).resolve().parents[1] / "resources" / "sessions" / "h200-ladder.jsonl.gz"


def one_report(path: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s, CPU s) of one `gemmscope report` process (``env``: this one's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gemmscope.app.main", "report", str(path)],
                   check=True, stdout=subprocess.DEVNULL, env=env or dict(os.environ))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--runs", type=count, default=5)
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.smoke:
        syn = _smoke.support("synthetic_session")
        args.file = syn.write(Path(tempfile.mkdtemp()) / "synthetic.jsonl")
        args.runs = 1
    from gemmscope.kernels.protocol import recording
    from gemmscope.kernels.protocol.records import Error, Result

    runs, cached_runs = [], []
    with tempfile.TemporaryDirectory(prefix="gemmscope-pyc-") as cache:
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = cache
        one_report(args.file, cached)  # writes the bytecode
        for _ in range(args.runs):  # one of each in turn: a change of load hits both
            runs.append(one_report(args.file))
            cached_runs.append(one_report(args.file, cached))
    t0 = time.perf_counter()
    recording.read_session(args.file, only=(Result, Error))
    report_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    recording.read_session(args.file)
    whole_read = time.perf_counter() - t0
    compiled = "no (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") \
        else "yes"
    rows = [("file MB", f"{args.file.stat().st_size / 1e6:.1f}"),
            ("bytecode written by a run here", compiled),
            ("report wall s (median)", f"{statistics.median(w for w, _ in runs):.2f}"),
            ("report CPU s (median)", f"{statistics.median(c for _, c in runs):.2f}"),
            ("report wall s, bytecode cached (median)",
             f"{statistics.median(w for w, _ in cached_runs):.2f}"),
            ("report CPU s, bytecode cached (median)",
             f"{statistics.median(c for _, c in cached_runs):.2f}"),
            ("report's read, in process s", f"{report_read:.2f}"),
            ("whole read, in process s", f"{whole_read:.2f}"),
            ("load average", f"{os.getloadavg()[0]:.1f}")]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

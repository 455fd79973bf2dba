"""Do fresh machines reproduce a recording's burst figures? (issue 31 item 6; no GPU needed)

    python benchmarks/reproduce_check.py RUN.jsonl [RUN2.jsonl ...]
        [--baseline resources/sessions/h200-ladder.jsonl.gz] [-s 4096 -s 8192]
        [--tolerance-pct 2] [--levels-only]
    python benchmarks/reproduce_check.py --smoke  # CI: the synthetic session against itself

Each RUN is a recording of `gemmscope bench --all -s 4096 -s 8192 -o RUN.jsonl` made on a
freshly started machine. For every level (and reference, unless --levels-only) at each
cube size, the table gives the baseline's burst TFLOPS and SM clock, then each run's and
its difference in percent, and where the timed launches changed speed mid-burst (the
power limiter acting within the burst: which side of the step the median is of can move
a figure by 10%); a last column says whether every run is within the tolerance. The GPU
each file ran on is named first: at the power limit, two GPUs of one model differ.
A user's kernel in the baseline but in no run is named at the end, not compared. Where a
level ran more than once at a shape in one file, the last result counts (a recording's
later session replaces an earlier one there too). Exit code 1 when a level is outside
the tolerance in any run or missing from one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import _smoke
from _args import square_size

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.events import Mode
from gemmscope.kernels.results.launch_steps import LaunchStep, launch_step

BUNDLED = Path(__file__).resolve().parents[1] / "resources" / "sessions" / "h200-ladder.jsonl.gz"


Burst = dict[tuple[str, int], tuple[float, float | None, LaunchStep | None]]


def burst(path: str | Path, sizes: set[int]) -> tuple[Burst, list[str]]:
    """(level, size) -> (TFLOPS, SM MHz, launch step) of the file's verified burst results
    at cubes, and the GPUs (UUIDs) its sessions ran on. The step is the result's own, or,
    in files from before results stated it, found in the run's repeat events by the same
    rule (kernels/results/launch_steps.py)."""
    session = recording.read_session(path)
    # by run, not by id: a compared level's reference echoes its id (Run.run_key)
    times: dict[tuple[str, str], list[float]] = {}
    out: Burst = {}
    headers = [session.header, *(e.runner for e in session.events
                                 if e.type == "restart" and e.runner is not None)]
    gpus = [h.device.uuid for h in headers if h.device is not None and h.device.uuid]
    for e in session.events:
        if e.type == "repeat" and e.mode == Mode.BURST:
            times.setdefault(e.run_key, []).append(e.ms)
        elif (e.type == "result" and e.mode == Mode.BURST and e.M == e.N == e.K
              and e.M in sizes and e.tflops and e.verified):
            step = LaunchStep.of(e.launch_step) if e.launch_step is not None else \
                launch_step(times.get(e.run_key, []))
            out[(e.level, e.M)] = (e.tflops, e.sm_clock_mhz_avg, step)
        if e.type == "result":
            times.pop(e.run_key, None)  # a later run may reuse the id
        elif e.type == "error":
            times.pop((repr(e.id), e.level), None)
    return out, list(dict.fromkeys(gpus))


def _step_text(step: LaunchStep | None) -> str:
    return "" if step is None else f" [step {step.at}/{step.launches} {step.change_pct:+.0f}%]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", metavar="RUN")
    ap.add_argument("--baseline", default=str(BUNDLED))
    ap.add_argument("-s", "--size", type=square_size, action="append", default=[])
    ap.add_argument("--tolerance-pct", type=float, default=2.0)
    ap.add_argument("--levels-only", action="store_true", help="leave the references out")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if args.smoke:
        syn = _smoke.support("synthetic_session")
        args.baseline = str(syn.write(Path(tempfile.mkdtemp()) / "synthetic.jsonl"))
        args.runs, args.size = [args.baseline], [4096]
    elif not args.runs:
        ap.error("at least one RUN recording is needed")
    sizes = set(args.size or [4096, 8192])
    base, base_gpus = burst(args.baseline, sizes)
    read = [burst(r, sizes) for r in args.runs]
    runs = [run for run, _ in read]
    print(f"baseline: GPU {', '.join(base_gpus) or 'not said'}")
    for i, (_, gpus) in enumerate(read):
        same = " (the baseline's)" if gpus and gpus == base_gpus else ""
        print(f"run {i + 1}: GPU {', '.join(gpus) or 'not said'}{same}")
    references = {lv.id for lv in registry.references()}
    known = references | {lv.id for lv in registry.ladder()}
    ran = {key for run in runs for key in run}
    left = sorted({lv for lv, _ in base if lv not in known and not any(lv == k[0] for k in ran)})
    head = ["level", "size", "baseline TFLOPS @ MHz"]
    head += [f"run {i + 1} (diff %)" for i in range(len(runs))] + ["within"]
    body, bad = [], 0
    for level, size in sorted(base, key=lambda k: (k[1], k[0] in references, k[0])):
        if (args.levels_only and level in references) or level in left:
            continue
        t0, c0, s0 = base[(level, size)]
        row = [level, f"{size}^3", f"{t0:.4g} @ {c0 or 0:.0f}{_step_text(s0)}"]
        ok = True
        for run in runs:
            got = run.get((level, size))
            if got is None:
                row.append("missing")
                ok = False
                continue
            diff = 100.0 * (got[0] / t0 - 1.0)
            ok = ok and abs(diff) <= args.tolerance_pct
            row.append(f"{got[0]:.4g} @ {got[1] or 0:.0f} ({diff:+.1f}){_step_text(got[2])}")
        row.append("yes" if ok else "NO")
        bad += not ok
        body.append(row)
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    for r in [head, *body]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print(f"{len(body) - bad} of {len(body)} within {args.tolerance_pct:g}% in every run")
    print("[step k/n ±x%]: launches k+1..n ran x% slower (+) or faster (-) than 1..k, the "
          "median is of the side with more launches (kernels/results/launch_steps.py)")
    if left:
        print(f"not in any run (a user's kernels, not in `bench --all`): {', '.join(left)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""At which clock state does a paired ratio hold? (issue 41 item 8 at 8192³; GPU machine.)

    python3 benchmarks/clock_state.py [-l LEVEL ...] [-s 8192] [--reps 3]
        [--policies none,recover,duty,warm] [--pair-budget-s 1.5] [--json]
    python3 benchmarks/clock_state.py --smoke  # CI: arguments and the table, no GPU

At 8192³ the paired % of reference of the mma.sync levels moved 3-9% between repetitions
of one runner (docs/perf-notes.md, "Paired ratios at 8192³"), while each pair's two
launches ran at one clock: the loop reached a different clock state each time. Here each
level is paired with its reference in this process (kernels/engine/paired.py's
run_paired) under each clock-state policy, ``--reps`` times, the policies interleaved
within each repetition so that the GPU's warming meets them alike:

- ``none``: the loop as the runner runs it today;
- ``recover``: nvbench's throttle recovery: 50 ms idle after a pair with a launch under
  97% of the max SM clock;
- ``duty``: idle after every pair as long as the pair took (the GPU busy about half the
  time);
- ``warm``: 2 s of both launches back to back before the loop (into the limiter's
  steady state), then as ``none``.

The table gives, per level and policy, each repetition's % of reference, its mean SM
clock and pairs, and the spread over the repetitions (greatest - least, in % of the
least): the policy whose spread stays under 1% is the clock state to time at.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import _smoke
from _args import count, square_size

LEVELS = ("mma_sync", "mma_persistent", "mma_tma", "wgmma_tma")
POLICIES = ("none", "recover", "duty", "warm")


def policy(name: str) -> dict[str, Any]:
    """run_paired's keyword arguments for a policy."""
    from gemmscope.kernels.engine.paired import Rest

    return {"none": {}, "recover": {"rest": Rest(band=0.97, recover_s=0.05)},
            "duty": {"rest": Rest(duty=1.0)}, "warm": {"warm_s": 2.0}}[name]


def measure(levels: list[str], S: int, reps: int, policies: list[str], budget_s: float
            ) -> list[dict[str, Any]]:
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock
    from gemmscope.kernels.engine.paired import run_paired
    from gemmscope.kernels.ladder import registry

    bench = Bench(device_info(), wall_clock())
    rows = {(lv, p): {"level": lv, "policy": p, "runs": []} for lv in levels for p in policies}
    for rep in range(reps):
        for p in policies:
            for lv in levels:
                level = registry.get(lv)
                ref = registry.get(level.reference)
                try:
                    _r, res = run_paired(bench, level, ref, S, S, S, 1000, 3, budget_s,
                                         energy=False, **policy(p))
                    run = {k: res.get(k) for k in (
                        "pct_of_reference", "pct_ci_low", "pct_ci_high", "pairs",
                        "stop_reason", "sm_clock_mhz_avg", "sm_clock_mhz_min",
                        "reference_sm_clock_mhz_avg", "temp_c_start", "loop_s",
                        "throttled_pairs", "verified")}
                except Exception as exc:  # a level that cannot run says why, the rest go on
                    run = {"error": f"{type(exc).__name__}: {exc}"[:200]}
                rows[(lv, p)]["runs"].append(run)
                print(f"rep {rep + 1} {p:<8} {lv:<16} {json.dumps(run)}", file=sys.stderr,
                      flush=True)
    return list(rows.values())


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'level':<16}{'policy':<9}" + "".join(f"{'rep' + str(i + 1):>22}"
                                                    for i in range(3)) + f"{'rel %':>8}"]
    for row in rows:
        cells, pcts = [], []
        for run in row["runs"]:
            pct = run.get("pct_of_reference")
            if pct is None:
                cells.append(f"{'error':>22}")
                continue
            pcts.append(pct)
            mhz = run.get("sm_clock_mhz_avg") or 0.0
            cells.append(f"{pct:7.2f} {mhz:5.0f}MHz {run.get('pairs', 0):>4}p".rjust(22))
        rel = (f"{100 * (max(pcts) - min(pcts)) / min(pcts):8.2f}"
               if len(pcts) > 1 and min(pcts) > 0 else f"{'-':>8}")
        lines.append(f"{row['level']:<16}{row['policy']:<9}" + "".join(cells) + rel)
    lines.append("cells: % of reference, the level's mean SM clock over its launches, pairs; "
                 "rel: (greatest - least) / least over the repetitions")
    return "\n".join(lines)


MADE_UP_ROWS = [
    {"level": "mma_tma", "policy": "none",
     "runs": [{"pct_of_reference": 64.5, "sm_clock_mhz_avg": 1752.0, "pairs": 216},
              {"pct_of_reference": 69.1, "sm_clock_mhz_avg": 1905.0, "pairs": 10},
              {"error": "made up"}]},
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-l", "--level", action="append", help=f"default: {', '.join(LEVELS)}")
    ap.add_argument("-s", "--size", type=square_size, default=8192, help="M = N = K (default 8192)")
    ap.add_argument("--reps", type=count, default=3)
    ap.add_argument("--policies", default=",".join(POLICIES),
                    help=f"comma-separated, of {', '.join(POLICIES)}")
    ap.add_argument("--pair-budget-s", type=float, default=1.5)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    policies = args.policies.split(",")
    bad = [p for p in policies if p not in POLICIES]
    if bad:
        ap.error(f"unknown policy {bad[0]!r} (of {', '.join(POLICIES)})")
    if args.smoke:
        _smoke.made_up(table(MADE_UP_ROWS))
        print(_smoke.GPU_LINE)
        return 0
    rows = measure(args.level or list(LEVELS), args.size, args.reps, policies,
                   args.pair_budget_s)
    print(table(rows))
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How steady is the paired % of reference? (issue 41 item 8's instrument; GPU machine.)

    python benchmarks/paired_ratio.py [-l LEVEL ...] [-s 4096 -s 2048x2048x8192]
        [--runs 3] [--repeats 1000] [--pair-budget-s 2] [--fresh] [--same-operands SEED]
        [--warm-s 30] [--rounds 4] [--json] [--json-out FILE]
    python benchmarks/paired_ratio.py --smoke  # CI: arguments and the table, no GPU

Every ladder level that has a reference (or those given with -l), at each shape, is run
``--runs`` times through the runner (``gemmscope bench``'s path: a burst paired with its
reference in one loop, docs/protocol.md "Paired ratios"), all runs in one runner process
unless ``--fresh`` starts a runner per pass. The table gives each run's
% of reference with its stop reason, and the spread (greatest minus least, in points of
%) over the runs: the figure issue 41 asks to be small where sequential runs gave 3-7%;
then per run the clocks the two sides held and each side's TFLOPS, which say whether the
level or its reference moved. ``--same-operands SEED`` makes every run draw the same
operands (the runner's $GEMMSCOPE_OPERAND_SEED): where the spread then shrinks, the data
moved the ratio.
``--warm-s S`` first runs a Tensor Core level sustained for S GPU seconds, untimed, so
that the first repetition meets the GPU as warm as the later ones. On two fresh machines
(E, G in docs/perf-notes.md) the first repetition at 4096³ ran the references 0.7-1.7%
slower than the next two, at 37 °C against 43-44 °C; with 40 s of warming on a third
(2026-12-03) the FP8 ratios still spread 1.3-2.2% over three repetitions, their reference
moving by as much from one repetition to the next: the warmth was not the cause.
``--rounds R`` makes each repetition the pool of R loops spread over the whole run, in
turn with the other repetitions' loops (passes over the levels in the order repetition
1, 2, 3, 1, 2, 3, ...): a reference that drifts over minutes (cuBLASLt FP8 at 4096³, 1-2%
at a fixed clock: docs/perf-notes.md, "Issue 41: how long a paired loop must run") then
meets every repetition alike, instead of setting one repetition apart from the next. A
pooled repetition's % is the mean of its loops' %, its interval Student's t over them
(so it widens where the loops disagree, which one loop's interval cannot show); each loop's
own figures stay in the row's "loops". ``--only-short S`` gives the extra rounds only to
the rows whose first loop took under S seconds of pairs (the rows a drift of seconds to
minutes sets apart; a SIMT loop at 8192³ already spans its budget). ``--json-out FILE``
rewrites FILE with the rows after every pass, so a run cut short keeps its passes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import _smoke
from _args import count, level_ids, shape

MADE_UP_ROWS = [  # what measure returns, made up (--smoke renders them)
    {"level": "wgmma_tma", "shape": "4096x4096x4096",
     "runs": [(99.6, 99.3, 99.9, "precision", 18, 0), (99.8, 99.5, 100.1, "precision", 14, 0),
              (99.4, 99.0, 99.9, "budget", 640, 3)],
     "held": [(1755.0, 1740.0, 41.0), (1710.0, 1700.0, 48.0), (1680.0, 1665.0, 52.0)],
     "tflops": [(741.2, 742.0), (730.9, 732.4), (724.1, 728.5)]},
    {"level": "mma_tma", "shape": "4096x4096x4096",
     "runs": [(63.3, 62.1, 64.0, "budget", 512, 40), (65.1, 64.0, 66.2, "budget", 498, 12),
              (None, None, None, "error", 0, 0)]},
]


def paired_level_ids(text: str) -> list[str]:
    """An argparse ``type``: level ids (``_args.level_ids``), each with a reference to pair
    with; one without is refused by argparse in one line (exit 2)."""
    from gemmscope.kernels.ladder import registry

    ids = level_ids()(text)
    alone = [i for i in ids if registry.get(i).reference not in registry.BY_ID]
    if alone:
        raise argparse.ArgumentTypeError(
            f"{', '.join(alone)} {'has' if len(alone) == 1 else 'have'} no reference to "
            "pair with")
    return ids


def paired_levels(ids: list[str] | None) -> list[str]:
    """The levels asked (argparse checked each has a reference), else every ladder level
    with one."""
    from gemmscope.kernels.ladder import registry

    if not ids:
        return [lv.id for lv in registry.ladder() if lv.reference in registry.BY_ID]
    return ids


WARM_LEVEL, WARM_SIZE = "wgmma_tma", 8192  # what --warm-s runs: the GPU's full power


def warm_request(seconds: float) -> Any:
    """The untimed run that warms the GPU before the first repetition: WARM_LEVEL at
    WARM_SIZE³ sustained, in windows of at most 30 s (the protocol's most), no cool-down,
    no reference."""
    import math

    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.protocol.commands import Mode, SustainedConfig
    from gemmscope.kernels.protocol.plan import RunRequest

    trials = max(1, math.ceil(seconds / 30.0))
    return RunRequest(WARM_LEVEL, Shape(WARM_SIZE, WARM_SIZE, WARM_SIZE), compare=False,
                      mode=Mode.SUSTAINED,
                      sustained=SustainedConfig(window_s=max(1.0, seconds / trials),
                                                trials=trials, cooldown_s=0.0))


def loop_s(r: Any) -> float:
    """The seconds of pairs in a paired result's loop (each side's median launch time over
    its pairs, the rests and flushes aside): what ``--only-short`` compares."""
    ref_ms = r.shape.flops / (r.reference_tflops * 1e9) if r.reference_tflops else 0.0
    return r.pairs * (r.median_ms + ref_ms) / 1000.0


def loop_figures(r: Any) -> dict[str, Any]:
    """One loop's figures, as a row keeps them."""
    return {"run": (r.pct_of_reference, r.pct_ci_low, r.pct_ci_high, r.stop_reason, r.pairs,
                    r.throttled_pairs),
            "held": (r.sm_clock_mhz_avg, r.reference_sm_clock_mhz_avg, r.temp_c_start),
            "tflops": (r.tflops, r.reference_tflops), "loop_s": loop_s(r)}


# a loop that gave no paired result (and a repetition whose every loop did not)
FAILED_LOOP = {"run": (None, None, None, "error", 0, 0), "held": (None, None, None),
               "tflops": (None, None), "loop_s": None}
# Student's t, two-sided 95% (its 0.975 quantile), by degrees of freedom 1-19: the most
# --rounds allows is 20 loops a repetition
T975 = (None, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
        2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093)


def pool(loops: list[dict[str, Any]]) -> dict[str, Any]:
    """A repetition made of several loops: its % the mean of theirs, the interval Student's
    t (95%) over them, the stop reason theirs where they agree (else "mixed"), the pairs and
    throttled pairs summed, the clocks, temperature (the first loop's) and TFLOPS averaged.
    One loop is itself; none (every loop failed) is an error."""
    done = [lp for lp in loops if lp["run"][0] is not None]
    if len(done) <= 1:  # one loop is itself; none, a failed loop
        only = done[0] if done else FAILED_LOOP
        return {k: only[k] for k in ("run", "held", "tflops")}
    from statistics import fmean, stdev

    pcts = [lp["run"][0] for lp in done]
    mid = fmean(pcts)
    half = T975[len(pcts) - 1] * stdev(pcts) / len(pcts) ** 0.5
    stops = {lp["run"][3] for lp in done}

    def avg(key: str, i: int) -> float | None:
        vals = [lp[key][i] for lp in done if lp[key][i] is not None]
        return fmean(vals) if vals else None

    return {"run": (mid, mid - half, mid + half, stops.pop() if len(stops) == 1 else "mixed",
                    sum(lp["run"][4] for lp in done),
                    sum(lp["run"][5] or 0 for lp in done)),
            "held": (avg("held", 0), avg("held", 1), done[0]["held"][2]),
            "tflops": (avg("tflops", 0), avg("tflops", 1))}


def passes(runs: int, rounds: int) -> list[int]:
    """The repetition each pass over the levels serves: every repetition's first loop, then
    every repetition's second, ... (1, 2, 3, 1, 2, 3 for three runs of two rounds), so the
    loops of one repetition lie spread over the run as evenly as the others'."""
    return [p % runs for p in range(runs * rounds)]


def measure(levels: list[str], shapes: list[tuple[int, int, int]], runs: int, repeats: int,
            budget_s: float, fresh: bool, energy_s: float = 0.0,
            warm_s: float = 0.0, rounds: int = 1, only_short_s: float | None = None,
            json_out: str | None = None) -> list[dict[str, Any]]:
    """Each (level, shape) ``runs`` times; per run (pct, ci_low, ci_high, stop_reason,
    pairs, throttled_pairs), or Nones and "error". ``warm_s``: GPU seconds of an untimed
    sustained run before the first repetition (warm_request). ``rounds``: the loops pooled
    into each run (pool), their passes in the order ``passes`` gives; ``only_short_s``: a
    row whose first loop took that many seconds of pairs or more keeps that one loop.
    ``json_out``: rewritten with the rows after every pass."""
    import time

    from gemmscope.kernels.drive.session import RunnerSession, default_runner_command
    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.protocol.plan import RunRequest
    from gemmscope.kernels.protocol.records import Result

    requests = [RunRequest(lid, Shape(M, N, K), pair_budget_s=budget_s, max_pairs=repeats,
                           energy_s=energy_s)
                for M, N, K in shapes for lid in levels]
    key_of = {id(r): (r.level, r.shape.M, r.shape.N, r.shape.K) for r in requests}
    rows = {key_of[id(r)]: {
        "level": r.level, "shape": f"{r.shape.M}x{r.shape.N}x{r.shape.K}",
        "loops": [[] for _ in range(runs)]} for r in requests}
    order = passes(runs, rounds)
    session = None
    t0 = time.monotonic()
    try:
        for p, rep in enumerate(order):
            if session is None:
                session = RunnerSession(lambda _e: None, default_runner_command(50),
                                        watchdog_s=300)
                session.wait_ready()
            if p == 0 and warm_s > 0:
                session.run([warm_request(warm_s)])
                print(f"warmed {warm_s:.0f} s", file=sys.stderr, flush=True)
            todo = requests if p < runs else [
                r for r in requests if not _long(rows[key_of[id(r)]], only_short_s)]
            events = session.run(todo)
            got = {(e.level, e.M, e.N, e.K): e for e in events
                   if isinstance(e, Result) and e.paired}
            for r in todo:
                key = key_of[id(r)]
                res = got.get(key)
                rows[key]["loops"][rep].append(
                    loop_figures(res) if res is not None else FAILED_LOOP)
            _fill(rows.values())
            print(f"pass {p + 1} of {len(order)} (repetition {rep + 1}, {len(todo)} loops) "
                  f"done at {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
            if json_out:
                with open(json_out, "w") as f:
                    json.dump(list(rows.values()), f)
            if fresh:
                session.close()
                session = None
    finally:
        if session is not None:
            session.close()
    return list(rows.values())


def _long(row: dict[str, Any], only_short_s: float | None) -> bool:
    """Whether ``--only-short`` leaves this row at its first loop."""
    if only_short_s is None:
        return False
    first = row["loops"][0][0] if row["loops"] and row["loops"][0] else None
    return first is not None and first["loop_s"] is not None and first["loop_s"] >= only_short_s


def _fill(rows: Any) -> None:
    """Each row's "runs", "held" and "tflops", one entry per repetition with loops so far,
    pooled from its loops."""
    for row in rows:
        pooled = [pool(loops) for loops in row["loops"] if loops]
        row["runs"] = [pl["run"] for pl in pooled]
        row["held"] = [pl["held"] for pl in pooled]
        row["tflops"] = [pl["tflops"] for pl in pooled]


def clock_table(rows: list[dict[str, Any]]) -> str:
    """Per run: the level's and its reference's mean SM clock over their launches in the
    loop, the temperature at the loop's start, and the ratio at equal clocks (the % times
    the reference's clock over the level's): where the ratio moves between runs, this says
    whether the limiter moved it."""
    lines = [f"{'level':<22} {'shape':<18} run: level MHz / reference MHz, C at start, "
             "% at equal clocks"]
    for row in rows:
        cells = []
        for (pct, *_), held in zip(row["runs"], row.get("held", []), strict=False):
            lv, ref, temp = held
            if pct is None or not lv or not ref:
                cells.append(f"{'-':>26}")
                continue
            t = f"{temp:.0f}C" if temp is not None else "-"
            cells.append(f"{lv:5.0f}/{ref:5.0f} {t:>4} {pct * ref / lv:7.2f}".rjust(26))
        lines.append(f"{row['level']:<22} {row['shape']:<18} " + " ".join(cells))
    return "\n".join(lines)


def tflops_table(rows: list[dict[str, Any]]) -> str:
    """Per run the level's and its reference's TFLOPS from the same loop: which side moved
    where the ratio did."""
    lines = [f"{'level':<22} {'shape':<18} run: level TFLOPS / reference TFLOPS"]
    for row in rows:
        cells = [f"{lv:8.1f}/{ref:8.1f}" if lv and ref else f"{'-':>17}"
                 for lv, ref in row.get("tflops", [])]
        lines.append(f"{row['level']:<22} {row['shape']:<18} " + " ".join(cells))
    return "\n".join(lines)


def table(rows: list[dict[str, Any]]) -> str:
    runs = max((len(r["runs"]) for r in rows), default=0)
    head = f"{'level':<22} {'shape':<18} " + " ".join(
        f"{'run' + str(i + 1):>24}" for i in range(runs)) + f" {'spread':>7} {'rel':>7}"
    lines = [head, "-" * len(head)]
    for row in rows:
        cells, pcts = [], []
        for pct, lo, hi, stop, pairs, _throttled in row["runs"]:
            if pct is None:
                cells.append(f"{stop:>24}")
                continue
            pcts.append(pct)
            ci = f"[{lo:.1f},{hi:.1f}]" if lo is not None else "[-]"
            cells.append(f"{pct:6.2f} {ci:<12}{stop[0]}{pairs:>4}"[:24].rjust(24))
        spread = f"{max(pcts) - min(pcts):7.2f}" if len(pcts) > 1 else f"{'-':>7}"
        rel = (f"{100 * (max(pcts) - min(pcts)) / min(pcts):7.2f}"
               if len(pcts) > 1 and min(pcts) > 0 else f"{'-':>7}")
        lines.append(f"{row['level']:<22} {row['shape']:<18} " + " ".join(cells) + " "
                     + spread + " " + rel)
    lines.append("cells: % of reference, its 95% interval, stop reason (p precision, "
                 "b budget, r repeats) and pairs; spread: greatest - least % over the runs; "
                 "rel: the spread in % of the least")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-l", "--level", action="extend", type=paired_level_ids,
                    help="a level, or several with commas (default: every ladder level with "
                         "a reference)")
    ap.add_argument("-s", "--size", action="append", type=shape, metavar="N|MxNxK",
                    help="shape(s) (default 4096)")
    ap.add_argument("--runs", type=count, default=3, help="repetitions (default 3)")
    ap.add_argument("--repeats", type=count, default=1000,
                    help="the most pairs per run (default 1000: the budget or the precision "
                         "rule ends the loop first)")
    ap.add_argument("--pair-budget-s", type=float, default=2.0,
                    help="wall seconds of each level-reference loop (default 2)")
    ap.add_argument("--fresh", action="store_true",
                    help="a new runner for every pass over the levels")
    ap.add_argument("--energy-s", type=float, default=0.0,
                    help="each run's energy window, GPU seconds (default 0: the ratio only)")
    ap.add_argument("--same-operands", type=int, metavar="SEED",
                    help="every run draws the same operands, from this seed (default: fresh "
                         "operands per run, as a recording's)")
    ap.add_argument("--warm-s", type=float, default=0.0,
                    help="GPU seconds of an untimed sustained run before the first "
                         "repetition, so that it meets a warm GPU (default 0: none)")
    ap.add_argument("--rounds", type=count, default=1,
                    help="loops pooled into each repetition, spread over the run (default 1)")
    ap.add_argument("--only-short", type=float, metavar="S",
                    help="with --rounds: only rows whose first loop took under S seconds of "
                         "pairs get the further rounds")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    ap.add_argument("--json-out", metavar="FILE",
                    help="rewrite FILE with the rows (as --json prints them) after every pass")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    from gemmscope.kernels.protocol import commands

    lo, hi = commands.MAX_PAIRS[1], commands.MAX_PAIRS[2]
    if not 0 <= args.warm_s <= 600:
        ap.error("--warm-s must be from 0 to 600 seconds")
    if args.runs < 1 or not lo <= args.repeats <= hi:
        ap.error(f"--runs must be at least 1 and --repeats from {lo} to {hi}")
    if not 1 <= args.rounds <= 20:
        ap.error("--rounds must be from 1 to 20")
    if args.only_short is not None and not 0 < args.only_short <= 600:
        ap.error("--only-short must be over 0 and at most 600 seconds")
    try:
        commands.check_energy_s(args.energy_s)
    except commands.ProtocolError as exc:
        ap.error(f"--energy-s: {exc}")
    try:
        commands.check_pair_budget_s(args.pair_budget_s)
    except commands.ProtocolError as exc:
        ap.error(f"--pair-budget-s: {exc}")
    levels = paired_levels(args.level)
    shapes = args.size or [(4096, 4096, 4096)]
    if args.smoke:
        _smoke.level_variants((lid, {}) for lid in levels)
        if args.warm_s:
            warm_request(args.warm_s).command("warm")  # the protocol takes it
        _smoke.made_up("\n".join((table(MADE_UP_ROWS), clock_table(MADE_UP_ROWS),
                                   tflops_table(MADE_UP_ROWS))))
        return _smoke.needs_gpu()
    if args.same_operands is not None:  # the runner, a child, inherits it
        from gemmscope.kernels.protocol.events import OPERAND_SEED

        os.environ[OPERAND_SEED] = str(args.same_operands)
    rows = measure(levels, shapes, args.runs, args.repeats, args.pair_budget_s, args.fresh,
                   args.energy_s, args.warm_s, args.rounds, args.only_short, args.json_out)
    print(table(rows))
    print(clock_table(rows))
    print(tflops_table(rows))
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

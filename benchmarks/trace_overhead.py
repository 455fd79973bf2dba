"""What a level's trace build costs (issue 46 item 2): each traced level's plain and trace
builds launched in alternating pairs at one shape, the median of the per-pair ratios as
the overhead (goal: at most 5%), with what the trace recorded and whether it verified.

    python benchmarks/trace_overhead.py [--levels a,b] [--size 4096] [--pairs 30]
        [--every auto,1,8] [--out F]
    python benchmarks/trace_overhead.py --smoke  # CI: the table from made-up rows

``--every``: the K-stage samplings to measure, each a row (``auto``: the one the runner
picks for the shape; 1: every K step). ``--out F`` writes each trace event (one JSON
line each, as ``record --trace`` records them). Needs a GPU.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import _smoke
from _args import count, square_size

GOAL_PCT = 5.0
HEADER = (f"{'level':<18}{'shape':>16}{'every':>6}{'plain ms':>10}{'trace ms':>10}"
          f"{'overhead':>10}{'goal':>7}{'events':>10}{'full':>6}{'verified':>10}")


def row(event: dict[str, Any]) -> str:
    over = event.get("overhead_pct")
    shape = f"{event['M']}x{event['N']}x{event['K']}"
    ok = "-" if over is None else ("ok" if over <= GOAL_PCT else "OVER")

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    return (f"{event['level']:<18}{shape:>16}{event.get('stage_every', 1):>6}"
            f"{ms(event.get('plain_ms')):>10}"
            f"{ms(event.get('trace_ms')):>10}"
            f"{'-' if over is None else f'{over:+.2f}%':>10}{ok:>7}{event['recorded']:>10}"
            f"{event['full_lanes']:>6}{event.get('verified')!s:>10}")


def table(events: list[dict[str, Any]]) -> str:
    return "\n".join([HEADER, *(row(e) for e in events)])


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="all", help="comma-separated ids (default: every "
                                                    "level with a trace build)")
    ap.add_argument("--size", type=square_size, default=4096, help="M = N = K (default 4096)")
    ap.add_argument("--pairs", type=count, default=30)
    ap.add_argument("--every", default="auto",
                    help="comma-separated K-stage samplings to measure: auto, 1, 4, 8, 16, "
                         "32, 64, 128 (default auto)")
    ap.add_argument("--out", help="write the trace events here, one JSON line each")
    _smoke.add_flag(ap)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.toolchain import nvrtc

    traced = [lv.id for lv in registry.ladder() if nvrtc.traceable(lv)]
    ids = traced if args.levels == "all" else [x.strip() for x in args.levels.split(",")]
    missing = [i for i in ids if i not in traced]
    if missing:
        print(f"no trace build: {', '.join(missing)}; those with one: {', '.join(traced)}",
              file=sys.stderr)
        return 2
    from gemmscope.kernels.protocol.trace_kinds import STAGE_EVERY

    try:
        everies = [None if x.strip() == "auto" else int(x) for x in args.every.split(",")]
    except ValueError:
        everies = [0]
    if any(e is not None and e not in STAGE_EVERY for e in everies):
        print(f"--every: auto or one of {', '.join(map(str, STAGE_EVERY))}, not "
              f"{args.every!r}", file=sys.stderr)
        return 2
    if args.smoke:
        from gemmscope.kernels.models import trace_schedule

        _smoke.level_variants((i, {}) for i in ids)
        made = []
        for i, lid in enumerate(ids):
            model = trace_schedule.schedule(registry.get(lid), 256, 256, 256, 132)
            event = trace_schedule.synthetic_trace(model, 132, seed=i,
                                                   stage_every=everies[0] or 1)
            made.append({**event, "plain_ms": 0.2 + i, "trace_ms": (0.2 + i) * 1.01,
                         "overhead_pct": 1.0 + i, "verified": True})
        _smoke.made_up(table(made))
        return _smoke.needs_gpu()
    from gemmscope.kernels.engine import trace_launch
    from gemmscope.kernels.protocol import events

    measured = []
    for lid in ids:
        for every in everies:
            event = trace_launch.trace_event(registry.get(lid), args.size, args.size,
                                             args.size, args.pairs, every)
            measured.append(event)
            print(row(event) if len(measured) > 1 else table([event]), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for e in measured:
                f.write(events.dumps({"t": 0.0, **e}) + "\n")
        print(f"wrote {args.out}")
    over = [f"{e['level']} (every {e.get('stage_every', 1)})" for e in measured
            if e.get("overhead_pct") is not None and e["overhead_pct"] > GOAL_PCT]
    print(f"over the {GOAL_PCT:g}% goal: {', '.join(over) or 'none'}")
    return 0 if all(e.get("verified") for e in measured) else 1


if __name__ == "__main__":
    sys.exit(main())

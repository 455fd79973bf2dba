"""What the K steps of a traced launch waited for: per K step of a tile, how long its copies
took from the producer's issue to the consumers' taking the stage, how long the consumers
waited for it and how long its products took; then the tiles' epilogues, the gaps
between a lane's tiles, and how far the blocks' starts and ends lie apart (issue 46: "is my
producer warp keeping the consumers fed"; no GPU: it reads the trace events a recording
holds, or one written by
``python -m gemmscope.kernels.engine.trace_launch ... --out FILE``).

    python3 benchmarks/trace_steps.py RECORDING [--level fp8_deep] [--steps 8] [--all]
    python3 benchmarks/trace_steps.py --smoke  # CI: the bundled recording's traces

A step's "issue to data" is the time from its LOAD_ISSUED (the producer, after its wait
for a free stage) to the first consumer's DATA_READY (the consumer past its wait on the
stage's barrier): the copies' latency where the consumers were already waiting (the
column "of which waited" counts those steps and takes the median over them only), else an
upper bound. "wait" and "math" are the timeline's phases of the consumer lanes, or of a
K-stage observer's lane where the level has one (fp8_deep: the block's stages; its
consumers record their tiles, and a tile's epilogue is then from its last K step's
products to each consumer's tile end). The app's zoom of an SM shows the same phases. Times in µs,
medians over the recorded steps (a sampling build records windows of three steps).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import _smoke
from _args import count

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "resources" / "sessions" / "h200-ladder.jsonl.gz"
WAITED_NS = 50  # a consumer wait longer than this: the step's data came after it asked


def _median_us(values: list[int]) -> str:
    return f"{statistics.median(values) / 1000:.2f}" if values else "-"


def step_rows(trace: Any) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """(one row per K step of a tile that the trace recorded, the tiles' epilogues and the
    gaps between a lane's tiles in ns). Each row: k, steps, issue_to_data (ns values),
    waited (the values of steps whose consumers waited), wait, math (ns values)."""
    from gemmscope.app.core import trace_timeline as tt
    from gemmscope.kernels.protocol.trace_kinds import TraceKind

    ev = trace.events
    kind = [trace.kind_of(k) for k in ev.kind]
    issued: dict[tuple[int, int, int], int] = {}
    ready: dict[tuple[int, int, int], int] = {}
    done: dict[tuple[int, int], int] = {}  # (block, tile): its last K step's products done
    last_k = (trace.ksteps or 0) - 1
    # a consumer lane's tile begins and ends, in time order below: the gaps between tiles
    ends: dict[tuple[int, int], list[tuple[int, str]]] = defaultdict(list)
    for i, k in enumerate(kind):
        key = (ev.block[i], ev.tile[i], ev.k[i])
        if k is TraceKind.LOAD_ISSUED and ev.lane[i] == 0:
            issued[key] = ev.t_ns[i]
        elif k is TraceKind.DATA_READY and ev.lane[i] > 0:
            ready[key] = min(ready.get(key, ev.t_ns[i]), ev.t_ns[i])
        elif ev.lane[i] > 0 and k in (TraceKind.TILE_BEGIN, TraceKind.TILE_END):
            ends[(ev.block[i], ev.lane[i])].append((ev.t_ns[i], k.value))
        if k is TraceKind.MMA_DONE and ev.k[i] == last_k:
            done[key[:2]] = max(done.get(key[:2], 0), ev.t_ns[i])
    timeline = tt.build(trace)
    wait: dict[int, list[int]] = defaultdict(list)
    math: dict[int, list[int]] = defaultdict(list)
    waited_keys: set[tuple[int, int, int]] = set()
    other: dict[str, list[int]] = {"epilogue": [], "between tiles": []}
    for spans in timeline.phases.values():
        for s in spans:
            if s.lane == 0:
                continue
            ns = s.end_ns - s.start_ns
            if s.phase is tt.Phase.WAIT:
                wait[s.k].append(ns)
                if ns > WAITED_NS:
                    waited_keys.add((s.block, s.tile, s.k))
            elif s.phase is tt.Phase.MATH:
                math[s.k].append(ns)
            elif s.phase is tt.Phase.EPILOGUE:
                other["epilogue"].append(ns)
    if not other["epilogue"]:  # a K-stage observer's trace: its consumers record tiles only
        other["epilogue"] = [t - done[(ev.block[i], ev.tile[i])] for i, t in enumerate(ev.t_ns)
                             if kind[i] is TraceKind.TILE_END and ev.lane[i] > 0
                             and (ev.block[i], ev.tile[i]) in done]
    # the launch's skew and tail: when each block's first and last events came, against
    # the first block's start and the last block's end (clusters wait for SMs in pairs)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for b, t in zip(ev.block, ev.t_ns, strict=True):
        first[b] = min(first.get(b, t), t)
        last[b] = max(last.get(b, t), t)
    if first:
        start, end = min(first.values()), max(last.values())
        other["a block's start after the first block's"] = [t - start for t in first.values()]
        other["a block's end before the last block's"] = [end - t for t in last.values()]
    for seq in ends.values():
        seq.sort()
        other["between tiles"] += [b[0] - a[0] for a, b in itertools.pairwise(seq)
                                   if a[1] == "tile_end" and b[1] == "tile_begin"]
    lat: dict[int, list[int]] = defaultdict(list)
    waited: dict[int, list[int]] = defaultdict(list)
    for key, t in issued.items():
        if key in ready:
            lat[key[2]].append(ready[key] - t)
            if key in waited_keys:
                waited[key[2]].append(ready[key] - t)
    rows = [{"k": k, "steps": len(lat[k]) or len(math[k]), "issue_to_data": lat[k],
             "waited": waited[k], "wait": wait[k], "math": math[k]}
            for k in sorted(set(lat) | set(wait) | set(math))]
    return rows, other


def table(trace: Any, steps: int) -> str:
    rows, other = step_rows(trace)
    t = trace
    head = (f"{t.level} {t.M}x{t.N}x{t.K} {dict(t.params or {})}: K steps sampled "
            f"{'all' if t.stage_every == 1 else f'3 in every {t.stage_every}'}"
            + (f"; trace build {t.overhead_pct:+.1f}% over plain" if t.overhead_pct is not None
               else ""))
    lines = [head, f"{'K step':>7} {'steps':>6} {'issue to data':>14} {'of which waited':>16} "
             f"{'wait':>6} {'math':>6}"]
    shown = rows if len(rows) <= 2 * steps else rows[:steps] + rows[-steps:]
    for r in shown:
        lines.append(f"{r['k']:>7} {r['steps']:>6} {_median_us(r['issue_to_data']):>14} "
                     f"{len(r['waited']):>6} {_median_us(r['waited']):>9} "
                     f"{_median_us(r['wait']):>6} {_median_us(r['math']):>6}")
    every = [v for r in rows for v in r["issue_to_data"]]
    waited = [v for r in rows for v in r["waited"]]
    lines.append(f"{'all':>7} {len(every):>6} {_median_us(every):>14} {len(waited):>6} "
                 f"{_median_us(waited):>9} {_median_us([v for r in rows for v in r['wait']]):>6}"
                 f" {_median_us([v for r in rows for v in r['math']]):>6}")
    for name, values in other.items():
        lines.append(f"{name}: {_median_us(values)} µs (median of {len(values)})")
    return "\n".join(lines)


def traces(path: Path, level: str | None, every_one: bool = False) -> list[Any]:
    """The measured traces of ``level`` (None: of every level) in the recording: the last
    of each level and shape (a recording updated by ``record --update`` keeps the ones it
    superseded), or all of them."""
    from gemmscope.kernels.protocol import recording
    from gemmscope.kernels.protocol.events import ProtocolError
    from gemmscope.kernels.protocol.trace_records import Trace

    try:
        events = recording.read_session(path, only=(Trace,)).events
    except ProtocolError as exc:  # no session header: trace_launch --out's lines, maybe
        events = _lone_events(path, exc)
    out = [e for e in events if isinstance(e, Trace) and not e.synthetic
           and (level is None or e.level == level)]
    if not out:
        raise SystemExit(f"{path}: no measured trace{f' of {level}' if level else ''}")
    if every_one:
        return out
    last = {(t.level, t.shape): t for t in out}  # the app's rule (SessionStore._on_trace)
    return list(last.values())


def _lone_events(path: Path, why: Exception) -> list[Any]:
    """The events of a file of event lines without a session header (what
    ``trace_launch --out`` writes), each line bounded and decoded like a recording's;
    SystemExit with the recording reader's reason where no line is an event."""
    from gemmscope.kernels.files.reading import MAX_BYTES, Kind, open_regular
    from gemmscope.kernels.protocol.decoding import decode
    from gemmscope.kernels.protocol.events import MAX_EVENT_BYTES, ProtocolError

    out = []
    try:
        with open_regular(path) as fh:
            if os.fstat(fh.fileno()).st_size <= MAX_BYTES[Kind.RECORDING]:
                for lineno, line in enumerate(iter(lambda: fh.readline(MAX_EVENT_BYTES + 1),
                                                   b""), 1):
                    try:
                        out.append(decode(line, lineno, str(path)))
                    except ProtocolError:
                        continue
    except OSError:
        pass
    if not out:
        raise SystemExit(f"{path}: cannot be read: {why}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recording", nargs="?", type=Path, help="a recording (.jsonl or .jsonl.gz)")
    ap.add_argument("--level", default=None, help="only this level's traces")
    ap.add_argument("--all", action="store_true",
                    help="every trace, also those a later one of the same level and shape "
                         "superseded")
    ap.add_argument("--steps", type=count, default=8,
                    help="the first and last this many K steps of a tile (default 8)")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if args.smoke:
        args.recording, args.level = BUNDLED, args.level or "fp8_deep"
        print(f"smoke: the bundled recording's {args.level} traces")
    if args.recording is None:
        ap.error("a recording is needed")
    for i, trace in enumerate(traces(args.recording, args.level, args.all)):
        print(("\n" if i else "") + table(trace, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())

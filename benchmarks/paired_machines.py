"""Issue 41 item 8 across machines: the rows of several `paired_ratio.py --json` runs, one per
fresh machine, side by side level by level (no GPU: it reads what the runs printed).

    python3 benchmarks/paired_machines.py LABEL=FILE [LABEL=FILE ...] [--within 1] [--across 2]
    python3 benchmarks/paired_machines.py --dir docs/paired-runs/h100  # a machine a file
    python3 benchmarks/paired_machines.py --smoke  # CI: the measured runs in docs/paired-runs

FILE is what `paired_ratio.py --json` printed (its last line that holds a JSON list is
read; the tables above it are skipped) or a file holding only that list. For each level
and shape the table gives each machine's median % of reference over its repetitions with
their spread ("within": greatest over least, less one, in %), then how far the machines'
medians lie apart ("across", the same measure over the machines), and whether the row
holds item 8's bounds: within every run at most --within % (default 1) and across at most
--across % (default 2; with one run only the first is judged). A row a machine lacks, or
one with a failed repetition, does not hold.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import _smoke

from gemmscope.kernels.files.reading import FileRefused, Kind, read_bytes
from gemmscope.kernels.protocol.text_safety import clean_text

REPO = Path(__file__).resolve().parent.parent
RUNS_DIR = REPO / "docs" / "paired-runs"  # measured runs kept with the notes
MAX_BYTES = 8 << 20  # a paired run of every level at two shapes prints ~40 KB
MAX_ROWS = 10_000


class RunFileError(ValueError):
    """A file that is not a paired run's output (said in one line)."""


def rows_of(text: str, name: str) -> list[dict[str, Any]]:
    """The rows of a paired run's output: the last line that is a JSON list of rows, each
    {"level": str, "shape": str, "runs": [[pct or null, ...], ...]}."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("["):
            continue
        try:
            rows = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rows, list) or len(rows) > MAX_ROWS:
            break
        out = []
        for row in rows:
            if not (isinstance(row, dict) and isinstance(row.get("level"), str)
                    and isinstance(row.get("shape"), str)
                    and isinstance(row.get("runs"), list)):
                raise RunFileError(f"{name}: a row is not a paired run's row")
            pcts = [r[0] for r in row["runs"] if isinstance(r, list) and r
                    and isinstance(r[0], int | float) and not isinstance(r[0], bool)
                    and r[0] > 0]
            out.append({"level": _plain(row["level"]), "shape": _plain(row["shape"]),
                        "pcts": [float(p) for p in pcts], "reps": len(row["runs"])})
        return out
    raise RunFileError(f"{name}: no line of paired_ratio.py --json rows")


def _plain(text: str) -> str:
    """A name from a file or the command line as one table cell: bounded, one line, no
    control, format or bidi character, its cell separator escaped."""
    return " ".join(clean_text(text[:64]).split()).replace("|", "\\|")


def read_run(path: Path) -> list[dict[str, Any]]:
    try:  # a regular file of at most MAX_BYTES, as every file a user names is read
        data = read_bytes(path, Kind.BENCHMARK_OUTPUT, MAX_BYTES)
    except FileRefused as exc:
        raise RunFileError(str(exc)) from None
    return rows_of(data.decode("utf-8", errors="replace"), str(path))


def spread(values: list[float]) -> float | None:
    """Greatest over least, less one, in %: None for fewer than two values."""
    return 100.0 * (max(values) / min(values) - 1.0) if len(values) > 1 else None


def compare(runs: dict[str, list[dict[str, Any]]], within: float = 1.0,
            across: float = 2.0) -> list[dict[str, Any]]:
    """One row per (level, shape) in the order the runs first give them: per machine
    (median, within-run spread), the spread across the machines' medians, and whether
    both bounds hold."""
    by = {label: {(row["level"], row["shape"]): row for row in rows}
          for label, rows in runs.items()}
    keys = dict.fromkeys(key for rows in by.values() for key in rows)  # first-seen order
    out = []
    for key in keys:
        cells: dict[str, tuple[float, float | None] | None] = {}
        ok = True
        for label in runs:
            row = by[label].get(key)
            if row is None or not row["pcts"]:
                cells[label] = None
                ok = False
                continue
            w = spread(row["pcts"])
            cells[label] = (statistics.median(row["pcts"]), w)
            if len(row["pcts"]) < row["reps"] or (w is not None and w > within):
                ok = False
        medians = [c[0] for c in cells.values() if c is not None]
        a = spread(medians) if len(medians) == len(runs) else None
        if len(runs) > 1 and (a is None or a > across):
            ok = False
        out.append({"level": key[0], "shape": key[1], "cells": cells, "across": a,
                    "holds": ok})
    return out


def table(runs: list[str], rows: list[dict[str, Any]], within: float, across: float) -> str:
    head = ("| level | shape | " + " | ".join(f"{r}: median (within %)" for r in runs)
            + f" | across % | within {within:g}%, across {across:g}% |")
    lines = [head, "|" + "---|" * (len(runs) + 4)]
    for row in rows:
        cells = []
        for label in runs:
            c = row["cells"][label]
            cells.append("-" if c is None else
                         f"{c[0]:.2f} ({'-' if c[1] is None else f'{c[1]:.2f}'})")
        a = "-" if row["across"] is None else f"{row['across']:.2f}"
        lines.append(f"| {row['level']} | {row['shape']} | " + " | ".join(cells)
                     + f" | {a} | {'yes' if row['holds'] else '**no**'} |")
    held = sum(r["holds"] for r in rows)
    lines.append(f"\n{held} of {len(rows)} rows hold both bounds" if len(runs) > 1 else
                 f"\n{held} of {len(rows)} rows hold the bound within the run (one run: "
                 "nothing to compare across)")
    return "\n".join(lines)


def parse_run(item: str) -> tuple[str, Path]:
    label, sep, path = item.partition("=")
    if not sep or not label or not path:
        raise argparse.ArgumentTypeError(f"{item!r}: give LABEL=FILE")
    return _plain(label[:32]), Path(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", nargs="*", type=parse_run, metavar="LABEL=FILE")
    ap.add_argument("--within", type=float, default=1.0,
                    help="the most a run's repetitions may spread, %% (default 1)")
    ap.add_argument("--across", type=float, default=2.0,
                    help="the most the machines' medians may spread, %% (default 2)")
    ap.add_argument("--dir", type=Path, metavar="DIR",
                    help="also every .json file in DIR, each labelled by its name (as "
                         "docs/paired-runs/h100/ keeps a machine a file)")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    folder = RUNS_DIR if args.smoke else args.dir
    if folder is not None and not folder.is_dir():
        ap.error(f"--dir {str(folder)!r} is not a folder")
    items = [*(((_plain(p.stem), p) for p in sorted(folder.glob("*.json"))) if folder else ()),
             *(() if args.smoke else args.run)]
    if not items:
        ap.error("give at least one LABEL=FILE, or a --dir that holds .json files")
    if len({label for label, _ in items}) != len(items):
        ap.error("every run needs its own label")
    try:
        runs = {label: read_run(path) for label, path in items}
    except RunFileError as exc:
        print(f"paired_machines: {exc}", file=sys.stderr)
        return 2
    print(table(list(runs), compare(runs, args.within, args.across), args.within,
                args.across))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The README's "Measured on the H200" tables from a recording: TFLOPS and % of cuBLAS at
the same precision, shape and mode, a row per mode and square size, a column per level
(FP32 SIMT levels in one table, the Tensor Core levels in the other). Each cell is the
level's newest result there (kernels/results/rows.py's ``newest``: after ``record
--update`` the re-measured run, not the one it replaced); † where the ratio compares runs
at different SM clocks (the row model's clock comparison). Where the recording has
launch_clocks events, a row per size gives the burst ratio at equal clocks: each side's
TFLOPS per GHz of the clock inside its launches (``record --launch-clocks``).

    python benchmarks/readme_table.py [RECORDING] [--size N ...]

Default: the bundled recording, sizes 4096 and 8192. Prints Markdown; the README's prose
around the tables is written by hand.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

import _smoke
from _args import square_size

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.events import Mode
from gemmscope.kernels.protocol.records import LaunchClocks, Result
from gemmscope.kernels.results.rows import newest, pct_text, rows_of, tflops_short

BUNDLED = Path(__file__).resolve().parents[1] / "resources" / "sessions" / "h200-ladder.jsonl.gz"
MODES = tuple(Mode)


def heading(level: registry.Level) -> str:
    """A column's heading: the level, with its precision and arch where not FP32 SIMT."""
    if level.precision == registry.Precision.FP32:
        return level.id
    precision = {"fp8": "E4M3"}.get(str(level.precision), str(level.precision).upper())
    return f"{level.id} ({precision}{', ' + level.arch if level.arch else ''})"


EQUAL = "equal clocks"  # a row's mode word for the ratio at the clocks inside the launches


def tables(results: list[Result], sizes: list[int],
           clocks: Iterable[LaunchClocks] = ()) -> list[str]:
    """The tables; ``clocks``: the recording's launch_clocks events, which add a row per
    size of the burst ratios at equal clocks inside the launches (record --launch-clocks)."""
    shown = newest(r for r in results if r.device_index == 0)
    cells: dict[tuple[str, str, Shape], str] = {}
    for row in rows_of(shown, clocks=clocks):
        r = row.result
        if r.mode == Mode.BURST and row.in_launch and row.pct_equal_clocks is not None:
            cells[(r.level, EQUAL, r.shape)] = f"({pct_text(row.pct_equal_clocks)})"
        text = tflops_short(r.tflops)
        if row.pct_of_reference is not None:
            text += f" ({pct_text(row.pct_of_reference)})"
            known = r.sm_clock_mhz_avg is not None and row.reference_clock_mhz is not None
            if known and row.clock_comparison() != "same":
                text += "†"
        cells[(r.level, r.mode, r.shape)] = text
    levels = [lv for lv in registry.ladder()
              if any(key[0] == lv.id for key in cells)]
    groups = [[lv for lv in levels if lv.precision == registry.Precision.FP32],
              [lv for lv in levels if lv.precision != registry.Precision.FP32]]
    out: list[str] = []
    for group in (g for g in groups if g):
        out += ["| | " + " | ".join(heading(lv) for lv in group) + " |",
                "|---|" + "---|" * len(group)]
        for mode in (*MODES, EQUAL):
            for n in sizes:
                row = [cells.get((lv.id, mode, Shape(n, n, n)), "–") for lv in group]
                if any(c != "–" for c in row):
                    name = f"burst {n}³ at equal clocks" if mode == EQUAL else f"{mode} {n}³"
                    out.append(f"| {name} | " + " | ".join(row) + " |")
        out.append("")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recording", nargs="?", default=str(BUNDLED))
    ap.add_argument("--size", type=square_size, action="append", default=[])
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = (_smoke.support("synthetic_session").write(Path(tmp) / "synthetic.jsonl")
                if args.smoke else args.recording)
        session = recording.read_session(str(path), only=(Result, LaunchClocks))
    sizes = args.size or ([4096, 8192] if not args.smoke else
                          sorted({r.M for r in session.results if r.M == r.N == r.K}))
    clocks = [e for e in session.events if isinstance(e, LaunchClocks)]
    for line in tables(session.results, sizes, clocks):
        sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``gemmscope compare OLD NEW [--fail-over PCT]``: a regression gate for kernel authors'
CI (issue 41 item 7). Prints each level's % of cuBLAS in both recordings with its interval,
the change and a verdict (kernels/results/comparison.py); exits

- 0 where no ratio fell by more than PCT percentage points beyond both intervals,
- 1 where one did (or a level that verified in OLD gives a wrong answer in NEW),
- 2 where a file cannot be read, the two ran on different GPU models, or they have no
  level in common: said in one line on stderr.

Apart from the rest of the CLI, as ``report`` is: it imports only the reader and the rows."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from ..protocol.option_bounds import OneLineParser, bounded

if TYPE_CHECKING:
    from ..protocol.recording import Session

PROG = "gemmscope compare"


MAX_FAIL_OVER_PCT = 1000.0  # percentage points: a ratio falls from 1,000% of cuBLAS at most


def fail_over(text: str) -> float:
    """``--fail-over PCT``: percentage points, bounded by the one rule of every number on
    a command line (kernels/protocol/option_bounds.py)."""
    return float(_FAIL_OVER(text))


_FAIL_OVER = bounded(float, 0, MAX_FAIL_OVER_PCT, unit="percentage points")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..results.comparison import DEFAULT_FAIL_OVER_PCT

    p.add_argument("old", metavar="OLD", help="the recording to compare against")
    p.add_argument("new", metavar="NEW", help="the recording to check")
    p.add_argument("--fail-over", type=_FAIL_OVER, default=DEFAULT_FAIL_OVER_PCT,
                   metavar="PCT",
                   help="exit 1 where a level's %% of cuBLAS fell by more than PCT "
                        "percentage points beyond both intervals (default "
                        f"{DEFAULT_FAIL_OVER_PCT:g})")


class Refused(Exception):
    """A file or a pair of files that cannot be compared; the message is one line."""


def _gpu_models(path: str, session: Session) -> tuple[str, ...]:
    """The GPU models a recording ran on (one GPU and another of its model compare: a CI
    machine's GPU may change, its model may not)."""
    names = tuple(sorted({(d.name or "").strip() for d in session.header.gpus()} - {""}))
    if not names:
        raise Refused(f"{path}: the recording names no GPU")
    return names


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from ..protocol import recording
    from ..protocol.events import ProtocolError
    from ..protocol.records import Result
    from ..protocol.text_safety import terminal_text
    from ..results import comparison

    def refuse(message: str) -> int:
        stderr.write(terminal_text(f"{PROG}: {message}") + "\n")
        return 2

    sessions = []
    for name in (args.old, args.new):
        try:  # the reader says why a name is not a file it reads (missing, a FIFO...)
            sessions.append(recording.read_session(name, only=(Result,)))
        except ProtocolError as exc:
            return refuse(str(exc).splitlines()[0] if str(exc) else f"{name}: unreadable")
    old, new = sessions
    try:
        old_gpus, new_gpus = _gpu_models(args.old, old), _gpu_models(args.new, new)
    except Refused as exc:
        return refuse(str(exc))
    if old_gpus != new_gpus:
        return refuse(f"{args.old} ran on {' + '.join(old_gpus)}, {args.new} on "
                      f"{' + '.join(new_gpus)}: ratios compare on one GPU model")
    for name, session in ((args.old, old), (args.new, new)):
        if session.problem is not None:  # skipped lines: said, the rest compared
            stderr.write(terminal_text(f"{PROG}: {name}: {session.problem}") + "\n")
    lines, only_old, only_new = comparison.compare(old.results, new.results, args.fail_over)
    if not lines:
        return refuse(f"{args.old} and {args.new} have no level with a result in common")
    out = [f"OLD {args.old}", f"NEW {args.new}", f"GPU {' + '.join(new_gpus)}; a ratio "
           f"fails where it fell by more than {args.fail_over:g} pp beyond both intervals",
           "", *comparison.table(lines)]
    out += comparison.unmatched("only in OLD", only_old)
    out += comparison.unmatched("only in NEW", only_new)
    failed = [ln for ln in lines if ln.verdict in comparison.FAILING]
    out.append(f"{len(failed)} of {len(lines)} fell" if failed else
               f"no regression in {len(lines)} compared")
    for text in out:
        stdout.write(terminal_text(text) + "\n")
    return 1 if failed else 0


def parser() -> OneLineParser:
    """The parser of ``gemmscope compare`` started alone (quick.py): one-line refusals."""
    p = OneLineParser(prog=PROG, description="compare two recordings' ratios")
    add_arguments(p)
    return p


def main(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """``argv``: what follows ``compare`` on the command line."""
    return run(parser().parse_args(argv), stdout or sys.stdout, stderr or sys.stderr)

"""``gemmscope report``: print the results table of a recording.

Apart from the rest of the CLI, so that a report imports only what it reads with (the
recording reader, the row model, the table): a report of the bundled recording starts
and ends in a fraction of a second."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from ..protocol.option_bounds import OneLineParser
from ..protocol.text_safety import terminal_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--per-clock", action="store_true",
                   help="add each run's TFLOPS per GHz of SM clock held and its ratio to "
                        "the reference at equal clocks")
    p.add_argument("--baseline", metavar="B",
                   help="a second recording to compare with, per level, shape, mode and "
                        "GPU; says first what differs between the two runs")


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """The report on ``stdout``, what could not be read on ``stderr``: 0, or 1 when a
    line was skipped, 2 when the file cannot be read at all."""
    from ..protocol.events import ProtocolError
    from ..results.session_report import report_lines

    baseline = args.baseline  # (the reader says why a name is not a file it reads)
    try:
        if baseline is not None:
            from ..results.baseline_report import baseline_lines

            lines, problems = baseline_lines(args.file, baseline, args.markdown)
        else:
            lines, problem = report_lines(args.file, args.markdown,
                                          args.per_clock)
            problems = [problem] if problem is not None else []
        for line in lines:
            stdout.write(line + "\n")
    except ProtocolError as exc:
        stderr.write(f"gemmscope report: {terminal_text(str(exc))}\n")
        return 2
    except BrokenPipeError:
        return reader_gone(stdout)
    for said in problems:
        stderr.write(said + "\n")
    return 1 if problems else 0


def reader_gone(stdout: TextIO) -> int:
    """The reader of stdout went away (``gemmscope report | head``): stop quietly."""
    if stdout is sys.stdout:
        try:  # the interpreter flushes stdout once more at exit: let that go nowhere
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    return 141  # 128 + SIGPIPE, what a shell reports for a writer the pipe closed on


def main(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """``argv``: what follows ``report`` on the command line."""
    p = OneLineParser(prog="gemmscope report",
                                description="print the results table of a recording")
    add_arguments(p)
    return run(p.parse_args(argv), stdout or sys.stdout, stderr or sys.stderr)

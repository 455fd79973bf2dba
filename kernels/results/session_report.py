"""``gemmscope report``: a recording's results table and errors, as text that is safe on a
terminal (a recording is untrusted data). No Qt."""

from __future__ import annotations

from ..protocol import recording
from ..protocol.records import Error, LaunchClocks, Result
from ..protocol.text_safety import terminal_text
from .counts import counted
from .rows import DASH, newest, versions_text
from .table import render


def printable(text: str) -> str:
    """Text from a recording, safe on a terminal (kernels/protocol/text_safety.py): control,
    format and bidi characters and lone surrogates are written as escapes."""
    return terminal_text(text)


def by_device(results: list[Result]) -> list[Result]:
    """The results in the order their measurement first appears (level, shape, mode), and
    within one the GPUs in index order: the two GPUs ran side by side, so which one's result
    arrived first changed from row to row (GPU 1 above GPU 0 for half the levels)."""
    first: dict[tuple[object, ...], int] = {}
    for r in results:
        first.setdefault((r.level, r.shape, r.mode), len(first))
    return sorted(results, key=lambda r: (first[(r.level, r.shape, r.mode)],
                                          r.device_index or 0))


def report_lines(path: str, markdown: bool = False, per_clock: bool = False
                 ) -> tuple[list[str], str | None]:
    """The report of the recording at ``path`` (its lines, each printable) and what could
    not be read (None: every line was read); ``per_clock``: with TFLOPS per GHz held and
    the ratio at equal clocks."""
    # results, errors and the clocks inside launches only: the other lines are not
    # decoded (only checked whole)
    session = recording.read_session(path, only=(Result, Error, LaunchClocks))
    header = session.header
    peaks = header.device.peak_tflops if header.device is not None else None
    names = [d.name or "no device" for d in header.gpus()]
    shown = by_device(newest(session.results))  # a result measured again: its newest run
    older = len(session.results) - len(shown)
    history = f" (and {older} older, kept as history)" if older else ""
    # what software made the results shown (issue 41 item 6), each set once
    made = dict.fromkeys(versions_text(r.versions) for r in shown)
    made_with = [f"made with {text}" for text in made if text != DASH]
    lines = [f"{path}: {' + '.join(names) or 'no device'}, recorded "
             f"{header.created}, {counted(len(shown), 'result')}{history}, "
             f"{counted(len(session.errors), 'error')}", *made_with, "",
             # a line each, not the table as one string: a write of a short line to a pipe
             # is whole or fails (EPIPE); one write of the whole table (700 KB for 5,000
             # results) could end part-way without an error when the reader went away
             # (`| head`), and Python's unbuffered stdout (-u) drops the rest silently
             *render(shown, markdown=markdown, peaks=peaks, per_clock=per_clock,
                     clocks=[e for e in session.events if isinstance(e, LaunchClocks)]
                     ).split("\n")]
    for e in session.errors:
        where = " ".join(str(v) for v in (e.level, e.M, e.N, e.K) if v is not None)
        first = (e.message.splitlines() or [""])[0]
        lines.append(f"error [{e.kind}] {where}: {first}")
    problem = (printable(f"gemmscope report: {session.problem}")
               if session.problem is not None else None)
    return [printable(line) for line in lines], problem

"""``gemmscope levels``: the ladder's levels, of this checkout or of the runner on
``--remote``, marked where this machine's GPU (or ``--cc``) cannot run them."""

from __future__ import annotations

import argparse
from typing import TextIO

import msgspec

from ..drive import remote
from ..drive.session import RunnerSession, SessionState
from ..ladder import arch as arch_limits
from ..ladder import registry
from ..protocol import records as rec
from ..results.session_report import printable
from .arguments import CliError, remote_target


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    target = remote_target(args.remote)
    entries = (msgspec.convert([lv.catalog_entry(i) for i, lv in enumerate(registry.LEVELS)],
                               list[rec.CatalogEntry])
               if target is None else remote_levels(args, target))
    cc = args.cc if args.cc is not None or target is not None else local_cc()
    cannot = arch_limits.cannot_run([e.id for e in entries], entries, cc)
    rows = [(printable(str(entry.id)), printable(str(entry.precision)),
             printable(str(entry.arch_need or "?")),
             printable(str(entry.title)),
             printable(", ".join(f"{k}={v}" for k, v in (entry.params or {}).items())
                       + (f"  [cannot run here: {arch_limits.device_arch(cc)}]"
                          if cc is not None and entry.id in cannot else "")))
            for entry in entries]
    # columns as wide as their longest cell (an id longer than the rest, such as a remote
    # runner's, moves every row's columns with it, never only its own)
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        stdout.write(("  ".join(cells) + "  " + row[4]).rstrip() + "\n")
    return 0


def local_cc() -> str | None:
    """This machine's GPU's compute capability, where CuPy is installed and finds one."""
    import importlib.util

    if importlib.util.find_spec("cupy") is None:
        return None
    from ..device import gpu

    cp, _reason = gpu.get_cupy()
    if cp is None:
        return None
    major, minor = cp.cuda.Device().compute_capability[0], cp.cuda.Device().compute_capability[1:]
    return f"{major}.{minor}"


def remote_levels(args: argparse.Namespace, target: remote.Target) -> list[rec.CatalogEntry]:
    """The catalog of the runner on ``--remote``, asked with ``{"cmd": "levels"}``."""
    import time

    answers: list[rec.Levels] = []
    session = RunnerSession(lambda ev: answers.append(ev) if isinstance(ev, rec.Levels) else None,
                            remote.ssh_command(target, args.remote_command,
                                               extra=args.ssh_option),
                            **remote.session_options(target))
    try:
        try:
            session.wait_ready()
        except RuntimeError as exc:
            raise CliError(str(exc)) from None
        session.send({"cmd": "levels", "id": "levels"})
        deadline = time.monotonic() + remote.HEADER_TIMEOUT_S
        while not answers:
            if session.state is SessionState.FAILED:
                raise CliError(session.failure_text)
            if time.monotonic() > deadline:
                raise CliError(f"the runner on {args.remote} did not list its levels "
                               f"within {remote.HEADER_TIMEOUT_S:g} s")
            session.pump(0.1)
    finally:
        session.close()
    return answers[0].levels

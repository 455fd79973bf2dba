"""The `gemmscope` command: the desktop app, or the GPU-side subcommands.

`gemmscope` and `gemmscope replay FILE` open the Qt app. The subcommands of
gemmscope.kernels.cli.main (`runner`, `bench`, `record`, `report`, `levels`, `diff`, `sass`)
are the GPU side and never import Qt, so they work on a headless GPU box without PySide6;
so does `doctor` (gemmscope.app.core.doctor; its command line is here). Before Qt is
imported, the doctor's start checks run: with no usable display (or a platform plugin
missing system libraries) the app says so and exits 2 instead of Qt's abort.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

from ..kernels.cli.quick import quick
from ..kernels.cli.subcommands import NAMES

# Ctrl-C (SIGINT) while the app loads, exports or draws a picture: every file is written
# under a temporary name and renamed when whole (kernels/protocol/atomic_file.py), so the
# one being written is removed and any older file of that name is left as it was
INTERRUPTED = ("gemmscope: interrupted (Ctrl-C); the file being written was not finished "
               "and is not kept (an older one of that name is left as it was)")
INTERRUPTED_STATUS = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C ended


def doctor_parser() -> argparse.ArgumentParser:
    from ..kernels.protocol import OneLineParser, command_line, seconds
    from .core.machine_facts import RUNNER_TIMEOUT_S

    p = OneLineParser(prog="gemmscope doctor", description=(
        "Check what the app needs on this machine, with the fix for each problem. "
        "Exit code 0: it can run live; 1: replay only; 2: it cannot start."))
    p.add_argument("--runner", metavar="CMD", type=command_line,
                   help="check this runner command line instead "
                   "of the one in the preferences")
    p.add_argument("--settings", metavar="INI", type=Path,
                   help="the preferences file the app was given (--settings)")
    p.add_argument("--no-try-runner", action="store_true",
                   help="do not start the runner to ask which GPU it sees")
    p.add_argument("--ncu", action="store_true",
                   help="profile one small kernel with ncu to test the counter permission")
    p.add_argument("--timeout-s", type=seconds(), default=RUNNER_TIMEOUT_S,
                   help="how long the runner (and ncu) may take to answer")
    p.add_argument("--json", action="store_true", help="the findings as JSON")
    return p


def doctor_options(argv: list[str]) -> Any:
    """``gemmscope doctor``'s command line as the doctor's typed options."""
    from .core.doctor import DoctorOptions

    args = doctor_parser().parse_args(argv)
    return DoctorOptions(args.runner, args.settings, not args.no_try_runner, args.ncu,
                         args.timeout_s, args.json)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BaseException as exc:  # Ctrl-C, or an error raised because of one
        from ..kernels.protocol import by_ctrl_c

        if not by_ctrl_c(exc):
            raise
        print(INTERRUPTED, file=sys.stderr)
        return INTERRUPTED_STATUS


def run() -> NoReturn:
    """The process's entry (the `gemmscope` script, ``python -m gemmscope.app.main``, the
    bundle): :func:`main`'s status as the exit status. After a Ctrl-C, once its line is
    said and its files cleaned, the process leaves at once: with the interpreter's own
    shutdown between the line and the exit, 2 of 24 exports interrupted as they began
    writing still ended by SIGINT (status -2) instead of 130; and a Ctrl-C that Python
    dropped (kernels/protocol/interrupt.py) ends the command as interrupted too."""
    from ..kernels.protocol import ctrl_c_seen, watch_ctrl_c

    watch_ctrl_c()
    code = main()
    if ctrl_c_seen() and code != INTERRUPTED_STATUS:  # one Python dropped
        print(INTERRUPTED, file=sys.stderr)
        code = INTERRUPTED_STATUS
    if code == INTERRUPTED_STATUS:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C changes nothing now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    fast = quick(argv[0]) if argv else None
    if fast is not None:  # runner, report: without the rest of the CLI
        return fast(argv[1:])
    if argv and argv[0] in NAMES:  # the CLI's subcommands (its import is not cheap)
        from ..kernels.cli.main import main as cli_main

        return cli_main(argv)
    from .core import doctor  # no Qt

    if argv and argv[0] == "doctor":
        return doctor.run(doctor_options(argv[1:]))
    # (a talk's --check only measures text: offscreen, with or without a display)
    checking = argv[:1] == ["talk"] and "--check" in argv
    if checking:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from .core.qt_platform import headless_platform

    platform = headless_platform(argv, os.environ)
    if platform is not None:  # a picture needs no screen (a CI runner, ssh without -X)
        os.environ["QT_QPA_PLATFORM"] = platform
    if "-h" not in argv and "--help" not in argv and (blockers := doctor.start_blockers()):
        print(doctor.explain_blockers(blockers), file=sys.stderr)
        return 2
    if argv and argv[0] == "gallery":
        from .gallery import main as gallery_main  # imports Qt

        return gallery_main(argv[1:])
    from .gui_main import main as gui_main  # imports Qt

    return gui_main(argv)


if __name__ == "__main__":
    run()

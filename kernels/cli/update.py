"""``gemmscope record --update FILE [--dry-run]``: re-measure, in FILE's own shapes and
modes, the levels whose code or parameters changed since FILE's newest result of them
(kernels/cli/update_plan.py says which and why), and append the new results to FILE as a
new runner session, the file replaced whole when the runs finish (plain or gzip:
kernels/protocol/output_file.py). No Qt."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..protocol import recording
from ..protocol.output_file import Output, OutputRefused, updated_file
from ..protocol.text_safety import terminal_text
from . import update_plan
from .arguments import CliError

# the options an update takes; the others say what to run, which the file says here
# (--ncu: where ncu is, for the profiles an update makes again; on PATH where not given)
TAKEN = frozenset({"command", "update", "dry_run", "unpaired", "max_gpu_s", "runner",
                   "levels_from", "telemetry_hz",
                   "timeout", "start_timeout", "remote", "remote_command", "ssh_option",
                   "ncu"})


def check_options(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """--update takes the runner's options only: what to run comes from the file."""
    if args.update is None:
        for flag, given in (("--dry-run", args.dry_run), ("--unpaired", args.unpaired),
                            ("--max-gpu-s", args.max_gpu_s is not None)):
            if given:
                raise CliError(f"{flag} goes with --update FILE")
        return
    defaults = vars(parser.parse_args(["record", f"--update={args.update}"]))
    given = [name for name, value in vars(args).items()
             if name not in TAKEN and value != defaults.get(name)]
    if given:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
        raise CliError(f"--update runs what FILE's own results say (levels, shapes, modes, "
                       f"repeats): it cannot go with {flags}")


def prepare(args: argparse.Namespace,
            stdout: TextIO) -> tuple[update_plan.UpdatePlan, Output] | None:
    """The plan, said on ``stdout``; the plan (its runs and the profiles made again) and
    the file to record them to, or None where nothing is to run (nothing changed, or
    --dry-run)."""
    path = Path(args.update)
    if not path.exists():
        raise CliError(f"--update: {path} does not exist")
    session = recording.read_session(path, only=update_plan.READ)
    if session.gzip_cut:  # a member after a cut one would be read as the cut one's rest
        raise CliError(f"--update: {path} ends inside a gzip member (cut short); a member "
                       f"appended after it could not be read. Update an uncompressed copy: "
                       f"gzip -dc {path} > COPY.jsonl")
    try:
        update_plan.check_protocol(session)
    except update_plan.UpdateRefused as exc:
        raise CliError(f"--update refused: {exc}") from None
    plan = update_plan.plan_update(session, args.unpaired, args.max_gpu_s)
    lines = update_plan.plan_lines(plan, estimate=args.dry_run)
    if plan.empty:
        paired = (", every ratio was timed in pairs" if args.unpaired else "")
        lines.insert(0, f"{path}: nothing changed: every level's newest result ran the "
                        f"code and parameters of this checkout{paired}, and its profiles "
                        f"are of its newest build")
    for line in lines:
        stdout.write(terminal_text(line) + "\n")
    if args.dry_run or plan.empty:
        return None
    stdout.flush()
    try:
        out = updated_file(path)
    except OSError as exc:
        raise OutputRefused(f"cannot read {path}: {exc.strerror or exc}") from None
    return plan, out

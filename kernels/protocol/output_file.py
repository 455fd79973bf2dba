"""The ``--output`` file of ``bench`` and ``record``: refused at once where it exists
(unless ``--force``), continued with ``--append``, written under a temporary name beside it
and renamed when the runs have finished, or, when they do not finish, kept only where it
holds a measurement. No Qt."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import TextIO

from . import events
from .atomic_file import NewFile
from .decoding import decode
from .records import Session


class OutputRefused(Exception):
    """The output file cannot be written as asked; the message says why."""


def output_file(args: argparse.Namespace) -> NewFile | None:
    """The --output file, refused at once where it exists (unless --force): it is written
    under a temporary name beside it and renamed when the runs have finished."""
    if not args.output:
        return None
    if getattr(args, "append", False):
        return appended_file(args)
    try:
        return NewFile(args.output, replace=args.force)
    except FileExistsError:
        raise OutputRefused(f"{args.output} exists; pass --force to replace it") from None
    except OSError as exc:
        raise OutputRefused(f"cannot write {args.output}: {exc.strerror or exc}") from None


def appended_file(args: argparse.Namespace) -> NewFile:
    """--append: a copy of the existing session file under the temporary name, which the
    runs continue and which replaces the file when they finish; so the file is never
    half-written, and what it held is never lost."""
    if args.force:
        raise OutputRefused("--append keeps the file and --force replaces it: pass one")
    path = Path(args.output)
    try:
        with path.open("rb") as fh:
            first = fh.readline(events.MAX_LINE_BYTES + 1)
        if not isinstance(decode(first, 1, str(path)), Session):
            raise events.ProtocolError("the first line is not a session header", 1,
                                         str(path))
    except FileNotFoundError:
        raise OutputRefused(f"--append: {path} does not exist") from None
    except OSError as exc:
        raise OutputRefused(f"cannot read {path}: {exc.strerror or exc}") from None
    except events.ProtocolError as exc:
        raise OutputRefused(f"--append: {exc}; nothing was appended") from None
    out = NewFile(path, replace=True)
    try:
        shutil.copyfile(path, out.temp)
    except OSError as exc:
        out.discard()
        raise OutputRefused(f"cannot write beside {path}: {exc.strerror or exc}") from None
    out.kept_bytes = out.temp.stat().st_size
    return out


def abandon(out: NewFile, stderr: TextIO) -> None:
    """The runs did not finish: keep what was measured under the temporary name (and say
    where), else remove it. The --output file is left as it was."""
    try:
        with out.temp.open("rb") as fh:  # with --append, only what this run added
            fh.seek(out.kept_bytes)
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return
    if '"type":"result"' in text or '"type":"counters"' in text:
        stderr.write(f"gemmscope: the runs did not finish; what was measured is in "
                     f"{out.temp} ({out.path} was not written)\n")
    else:
        out.discard()

"""Reading a file a user named, as untrusted input: the one way every such file is read.

- Only a regular file: a device (``/dev/zero``), a FIFO, a socket or a folder is refused
  at once, told apart on the opened descriptor (``fstat``), which is opened non-blocking
  so that a FIFO with no writer cannot hang the open. A symlink is followed (the user
  named it); :func:`inside` says whether a path stays inside a folder.
- Bounded in bytes before anything is parsed: at most :data:`MAX_BYTES` of its kind (one
  table, here), read as that many bytes plus one, whatever size the file claims. The time
  a read takes is bounded with it: a regular file of a bounded size, parsed by a parser
  whose nesting is bounded too.
- Bounded in nesting before it is parsed: a TOML text nesting its arrays and tables
  deeper than :data:`MAX_DEPTH` is refused without parsing it (:func:`check_nesting`);
  a parser's RecursionError is refused as well, should anything nest past the count.
- Every refusal is a :class:`FileRefused`, one line naming the file and the reason.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from enum import StrEnum
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO


class Kind(StrEnum):
    """What a file is to the program (its name in a message, its byte limit)."""

    SPEC = "kernel spec"
    SOURCE = "kernel source"
    TALK = "talk file"
    PREFERENCES = "preferences file"
    GPU_TABLE = "GPU table"
    RECORDING = "recording"
    REPORT = "Nsight Compute report"
    NCU_CSV = "Nsight Compute CSV"
    BENCHMARK_OUTPUT = "benchmark script's output"  # what benchmarks/ wrote, read back


# the most bytes read of each kind: far above real files, far below what fills a memory
MAX_BYTES: dict[Kind, int] = {
    Kind.SPEC: 32 << 10,  # a spec is a page of TOML
    Kind.SOURCE: 40 << 10,  # it travels in a run command (at most 64 KiB of JSON)
    Kind.TALK: 256 << 10,  # a talk is a page of text
    Kind.PREFERENCES: 1 << 20,  # a preferences file is a few hundred bytes
    Kind.GPU_TABLE: 1 << 20,  # a few dozen GPUs
    Kind.RECORDING: 64 << 30,  # read in chunks, on a worker; gzip's inflation bounded too
    Kind.REPORT: 1 << 30,  # read by ncu_report's native code, in a child process
    Kind.NCU_CSV: 256 << 20,  # ncu --csv --page raw of one launch is a few hundred KB
    Kind.BENCHMARK_OUTPUT: 64 << 20,  # a paired run prints ~40 KB, a 20 s series a few MB
}
MAX_DEPTH = 32  # nested arrays and tables of a TOML file (a spec or talk nests 3)


class NotRegularFile(OSError):
    """The path is not a regular file (a device, FIFO, socket or folder), or a dangling
    symlink."""


class FileRefused(ValueError):
    """A user's file that is not read: one line, the file and the reason."""


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file (a symlink followed); a
    device (``/dev/zero``), a FIFO or a folder is NotRegularFile at once, without
    blocking (a FIFO is opened non-blocking to be told apart)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (a device, FIFO or "
                                               "folder); only a file is read", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def read_bytes(path: str | Path, kind: Kind, limit: int | None = None) -> bytes:
    """The bytes of the user's ``kind`` file at ``path``: a regular file of at most
    ``limit`` (default MAX_BYTES[kind]) bytes; FileRefused in one line otherwise."""
    limit = MAX_BYTES[kind] if limit is None else limit
    try:
        with open_regular(path) as fh:  # /dev/zero, a FIFO: refused at once
            data = fh.read(limit + 1)  # a device or /proc file reports size 0: bounded
    except NotRegularFile:
        raise FileRefused(f"{path}: not a regular file (a device, FIFO or folder); a "
                          f"{kind} is a file") from None
    except OSError as exc:
        raise FileRefused(f"{path}: cannot read: {_reason(exc)}") from None
    if len(data) > limit:
        raise FileRefused(f"{path}: over {limit:,} bytes; a {kind} is at most {limit:,}")
    return data


def read_text(path: str | Path, kind: Kind, limit: int | None = None) -> str:
    """The UTF-8 text of the user's ``kind`` file (see :func:`read_bytes`)."""
    data = read_bytes(path, kind, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRefused(f"{path}: not UTF-8 text (byte {exc.start})") from None


# what a TOML text holds between brackets that are not structure: strings (basic with
# escapes, literal, and both multi-line forms, unterminated ones to the end) and comments
_TOML_NOISE = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*(?:"""|$)'
    r"|'''(?:[^']|'(?!''))*(?:'''|$)"
    r'|"(?:[^"\\\n]|\\.)*(?:"|$)'
    r"|'[^'\n]*(?:'|$)"
    r"|#[^\n]*", re.S | re.M)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting(text: str) -> int:
    """How deep a TOML text's arrays and inline tables nest (brackets in strings and
    comments not counted; a table header ``[[a]]`` counts 2), without parsing it: one
    pass of two regular expressions."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    brackets = _NOT_BRACKET.sub("", _TOML_NOISE.sub("", text))
    return max(accumulate(_STEP[c] for c in brackets), default=0)


def check_nesting(text: str, label: str) -> None:
    """FileRefused where ``text`` nests deeper than MAX_DEPTH."""
    if nesting(text) > MAX_DEPTH:
        raise FileRefused(f"{label}: nested too deeply (deeper than {MAX_DEPTH} levels)")


def loads_toml(text: str, label: str) -> dict[str, Any]:
    """``text`` parsed as TOML, nesting bounded first; FileRefused in one line (the
    parser's message for a text that is not TOML)."""
    import tomllib  # here: a recording's reader (``gemmscope report``) needs none

    check_nesting(text, label)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FileRefused(f"{label}: not TOML: {exc}") from None
    except RecursionError:  # (a nesting the count does not see: dotted keys)
        raise FileRefused(f"{label}: nested too deeply (deeper than {MAX_DEPTH} levels)"
                          ) from None


def read_toml(path: str | Path, kind: Kind, limit: int | None = None) -> dict[str, Any]:
    """The user's ``kind`` file read as TOML: bounded in bytes and nesting (see above)."""
    return loads_toml(read_text(path, kind, limit), str(path))


def inside(path: str | Path, folder: str | Path) -> bool:
    """Whether ``path``, every symlink on the way resolved, lies inside ``folder`` (also
    resolved): a name that a symlink leads out of it is not inside."""
    try:
        target = Path(os.path.realpath(path))
        root = Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return False
    return target == root or root in target.parents

"""One rule for every number given on a command line (issue 45): finite, within the
range stated with the option, checked where it is parsed, refused in one line that names
the option and its range. Every parser's numeric option takes its type from
:func:`bounded` (a shape from ``plan.parse_shape``, bounded by ``commands.MAX_DIM``), and
every parser is a :class:`OneLineParser`. In protocol/ because the parsers of every floor
use it (cli, drive, profile, engine, models, and the app's).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from ..ladder.level import MAX_PARAM
from .text_safety import shown

MAX_SECONDS = 7 * 24 * 3600.0  # a week: beyond that a timeout is no bound
MAX_GPU_INDEX = 255  # no machine holds more GPUs than an index of this counts
MAX_LAUNCHES = 1000  # launches of one profiled or checked kernel
MAX_DIGITS = 18  # a whole number in text: far past every range here, far below int()'s 4,300
MAX_REFUSAL_CHARS = 400  # a refusal quotes what it refuses, cut to this (its ends kept)
MAX_COMMAND_CHARS = 4096  # a runner command line (the shell's own limits are far above)


_WHOLE = re.compile(rf"[+-]?[0-9]{{1,{MAX_DIGITS}}}")


def whole_number(text: str) -> int | None:
    """A whole number written in ``text`` (ASCII digits, a sign allowed, blanks around),
    None for anything else: the one reader of a whole number in a value given as text
    (a shape, a sweep, a GPU list, a picture's size), so that none meets int()'s own
    limits (a value of 5,000 digits: Python's advice on set_int_max_str_digits)."""
    text = text.strip()
    return int(text) if _WHOLE.fullmatch(text) else None


def param_assignment(text: str) -> tuple[str, int]:
    """A level's template parameter given on a command line, 'BM=64': (name, value), the
    value a whole number from 0 to MAX_PARAM (the name is checked against the level)."""
    name, sep, value = text.partition("=")
    v = whole_number(value)
    if not sep or not name.strip() or v is None or not 0 <= v <= MAX_PARAM:
        raise argparse.ArgumentTypeError(f"{shown(text, 40)}: give NAME=VALUE, a whole "
                                         f"number from 0 to {MAX_PARAM}")
    return name.strip(), v


def cut_line(text: str, limit: int = MAX_REFUSAL_CHARS) -> str:
    """A refusal line cut to ``limit`` characters in the middle (its start names the
    option, its end says why), the length said; a line within it as it is."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}…{text[-keep:]} ({len(text):,} characters)"


def _shown(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() else f"{v:g}"


@dataclass(frozen=True, slots=True)
class Bounded:
    """An argparse type: a whole number (``kind`` int) or a finite number (float) within
    [lo, hi], or exactly ``off`` where given (e.g. 0 for "off")."""

    kind: type
    lo: float
    hi: float
    off: float | None = None
    unit: str = ""

    @property
    def __name__(self) -> str:  # argparse names a type by it in its messages
        return self.kind.__name__

    def range_text(self) -> str:
        what = "a whole number" if self.kind is int else "a number"
        unit = f" ({self.unit})" if self.unit else ""
        span = f"from {_shown(self.lo)} to {_shown(self.hi)}"
        text = f"seconds {span}" if self.unit == "seconds" else f"{what} {span}{unit}"
        return f"{_shown(self.off)} (off) or {text}" if self.off is not None else text

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text.strip())
        except (ValueError, OverflowError):
            value = None
        if value is None or (isinstance(value, float) and not math.isfinite(value)) or not (
                self.lo <= value <= self.hi or value == self.off):
            raise argparse.ArgumentTypeError(f"{text[:40]!r}: give {self.range_text()}")
        return value


def bounded(kind: type, lo: float, hi: float, *, off: float | None = None,
            unit: str = "") -> Callable[[str], int | float]:
    """The argparse type of a number option: ``bounded(int, 1, 10_000)``."""
    if kind not in (int, float):
        raise TypeError(f"bounded: int or float, not {kind!r}")
    return Bounded(kind, lo, hi, off, unit)


def telemetry_hz() -> Callable[[str], int | float]:
    """The NVML sampling rate: 0 (off) or from 1 to the runner's most."""
    from .commands import MAX_TELEMETRY_HZ

    return bounded(float, 1, MAX_TELEMETRY_HZ, off=0, unit="samples a second")


def gpu_index() -> Callable[[str], int | float]:
    """A GPU's index as nvidia-smi counts them."""
    return bounded(int, 0, MAX_GPU_INDEX)


def port(lo: int = 0) -> Callable[[str], int | float]:
    """A TCP port (0: any free one, where ``lo`` allows it)."""
    return bounded(int, lo, 65535)


def seconds(lo: float = 1.0, hi: float = MAX_SECONDS) -> Callable[[str], int | float]:
    """A time limit or budget in seconds."""
    return bounded(float, lo, hi, unit="seconds")


class CommandRefused(ValueError):
    """A command line that cannot be split into words; the message is one line."""


def split_command(text: str) -> list[str]:
    """A command line a user gave (``--runner``, a preferences file's runner command)
    split into words as a shell would (shlex), the one way every such line is read:
    CommandRefused in one line for a quote left open, a NUL or a line over
    MAX_COMMAND_CHARS, never shlex's ValueError."""
    import shlex

    if len(text) > MAX_COMMAND_CHARS:
        raise CommandRefused(f"a command line of {len(text):,} characters; at most "
                             f"{MAX_COMMAND_CHARS:,}")
    if "\0" in text:
        raise CommandRefused("a command line holds a NUL character")
    try:
        return shlex.split(text)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise CommandRefused(f"{str(exc).lower()} in the command line; quote it as a "
                             "shell would") from None


def command_line(text: str) -> str:
    """The argparse type of a command-line option (``--runner CMD``): checked where it is
    parsed (:func:`split_command`), the text kept as given."""
    try:
        split_command(text)
    except CommandRefused as exc:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: {exc}") from None
    return text


class OptionRefused(SystemExit):
    """A command line that cannot be parsed: ``line`` says which option and why."""

    def __init__(self, line: str) -> None:
        super().__init__(2)
        self.line = line


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose refusal is one line (exit 2): the program, the option and
    why; never the usage block. :meth:`parse_args` writes it to stderr and exits;
    :meth:`parse_or_refuse` raises it (a caller with a stderr of its own)."""

    def error(self, message: str) -> NoReturn:
        # "argument --x: ..." -> "--x: ...", as the commands' own refusals say it
        said = cut_line(message.removeprefix("argument "))  # a value of megabytes: cut
        raise OptionRefused(f"{self.prog}: {said} ({self.prog} --help says more)")

    def parse_or_refuse(self, args: Sequence[str] | None = None) -> argparse.Namespace:
        return super().parse_args(args)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        try:
            return super().parse_args(args, namespace)
        except OptionRefused as exc:
            sys.stderr.write(exc.line + "\n")
            raise SystemExit(2) from None

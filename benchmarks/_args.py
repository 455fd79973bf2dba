"""Arguments the benchmark scripts share (not a benchmark: the underscore keeps it out of
the smoke test's list), each an argparse ``type`` that checks its text when the arguments
are parsed, so that a mistyped value is refused by argparse in one line (exit 2) instead
of surfacing as a traceback from inside a run, or being skipped without a word.

- ``--levels a,b``: comma-separated level ids, against the registry or the few levels a
  script can run (``level_ids``; ``level_id`` for one);
- ``--sizes 4096,8192``: comma-separated square sizes (``square_sizes``; ``square_size``
  for one, ``--size 4096``);
- ``--repeats 30``, ``--rounds 3``, ``--runs 5``: a count of at least 1 (``count``);
- ``--warmup 3``, ``--jobs 0``: an amount where 0 means none or the default (``amount``);
- ``--shapes 4096,4096x2112x7168``: comma-separated shapes, N or MxNxK, each checked as
  ``gemmscope bench -s`` checks it (``shapes``; ``shape`` for one)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable

MAX_SIZE_DIGITS = 6  # a square size of a million and more is a slip, not a GEMM here
MAX_COUNT = 1_000_000  # repeats, rounds, runs: a million and more is a slip, not a plan


def level_ids(choices: Iterable[str] | None = None) -> Callable[[str], list[str]]:
    """An argparse ``type``: the ids in the text, in order, blanks dropped; an id outside
    ``choices`` (every level and reference of the registry where None) is refused."""
    def parse(text: str) -> list[str]:
        if choices is None:
            from gemmscope.kernels.ladder import registry

            known = list(registry.BY_ID)  # as `gemmscope bench --level` knows them
        else:
            known = list(choices)
        ids = [s.strip() for s in text.split(",") if s.strip()]
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"no level {', '.join(map(repr, unknown))} here; known: {', '.join(known)}")
        return ids

    return parse


def level_id(choices: Iterable[str] | None = None) -> Callable[[str], str]:
    """An argparse ``type``: one id (see ``level_ids``)."""
    many = level_ids(choices)

    def parse(text: str) -> str:
        ids = many(text)
        if len(ids) != 1:
            raise argparse.ArgumentTypeError(f"one level id here, not {text!r}")
        return ids[0]

    return parse


def square_sizes(text: str) -> list[int]:
    """An argparse ``type``: comma-separated sizes N (each an N x N x N run), whole numbers
    of at least 1, in order, blanks dropped."""
    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if not (item.isascii() and item.isdigit() and len(item) <= MAX_SIZE_DIGITS
                and int(item) >= 1):
            raise argparse.ArgumentTypeError(
                f"a size is a whole number N of at least 1 (an N x N x N run), not {item!r}")
        out.append(int(item))
    return out


def square_size(text: str) -> int:
    """An argparse ``type``: one square size N (see ``square_sizes``)."""
    sizes = square_sizes(text)
    if len(sizes) != 1:
        raise argparse.ArgumentTypeError(f"one size here, a whole number N, not {text!r}")
    return sizes[0]


def shapes(text: str) -> list[tuple[int, int, int]]:
    """An argparse ``type``: comma-separated shapes, each N (a cube) or MxNxK, in order,
    blanks dropped; each is read by the protocol's own rule (whole numbers of bounded
    length, every side from 1 to its most), as ``gemmscope bench -s`` reads it."""
    from gemmscope.kernels.protocol import parse_shape

    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        try:
            out.append(parse_shape(item))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    if not out:
        raise argparse.ArgumentTypeError("give at least one shape, N or MxNxK")
    return out


def shape(text: str) -> tuple[int, int, int]:
    """An argparse ``type``: one shape, N (a cube) or MxNxK (see ``shapes``)."""
    if "," in text:
        raise argparse.ArgumentTypeError(f"one shape here, N or MxNxK, not a list: {text!r}")
    return shapes(text)[0]


def _whole(text: str, lo: int) -> int | None:
    """The whole number in ``text`` (the protocol's one reader: ASCII digits, a sign, no
    more than its digits) where it lies from ``lo`` to MAX_COUNT, else None."""
    from gemmscope.kernels.protocol.option_bounds import whole_number

    value = whole_number(text)
    return value if value is not None and lo <= value <= MAX_COUNT else None


def count(text: str) -> int:
    """An argparse ``type``: how many (repeats, rounds, runs, trials), a whole number from
    1 to MAX_COUNT (0 would plan a table with nothing measured)."""
    value = _whole(text, 1)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"a count is a whole number from 1 to {MAX_COUNT:,}, not {text!r}")
    return value


def amount(text: str) -> int:
    """An argparse ``type``: how many where 0 is a choice (none, or the script's default:
    warm-up launches, jobs, diff lines), a whole number from 0 to MAX_COUNT."""
    value = _whole(text, 0)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"a whole number from 0 to {MAX_COUNT:,} here, not {text!r}")
    return value

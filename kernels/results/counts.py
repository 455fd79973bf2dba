"""A count and its noun as a sentence says them: "1 line", "2 lines", "1,024 bytes".

Every message, label and report line that counts something says it through
:func:`counted`, so no count reads "1 lines" (tests/kernels/results/test_counts.py scans
the sources for a count written into a plural by hand)."""

from __future__ import annotations

# the plurals that are not the noun and an "s"
IRREGULAR = {"GPU": "GPUs", "entry": "entries", "pass": "passes", "process": "processes"}


def plural(noun: str) -> str:
    return IRREGULAR.get(noun, noun + "s")


def counted(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and ``noun``, singular for one and plural otherwise (``many``, or the noun
    and an "s"); from 10,000 up the thousands grouped."""
    number = f"{n:,}" if abs(n) >= 10_000 else f"{n}"
    return f"{number} {noun if n == 1 else many or plural(noun)}"

"""Two recordings' ratios side by side (``gemmscope compare OLD NEW``, issue 41 item 7): for
each level, shape and mode both measured, its % of cuBLAS in each with its confidence
interval, the change, and a verdict; a CI gate for kernel authors.

A ratio is a regression (the gate fails) where it fell by more than ``fail_over_pct``
percentage points beyond both intervals: ``new_high < old_low - fail_over_pct``. A paired
result (``pct_ci_low``/``pct_ci_high``: the level and its reference timed alternately)
brings its interval; an unpaired one is a point (an interval of zero width) and is marked
so. A level that verified in OLD and not in NEW fails too: a wrong answer is a regression
whatever its speed.

No Qt; reads results as the recording gives them (kernels/protocol/recording.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..ladder import registry
from ..ladder.registry import Kind
from ..ladder.shape import Shape
from ..protocol.events import DEFAULT_DISTRIBUTION
from ..protocol.records import Result
from .rows import DASH, Row, pct_text, rows_of

DEFAULT_FAIL_OVER_PCT = 2.0  # percentage points of "% of cuBLAS"


class Verdict(StrEnum):
    FELL = "FELL"  # below the old interval by more than the margin: the gate fails
    WRONG = "WRONG"  # verified in OLD, not in NEW: the gate fails
    ROSE = "rose"  # above the old interval by more than the margin
    SAME = "same"  # within the intervals and the margin
    NO_RATIO = "no ratio"  # one side has no reference to compare with


FAILING = frozenset({Verdict.FELL, Verdict.WRONG})

# level, shape, mode and operand distribution: a ratio on zeros is no ratio on uniform data
Key = tuple[str, Shape, str, str]


@dataclass(frozen=True, slots=True)
class Ratio:
    """A result's % of its reference and the interval around it (a point where the result
    was not paired)."""

    pct: float
    low: float
    high: float
    paired: bool

    @classmethod
    def of(cls, row: Row) -> Ratio | None:
        pct = row.pct_of_reference
        if pct is None:
            return None
        r = row.result
        if r.pct_ci_low is not None and r.pct_ci_high is not None:
            return cls(pct, min(r.pct_ci_low, pct), max(r.pct_ci_high, pct), True)
        return cls(pct, pct, pct, False)

    def text(self) -> str:
        if not self.paired:
            return f"{pct_text(self.pct)} (unpaired)"
        return f"{pct_text(self.pct)} [{pct_text(self.low)[:-1]}–{pct_text(self.high)}]"


@dataclass(frozen=True, slots=True)
class Line:
    """One level at one shape and mode in both recordings."""

    key: Key
    old: Ratio | None
    new: Ratio | None
    verdict: Verdict
    old_verified: bool
    new_verified: bool

    @property
    def change_pp(self) -> float | None:
        """The change of the ratio, in percentage points (None: a side has none)."""
        if self.old is None or self.new is None:
            return None
        return self.new.pct - self.old.pct

    def cells(self) -> list[str]:
        level, shape, mode, operands = self.key
        change = self.change_pp
        return [level, str(shape), mode, operands,
                self.old.text() if self.old is not None else DASH,
                self.new.text() if self.new is not None else DASH,
                DASH if change is None else f"{change:+.1f} pp", self.verdict_text()]

    def verdict_text(self) -> str:
        if self.verdict is Verdict.WRONG:
            return "WRONG (NOT verified in NEW)"
        return str(self.verdict)


HEADER = ["level", "shape", "mode", "operands", "OLD % of cuBLAS", "NEW % of cuBLAS", "change",
          "verdict"]


def verdict(old: Ratio | None, new: Ratio | None, old_verified: bool, new_verified: bool,
            fail_over_pct: float) -> Verdict:
    if old_verified and not new_verified:
        return Verdict.WRONG
    if old is None or new is None:
        return Verdict.NO_RATIO
    if new.high < old.low - fail_over_pct:
        return Verdict.FELL
    if new.low > old.high + fail_over_pct:
        return Verdict.ROSE
    return Verdict.SAME


def key_of(r: Result) -> Key:
    return r.level, r.shape, str(r.mode), r.operands or str(DEFAULT_DISTRIBUTION)


def latest_rows(results: Iterable[Result]) -> dict[Key, Row]:
    """The newest result of each (level, shape, mode, operands) with its % of its
    reference: rows.py's ``newest`` rule (a key measured again: its later result, where the
    first stood), with the distribution in the key, so that a recording of both uniform and
    zeros runs compares each with its own; on several GPUs, the one measured last.
    References themselves are the denominators: they get no line."""
    latest: dict[Key, Row] = {}
    for row in rows_of(results):
        level = registry.BY_ID.get(row.result.level)
        if level is not None and level.kind is Kind.REFERENCE:
            continue
        latest[key_of(row.result)] = row
    return latest


def compare(old: Iterable[Result], new: Iterable[Result],
            fail_over_pct: float = DEFAULT_FAIL_OVER_PCT
            ) -> tuple[list[Line], list[Key], list[Key]]:
    """The lines of the levels both recordings measured (in OLD's order), and the keys only
    OLD and only NEW have."""
    a, b = latest_rows(old), latest_rows(new)
    lines = []
    for key, row in a.items():
        if key not in b:
            continue
        o, n = Ratio.of(row), Ratio.of(b[key])
        ov, nv = row.result.verified, b[key].result.verified
        lines.append(Line(key, o, n, verdict(o, n, ov, nv, fail_over_pct), ov, nv))
    return lines, [k for k in a if k not in b], [k for k in b if k not in a]


def table(lines: Sequence[Line]) -> list[str]:
    """Fixed-width lines: the header, a rule, one line per compared level."""
    body = [line.cells() for line in lines]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h)
              for i, h in enumerate(HEADER)]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [fmt(HEADER), fmt(["-" * w for w in widths]), *(fmt(c) for c in body)]


def unmatched(label: str, keys: Sequence[Key]) -> list[str]:
    """What one recording measured and the other did not, said per level: a count, then a
    line a level, its shapes smallest first, grouped by mode and operands ("naive: 256x256x256,
    512x512x512 (burst, uniform); 4096x4096x4096 (sustained, uniform)"), so that two
    recordings of different sweeps print a line a level rather than one line of all."""
    if not keys:
        return []
    by_level: dict[str, dict[tuple[str, str], list[Shape]]] = {}
    for level, shape, mode, operands in keys:
        by_level.setdefault(level, {}).setdefault((mode, operands), []).append(shape)
    out = [f"{label}: {len(keys)} result{'s' if len(keys) != 1 else ''} of "
           f"{len(by_level)} level{'s' if len(by_level) != 1 else ''}"]
    for level, groups in by_level.items():
        out.append(f"  {level}: " + "; ".join(
            ", ".join(str(s) for s in sorted(shapes, key=lambda s: (s.flops, s.M, s.N, s.K)))
            + f" ({mode}, {operands})" for (mode, operands), shapes in groups.items()))
    return out

"""Where a burst's launch times step from one level to another (pure Python, no GPU).

A burst of 20 flushed launches at 8192³ on a Tensor Core level takes 30-80 ms on the H200,
and its 700 W limiter acts within it: the first launches run at the boost clock, the rest
several percent slower (docs/perf-notes.md, issue 31 item 6). The median of such a burst
is the one of the two speeds on which more launches fell, so two runs of the same code
can differ by 10% because the step came at launch 4 in one and at 14 in the other. The
step is found here, once, so that the runner can state it in the result and every table
can say that a median mixes two speeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from statistics import fmean, median
from typing import Any

STEP_MIN_PCT = 3.0  # smaller changes are the launches' own spread, not a second speed
MIN_LAUNCHES = 6  # fewer launches tell no step from noise
MIN_SIDE = 2  # launches on each side of a step
EXPLAINED_MIN = 0.75  # the step explains this much of the series' variance at least
SIDE_CLEAN = 0.8  # this share of each side lies on its side of the midpoint


@dataclass(frozen=True)
class LaunchStep:
    """Launches ``at`` + 1 onwards ran ``change_pct`` slower (positive) or faster
    (negative) than launches 1 to ``at``; the two medians in the series' unit."""

    at: int
    launches: int
    before: float
    after: float

    @property
    def change_pct(self) -> float:
        return 100.0 * (self.after / self.before - 1.0)

    def as_event(self) -> dict[str, float | int]:
        return {"at": self.at, "launches": self.launches, "before_ms": self.before,
                "after_ms": self.after, "change_pct": self.change_pct}

    def _first(self) -> str:
        return f"1–{self.at}" if self.at > 1 else "launch 1"

    def _rest(self) -> str:
        last = self.at + 1
        return f"{last}–{self.launches}" if last < self.launches else f"launch {last}"

    def text(self) -> str:
        """One sentence for a table's notes, e.g. "launches 15–20 ran 10.9% slower than
        1–14"."""
        rest = self._rest()
        rest = f"launches {rest}" if not rest.startswith("launch") else rest
        word = "slower" if self.change_pct > 0 else "faster"
        return f"{rest} ran {abs(self.change_pct):.1f}% {word} than {self._first()}"

    def note(self) -> str:
        """:meth:`text` and which side the burst's median comes from (a table's notes)."""
        side = (f"the median is of {self._first()}" if 2 * self.at > self.launches else
                f"the median is of {self._rest()}" if 2 * self.at < self.launches else
                "the median lies between the two")
        return f"{self.text()}: {side}"

    @classmethod
    def of(cls, record: Any) -> LaunchStep:
        """From a result's ``launch_step`` record (protocol.records.LaunchStepRecord)."""
        return cls(int(record.at), int(record.launches), float(record.before_ms),
                   float(record.after_ms))


def launch_step(times: Sequence[float]) -> LaunchStep | None:
    """The one step in ``times`` (per-launch milliseconds, in launch order), or None where
    the series is steady, too short, or changes in some other way (a drift, a spike, a
    speed that comes and goes): the split that leaves the least variance on its two
    sides, kept only where it explains most of the variance, both sides lie clearly on
    their own side of the midpoint, and the medians differ by STEP_MIN_PCT at least."""
    values = [float(t) for t in times]
    n = len(values)
    if n < MIN_LAUNCHES or min(values) <= 0:
        return None
    # every split's cost from prefix sums of the centred values (a burst may have 10,000
    # repeats): a side's squared deviations are sum(x^2) - sum(x)^2 / len
    mean = fmean(values)
    centred = [v - mean for v in values]
    s1 = [0.0, *accumulate(centred)]
    s2 = [0.0, *accumulate(c * c for c in centred)]
    total = s2[n]
    if total == 0:
        return None

    def cost(k: int) -> float:
        left = s2[k] - s1[k] ** 2 / k
        right = (s2[n] - s2[k]) - (s1[n] - s1[k]) ** 2 / (n - k)
        return left + right

    best_cost, at = min((cost(k), k) for k in range(MIN_SIDE, n - MIN_SIDE + 1))
    if 1.0 - best_cost / total < EXPLAINED_MIN:
        return None
    before, after = median(values[:at]), median(values[at:])
    if abs(after / before - 1.0) * 100.0 < STEP_MIN_PCT:
        return None
    mid, up = (before + after) / 2.0, after > before
    clean_before = sum((v < mid) == up for v in values[:at]) / at
    clean_after = sum((v > mid) == up for v in values[at:]) / (n - at)
    if min(clean_before, clean_after) < SIDE_CLEAN:
        return None
    return LaunchStep(at, n, before, after)

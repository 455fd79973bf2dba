"""Measured counters of a session (``counters`` events) set beside the access model.

Qt-free. A counters event holds what a profiler (ncu) measured for one level at one
shape; :func:`compare_counters` computes the model's totals for the same level, shape and
template parameters and pairs each measured metric with the model's value and the
difference in percent. The model's totals cost up to a few hundred milliseconds for the
larger levels, so each comparison is computed once and kept.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...kernels import protocol as rec
from ...kernels.ladder import BY_ID, Shape

if TYPE_CHECKING:
    from ...kernels.models import ComparisonRow

NCU = "ncu"


@dataclass(frozen=True, slots=True)
class Counters:
    """One counters event: what the tool measured for a level at a shape."""

    level: str
    shape: Shape
    tool: str
    metrics: tuple[tuple[str, float | None], ...]  # (metric name, value) as recorded
    kernel: str | None
    params: tuple[tuple[str, int], ...] | None  # the level's template parameters then
    t: float
    # how the profiled launch was made: "one_block_per_sm" (gemmscope record --ncu) or
    # "as_launched"; None in sessions recorded before the field existed
    launch: str | None = None

    @classmethod
    def from_event(cls, ev: rec.Counters) -> Counters:
        """The record, hashable (a comparison is computed once per measurement)."""
        return cls(ev.level, ev.shape, ev.tool, tuple(ev.metrics.items()), ev.kernel,
                   tuple(ev.params.items()) if ev.params is not None else None, ev.t,
                   ev.launch)

    def value(self, metric: str) -> float | None:
        return dict(self.metrics).get(metric)


@dataclass(frozen=True, slots=True)
class CountersComparison:
    """The model beside one measurement: a row per metric the model predicts."""

    counters: Counters
    rows: tuple[ComparisonRow, ...]
    caveat: str = ""  # what the model does not cover at this shape
    note: str = ""  # e.g. the level has been retuned since the measurement
    error: str = ""  # why there is no comparison (no model for the level, ...)


def compare_counters(counters: Counters) -> CountersComparison:
    """The model's totals at the measurement's level, shape and parameters, row by row
    with the measured values (computed once per measurement)."""
    return _compare(counters)


@functools.lru_cache(maxsize=64)
def _compare(counters: Counters) -> CountersComparison:
    # the access models load with the first counters compared, not with the store: they
    # are off the path to the app's first paint (issue #12)
    from ...kernels.models import NcuKernelRow, compare, model_for

    params = dict(counters.params) if counters.params is not None else None
    try:
        model = model_for(counters.level, params)
    except (KeyError, ValueError) as exc:
        return CountersComparison(counters, (), error=str(exc).strip("'\""))
    s = counters.shape
    totals = model.totals(s.M, s.N, s.K)
    row = NcuKernelRow(counters.kernel or "", dict(counters.metrics), {}, {})
    note = ""
    level = BY_ID.get(counters.level)
    if params is not None and level is not None:
        changed = ", ".join(f"{k}={v} (now {level.params.get(k)})" for k, v in params.items()
                            if level.params.get(k) != v)
        if changed:
            note = f"measured with {changed}; the model uses the measured parameters"
    return CountersComparison(counters, tuple(compare(totals, row)), totals.caveat, note)

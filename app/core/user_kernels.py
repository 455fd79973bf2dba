"""A user's kernel opened in the app (File ▸ Open kernel…), with no Qt: its spec and
source, the parameters being edited, the constraint check of the variant they make, the
run requests of a variant or of a sweep, and the sweep's grid from the session's events.

The check runs on every edit, so it compiles nothing (registers are said to be unknown
until a run's build event gives them); the runner checks again before it launches.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...kernels.ladder.kernel_spec import KernelSpec, Param, SpecError, load_spec, read_source
from ...kernels.protocol import records as rec
from ...kernels.protocol.decoding import to_builtins
from ...kernels.protocol.plan import RunRequest
from ...kernels.results.sweep_grid import SweepGrid, sweep_grid
from ...kernels.toolchain.constraints import Check
from ...kernels.toolchain.variant_check import check_spec


def kept_fields(event: Any) -> dict[str, Any] | None:
    """A result, error or build event as JSON values (what the heatmap and the check
    read), or None for any other event; a dict is taken as it is (tests, scripts)."""
    if isinstance(event, dict):
        return event
    if isinstance(event, rec.Result | rec.Error | rec.Build):
        return to_builtins(event)
    return None


MAX_SWEEP = 64  # variants one Sweep may queue (an 8 x 8 heatmap)
MAX_EVENTS = 4096  # result and error events kept per kernel for its heatmap


@dataclass(slots=True)
class OpenKernel:
    spec: KernelSpec
    source: str
    path: Path
    params: dict[str, int] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)  # its results and errors
    builds: dict[tuple[tuple[str, int], ...], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> OpenKernel:
        """Read a spec and its source (SpecError: one line saying what is wrong)."""
        spec = load_spec(path)
        return cls(spec, read_source(spec), Path(path), dict(spec.defaults))

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def heading(self) -> str:
        s = self.spec
        return f"{s.title} — {s.source} ({s.language}, {s.precision}, vs {s.reference})"

    @property
    def param_specs(self) -> dict[str, Param]:
        return self.spec.params

    def set(self, name: str, value: int) -> None:
        if name not in self.spec.params:
            raise SpecError(f"{self.id} has no parameter {name}")
        self.params[name] = int(value)

    def check(self, M: int, N: int, K: int) -> Check:
        result, _launch = check_spec(self.spec, self.source, self.params, M, N, K,
                                     compile=False, build=self.build_of(self.params))
        return result

    def build_of(self, params: dict[str, int]) -> dict[str, Any] | None:
        """The latest build event of this variant (the aligned shape's, else any)."""
        return self.builds.get(tuple(sorted(params.items())))

    def request(self, M: int, N: int, K: int, repeats: int,
                params: dict[str, int] | None = None) -> RunRequest:
        """The run of a variant (the edited parameters by default), carrying the check's
        refusal where it failed: the runner then answers with it in words."""
        p = dict(self.params if params is None else params)
        _result, launch = check_spec(self.spec, self.source, p, M, N, K, compile=False)
        return RunRequest(self.id, M, N, K, repeats, kernel=launch.as_wire())

    def sweep_values(self, name: str) -> list[int]:
        """The values a sweep walks for a parameter: its listed values, else powers of
        two within its range around its default."""
        p = self.spec.params[name]
        if p.values is not None:
            return sorted(p.values)
        out: list[int] = []
        v = 1
        while v <= p.hi and len(out) < 12:
            if v >= max(p.lo, 1):
                out.append(v)
            v *= 2
        return out or [p.default]

    def sweep(self, x: str, y: str, M: int, N: int, K: int,
              repeats: int) -> list[RunRequest]:
        """The grid of x's and y's values (the other parameters as edited)."""
        if x == y:
            raise SpecError("a sweep varies two different parameters")
        combos = list(itertools.product(self.sweep_values(y), self.sweep_values(x)))
        if len(combos) > MAX_SWEEP:
            raise SpecError(f"{len(combos)} variants; a sweep runs at most {MAX_SWEEP}")
        return [self.request(M, N, K, repeats, {**self.params, y: vy, x: vx})
                for vy, vx in combos]

    def take(self, event: Any) -> bool:
        """Keep a result or error of this kernel (True when it was one); a build event
        gives the check its variant's registers."""
        event = kept_fields(event)
        if event is None:
            return False
        if event.get("level") == self.id and event.get("type") == "build" and \
                isinstance(event.get("params"), dict):
            self.builds[tuple(sorted(event["params"].items()))] = event
            return True
        if event.get("level") != self.id or event.get("type") not in ("result", "error"):
            return False
        self.events.append(event)
        del self.events[:-MAX_EVENTS]
        return True

    def grid(self, x: str, y: str, shape: tuple[int, int, int] | None = None) -> SweepGrid:
        """The sweep over x and y of the variants whose other parameters are as edited,
        at ``shape`` (None: the shape this kernel ran at last)."""
        others = {k: v for k, v in self.params.items() if k not in (x, y)}
        events = [e for e in self.events if isinstance(e.get("params"), dict)
                  and all(e["params"].get(k) == v for k, v in others.items())]
        if shape is None and events:
            last = events[-1]
            shape = (last.get("M"), last.get("N"), last.get("K"))  # type: ignore[assignment]
        return sweep_grid(self.id, x, y, events, shape)


def open_kernel(path: str | Path) -> tuple[OpenKernel | None, str | None]:
    """The kernel, or None and why not (one line)."""
    try:
        return OpenKernel.load(path), None
    except SpecError as exc:
        return None, str(exc)

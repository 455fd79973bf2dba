"""A registry level's parameters edited in the app (File ▸ Tune the selected level…), with
no Qt: the same face as a user's kernel (``user_kernels.OpenKernel``), so one panel edits
either. The check is the level's own (its parameter rules and geometry,
``Level.with_params``) then the device's limits in words; a run sends ``params``."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from ...kernels.ladder import registry
from ...kernels.ladder.kernel_spec import Param, SpecError
from ...kernels.ladder.level import MAX_PARAM, MAY_BE_ZERO, MODES, SWITCHES, Level
from ...kernels.protocol.plan import RunRequest
from ...kernels.results.sweep_grid import SweepGrid, sweep_grid
from ...kernels.toolchain.constraints import Check, check
from ...kernels.toolchain.variant_check import level_variant, with_build
from .user_kernels import MAX_EVENTS, MAX_SWEEP, kept_fields


def _param(name: str, default: int) -> Param:
    if name in SWITCHES:
        return Param(name, default, (0, 1), 0, 1, "a switch")
    if name in MODES:
        return Param(name, default, tuple(range(MODES[name] + 1)), 0, MODES[name], "a mode")
    return Param(name, default, None, 0 if name in MAY_BE_ZERO else 1, MAX_PARAM, "")


@dataclass(slots=True)
class LevelVariants:
    level: Level
    params: dict[str, int] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    builds: dict[tuple[tuple[str, int], ...], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, level_id: str) -> LevelVariants:
        level = registry.get(level_id)
        if level.kind is not registry.Kind.LEVEL or not level.params:
            raise SpecError(f"{level_id} has no template parameters to tune")
        return cls(level, dict(level.params))

    @property
    def id(self) -> str:
        return self.level.id

    @property
    def heading(self) -> str:
        return (f"{self.level.title} — kernels/cuda/{self.level.source} ({self.level.precision}, "
                f"vs {self.level.reference}); the registry's choice: " +
                " ".join(f"{k}={v}" for k, v in self.level.params.items()))

    @property
    def param_specs(self) -> dict[str, Param]:
        return {n: _param(n, v) for n, v in self.level.params.items()}

    def set(self, name: str, value: int) -> None:
        if name not in self.level.params:
            raise SpecError(f"{self.id} has no parameter {name}")
        self.params[name] = int(value)

    def changes(self, params: dict[str, int] | None = None) -> dict[str, int]:
        p = self.params if params is None else params
        return {k: v for k, v in p.items() if self.level.params.get(k) != v}

    def check(self, M: int, N: int, K: int) -> Check:
        variant, _level = level_variant(self.level, self.changes(), M, N, K)
        return check(with_build(variant, self.builds.get(tuple(sorted(self.params.items())))))

    def request(self, M: int, N: int, K: int, repeats: int,
                params: dict[str, int] | None = None) -> RunRequest:
        return RunRequest(self.id, M, N, K, repeats, params=self.changes(params) or None)

    def sweep_values(self, name: str) -> list[int]:
        p = self.param_specs[name]
        if p.values is not None:
            return list(p.values)
        d = max(self.level.params[name], 1)
        return [v for v in (d // 4, d // 2, d, d * 2, d * 4) if p.lo <= v <= p.hi and v >= 1]

    def sweep(self, x: str, y: str, M: int, N: int, K: int, repeats: int) -> list[RunRequest]:
        if x == y:
            raise SpecError("a sweep varies two different parameters")
        combos = list(itertools.product(self.sweep_values(y), self.sweep_values(x)))
        if len(combos) > MAX_SWEEP:
            raise SpecError(f"{len(combos)} variants; a sweep runs at most {MAX_SWEEP}")
        return [self.request(M, N, K, repeats, {**self.params, y: vy, x: vx})
                for vy, vx in combos]

    def take(self, event: Any) -> bool:
        """A result or error of this level (its heatmap), or a build event (the check's
        registers of that variant); True when it was one."""
        event = kept_fields(event)
        if event is None:
            return False
        if event.get("level") == self.id and event.get("type") == "build" and \
                isinstance(event.get("params"), dict):
            params = {**self.level.params, **event["params"]}
            self.builds[tuple(sorted(params.items()))] = event
            return True
        if event.get("level") != self.id or event.get("type") not in ("result", "error"):
            return False
        if isinstance(event.get("params"), dict):  # a variant's: the level's own filled in
            event = {**event, "params": {**self.level.params, **event["params"]}}
        self.events.append(event)
        del self.events[:-MAX_EVENTS]
        return True

    def grid(self, x: str, y: str, shape: tuple[int, int, int] | None = None) -> SweepGrid:
        others = {k: v for k, v in self.params.items() if k not in (x, y)}
        events = [e for e in self.events if isinstance(e.get("params"), dict)
                  and all(e["params"].get(k) == v for k, v in others.items())]
        if shape is None and events:
            last = events[-1]
            shape = (last.get("M"), last.get("N"), last.get("K"))  # type: ignore[assignment]
        return sweep_grid(self.id, x, y, events, shape)

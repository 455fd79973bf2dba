"""A registry level's parameters edited in the app (File ▸ Tune the selected level…), with
no Qt: the same face as a user's kernel (``tunable.TunableKernel``), so one panel edits
either. The check is the level's own (its parameter rules and geometry,
``Level.with_params``) then the device's limits in words; a run sends ``params``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...kernels.ladder import (
    MAX_PARAM,
    MAY_BE_ZERO,
    MODES,
    SWITCHES,
    Kind,
    Level,
    Param,
    Shape,
    SpecError,
    get,
)
from ...kernels.protocol import RunRequest
from ...kernels.toolchain import Check, check, level_variant, with_build
from .tunable import TunableKernel


def _param(name: str, default: int) -> Param:
    if name in SWITCHES:
        return Param(name, default, (0, 1), 0, 1, "a switch")
    if name in MODES:
        return Param(name, default, tuple(range(MODES[name] + 1)), 0, MODES[name], "a mode")
    return Param(name, default, None, 0 if name in MAY_BE_ZERO else 1, MAX_PARAM, "")


@dataclass(slots=True)
class LevelVariants(TunableKernel):
    level: Level
    params: dict[str, int] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    builds: dict[tuple[tuple[str, int], ...], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, level_id: str) -> LevelVariants:
        level = get(level_id)
        if level.kind is not Kind.LEVEL or not level.params:
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

    def changes(self, params: dict[str, int] | None = None) -> dict[str, int]:
        p = self.params if params is None else params
        return {k: v for k, v in p.items() if self.level.params.get(k) != v}

    def check(self, shape: Shape) -> Check:
        variant, _level = level_variant(self.level, self.changes(), shape.M, shape.N, shape.K)
        return check(with_build(variant, self.build_of(self.params)))

    def request(self, shape: Shape, repeats: int,
                params: dict[str, int] | None = None) -> RunRequest:
        return RunRequest(self.id, shape, repeats, params=self.changes(params) or None)

    def sweep_values(self, name: str) -> list[int]:
        p = self.param_specs[name]
        if p.values is not None:
            return list(p.values)
        d = max(self.level.params[name], 1)
        return [v for v in (d // 4, d // 2, d, d * 2, d * 4) if p.lo <= v <= p.hi and v >= 1]

    def own_params(self) -> dict[str, int]:
        return self.level.params

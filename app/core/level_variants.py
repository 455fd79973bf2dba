"""A registry level's parameters edited in the app (File ▸ Tune the selected level…), with
no Qt: the same face as a user's kernel (``tunable.TunableKernel``), so one panel edits
either. The check is the level's own (its parameter rules and geometry,
``Level.with_params``) then the device's limits in words; a run sends ``params``.

Where the level picks parameters per shape (``Level.shape_params``, as fp8_deep picks
its cluster and K blocks), the values edited start from that pick at the run form's
shape and the ones not edited follow it when the shape changes: what the panel shows is
what a run launches, and a variant equal to the pick is the plain run."""

from __future__ import annotations

import dataclasses
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
from ...kernels.toolchain import Check, Finding, Status, check, level_variant, with_build
from .run_forms import DEFAULT_SM_COUNT, form_at
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
    sm_count: int = DEFAULT_SM_COUNT  # the GPU's the shape rule picks for
    edited: set[str] = field(default_factory=set)  # the names a user set (not followed)
    picked: dict[str, int] = field(default_factory=dict)  # the pick last followed

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
        entry = " ".join(f"{k}={v}" for k, v in self.level.params.items())
        head = (f"{self.level.title} — kernels/cuda/{self.level.source} "
                f"({self.level.precision}, vs {self.level.reference}); ")
        if self.level.shape_params is None:
            return head + f"the registry's choice: {entry}"
        return (head + f"the registry's entry: {entry}; its shape rule picks others per "
                "shape (the check below says which)")

    @property
    def follows_shapes(self) -> bool:
        return self.level.shape_params is not None

    def pick(self, shape: Shape) -> dict[str, int]:
        """The parameters a plain run of ``shape`` launches on ``sm_count`` SMs: the
        shape rule's (the entry's where the level has none or they make no level)."""
        return form_at(self.id, shape, (), self.sm_count) or dict(self.level.params)

    def set_sm_count(self, sm_count: int) -> bool:
        if not self.follows_shapes or sm_count == self.sm_count:
            return False
        self.sm_count = sm_count
        return True

    def set(self, name: str, value: int) -> None:
        TunableKernel.set(self, name, value)
        self.edited.add(name)

    def follow(self, shape: Shape, forget_edits: bool = False) -> dict[str, int]:
        if forget_edits:
            self.edited.clear()
        self.picked = self.pick(shape)
        moved = {k: v for k, v in self.picked.items()
                 if k not in self.edited and self.params.get(k) != v}
        self.params.update(moved)
        return moved

    @property
    def param_specs(self) -> dict[str, Param]:
        return {n: _param(n, v) for n, v in self.level.params.items()}

    def changes(self, params: dict[str, int] | None = None) -> dict[str, int]:
        p = self.params if params is None else params
        return {k: v for k, v in p.items() if self.level.params.get(k) != v}

    def check(self, shape: Shape) -> Check:
        variant, _level = level_variant(self.level, self.changes(), shape.M, shape.N, shape.K,
                                        self.sm_count)
        done = check(with_build(variant, self.build_of(self.params)))
        if not self.follows_shapes:
            return done
        pick = self.pick(shape)
        text = (f"a plain run here on {self.sm_count} SMs launches "
                + " ".join(f"{k}={v}" for k, v in pick.items()))
        differ = [f"{k}={v}" for k, v in self.params.items() if pick.get(k) != v]
        text += (f"; this variant differs in {' '.join(differ)}" if differ
                 else "; this variant is that plain run")
        return dataclasses.replace(done, findings=(Finding("shape rule", Status.NOTE, text),
                                                   *done.findings))

    def request(self, shape: Shape, repeats: int,
                params: dict[str, int] | None = None) -> RunRequest:
        """The run of a variant: no parameters where it is what a plain run of ``shape``
        launches (the shape rule's pick), else every one that differs from the entry
        (all of them where none does: parameters given, the runner picks nothing)."""
        p = dict(self.params if params is None else params)
        if not self.follows_shapes:
            return RunRequest(self.id, shape, repeats, params=self.changes(p) or None)
        if p == self.pick(shape):
            return RunRequest(self.id, shape, repeats)
        return RunRequest(self.id, shape, repeats, params=self.changes(p) or p)

    def sweep_values(self, name: str) -> list[int]:
        p = self.param_specs[name]
        if p.values is not None:
            return list(p.values)
        d = max(self.picked.get(name, self.level.params[name]), 1)  # around the choice
        return [v for v in (d // 4, d // 2, d, d * 2, d * 4) if p.lo <= v <= p.hi and v >= 1]

    def own_params(self) -> dict[str, int]:
        return self.level.params

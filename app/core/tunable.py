"""What a kernel edited in the app shares, with no Qt, whether it is a user's kernel
(``user_kernels.OpenKernel``) or a registry level's parameters (``level_variants``): the
parameters being edited, the run requests of a sweep over two of them, the session's
results, errors and build events of this kernel, and the sweep's grid from them. A kind
says only what differs: its parameters, heading, check, one run's request and the values
a sweep walks."""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from typing import Any

from ...kernels import protocol as rec
from ...kernels.ladder import Param, Shape, SpecError
from ...kernels.protocol import RunRequest, to_builtins
from ...kernels.results import SweepGrid
from ...kernels.results import sweep_grid_of as sweep_grid
from ...kernels.toolchain import Check

MAX_SWEEP = 64  # variants one Sweep may queue (an 8 x 8 heatmap)
MAX_EVENTS = 4096  # result and error events kept per kernel for its heatmap


def kept_fields(event: Any) -> dict[str, Any] | None:
    """A result, error or build event as JSON values (what the heatmap and the check
    read), or None for any other event; a dict is taken as it is (tests, scripts)."""
    if isinstance(event, dict):
        return event
    if isinstance(event, rec.Result | rec.Error | rec.Build):
        return to_builtins(event)
    return None


class TunableKernel(ABC):
    """The shared part; a subclass is a slots dataclass with the fields ``params`` (the
    edited values), ``events`` (its results and errors, the newest MAX_EVENTS) and
    ``builds`` (build events by their full parameters)."""

    __slots__ = ()
    params: dict[str, int]
    events: list[dict[str, Any]]
    builds: dict[tuple[tuple[str, int], ...], dict[str, Any]]

    @property
    @abstractmethod
    def id(self) -> str: ...

    @property
    @abstractmethod
    def heading(self) -> str: ...

    @property
    @abstractmethod
    def param_specs(self) -> dict[str, Param]: ...

    @abstractmethod
    def check(self, shape: Shape) -> Check: ...

    @abstractmethod
    def request(self, shape: Shape, repeats: int,
                params: dict[str, int] | None = None) -> RunRequest:
        """The run of a variant (the edited parameters by default)."""

    @abstractmethod
    def sweep_values(self, name: str) -> list[int]:
        """The values a sweep walks for a parameter."""

    def own_params(self) -> dict[str, int]:
        """The values an event's ``params`` leave out (a level's: its registry choice)."""
        return {}

    @property
    def follows_shapes(self) -> bool:
        """Whether the values edited start from a pick per shape (``follow``)."""
        return False

    def follow(self, shape: Shape, forget_edits: bool = False) -> dict[str, int]:
        """Move the values not edited (all, with ``forget_edits``) to what a plain run of
        ``shape`` launches; the ones that moved (none for a kind without a pick)."""
        return {}

    def set_sm_count(self, sm_count: int) -> bool:
        """Pick for a GPU of ``sm_count`` SMs from now on; whether that may move what
        ``follow`` picks (never for a kind without a pick)."""
        return False

    def set(self, name: str, value: int) -> None:
        if name not in self.param_specs:
            raise SpecError(f"{self.id} has no parameter {name}")
        self.params[name] = int(value)

    def build_of(self, params: dict[str, int]) -> dict[str, Any] | None:
        """The latest build event of this variant (the aligned shape's, else any)."""
        return self.builds.get(tuple(sorted(params.items())))

    def sweep(self, x: str, y: str, shape: Shape, repeats: int) -> list[RunRequest]:
        """The grid of x's and y's values (the other parameters as edited)."""
        if x == y:
            raise SpecError("a sweep varies two different parameters")
        ys, xs = self.sweep_values(y), self.sweep_values(x)
        if len(ys) * len(xs) > MAX_SWEEP:  # counted before the grid is made
            raise SpecError(f"{len(ys) * len(xs)} variants; a sweep runs at most {MAX_SWEEP}")
        combos = itertools.product(ys, xs)
        return [self.request(shape, repeats, {**self.params, y: vy, x: vx})
                for vy, vx in combos]

    def take(self, event: Any) -> bool:
        """Keep a result or error of this kernel (True when it was one); a build event
        gives the check its variant's registers."""
        event = kept_fields(event)
        if event is None:
            return False
        own = self.own_params()
        if event.get("level") == self.id and event.get("type") == "build" and \
                isinstance(event.get("params"), dict):
            self.builds[tuple(sorted({**own, **event["params"]}.items()))] = event
            return True
        if event.get("level") != self.id or event.get("type") not in ("result", "error"):
            return False
        if own and isinstance(event.get("params"), dict):  # the own values filled in
            event = {**event, "params": {**own, **event["params"]}}
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

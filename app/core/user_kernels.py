"""A user's kernel opened in the app (File ▸ Open kernel…), with no Qt: its spec and
source, the parameters being edited, the constraint check of the variant they make, the
run requests of a variant or of a sweep, and the sweep's grid from the session's events.

The check runs on every edit, so it compiles nothing (registers are said to be unknown
until a run's build event gives them); the runner checks again before it launches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...kernels.ladder import KernelSpec, Param, Shape, SpecError, load_spec, read_source
from ...kernels.protocol import RunRequest
from ...kernels.toolchain import Check, check_spec
from .tunable import TunableKernel


@dataclass(slots=True)
class OpenKernel(TunableKernel):
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

    def check(self, shape: Shape) -> Check:
        result, _launch = check_spec(self.spec, self.source, self.params, shape.M, shape.N,
                                     shape.K, compile=False, build=self.build_of(self.params))
        return result

    def request(self, shape: Shape, repeats: int,
                params: dict[str, int] | None = None) -> RunRequest:
        """The run of a variant (the edited parameters by default), carrying the check's
        refusal where it failed: the runner then answers with it in words."""
        p = dict(self.params if params is None else params)
        _result, launch = check_spec(self.spec, self.source, p, shape.M, shape.N, shape.K,
                                     compile=False)
        return RunRequest(self.id, shape, repeats, kernel=launch.as_wire())

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


def open_kernel(path: str | Path) -> tuple[OpenKernel | None, str | None]:
    """The kernel, or None and why not (one line)."""
    try:
        return OpenKernel.load(path), None
    except SpecError as exc:
        return None, str(exc)

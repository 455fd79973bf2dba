"""A user's kernel spec, checked: what the kernel is (its id, source, precision, reference)
and how to launch it (parameters, geometry or block and grid, shared memory, rules), with
the launch facts it gives for a shape and parameters (docs/user-kernels.md). The file and
its reading are :mod:`.spec_file`'s.

The runner never sees this module (it has no msgspec): per run the client turns a spec,
its parameters and the shape into plain launch facts (``kernel_launch.launch_payload``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from .level import (
    DTYPE_OF,
    MAX_PARAM,
    Geometry,
    Precision,
    one_thread_per_element,
    square_tiles,
    thread_tiles,
    warp_specialized,
    warp_tiles,
    warp_tiles_grouped,
    warp_tiles_producer,
)
from .spec_expression import (
    SHAPE_NAMES,
    Expression,
    ExpressionError,
)
from .user_level import UserLaunch

TRITON_WARPS = 4  # Triton's default num_warps


class Language(StrEnum):
    CUDA = "cuda"
    TRITON = "triton"


class UserPrecision(StrEnum):
    """The precisions a user kernel may take (FP8 needs a scaling scheme: not offered)."""

    FP32 = "fp32"
    TF32 = "tf32"
    FP16 = "fp16"
    BF16 = "bf16"


# the registry's named geometries a spec may name instead of writing block and tile
GEOMETRIES = {"one_thread_per_element": one_thread_per_element, "square_tiles": square_tiles,
              "thread_tiles": thread_tiles, "warp_tiles": warp_tiles,
              "warp_tiles_grouped": warp_tiles_grouped,
              "warp_tiles_producer": warp_tiles_producer, "warp_specialized": warp_specialized}


class SpecError(ValueError):
    """A spec that cannot be used; ``str()`` is one line naming the file and field."""


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    default: int
    values: tuple[int, ...] | None
    lo: int
    hi: int
    doc: str

    def problem(self, v: int) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int):
            return f"{self.name} must be a whole number, not {v!r}"
        if self.values is not None and v not in self.values:
            return f"{self.name}={v} is not one of its values {list(self.values)}"
        if not self.lo <= v <= self.hi:
            return f"{self.name}={v} is out of its range ({self.lo} to {self.hi})"
        return None


@dataclass(frozen=True, slots=True)
class Rule:
    value: Expression
    multiple_of: Expression
    why: str

    @property
    def on_shape(self) -> bool:
        return bool((self.value.names | self.multiple_of.names) & set(SHAPE_NAMES))

    def problem(self, env: dict[str, int]) -> str | None:
        v, m = self.value(env), self.multiple_of(env)
        if m <= 0:
            return f"{self.multiple_of} is {m}: a rule's divisor must be positive"
        if v % m:
            why = f" ({self.why})" if self.why else ""
            return f"{self.value} = {v} is not a multiple of {self.multiple_of} = {m}{why}"
        return None


@dataclass(frozen=True, slots=True)
class KernelSpec:
    """A checked spec; ``folder``: where its file lies (the source is beside it)."""

    id: str
    title: str
    name: str
    language: Language
    source: str
    precision: Precision
    reference: str
    arch: str | None
    vector: int
    notes: str
    params: dict[str, Param]
    geometry: str | None
    block: tuple[Expression, ...] | None
    grid: tuple[Expression, ...] | None  # None: one block per tile, blockIdx.x along N
    smem: Expression
    tile: tuple[Expression, Expression] | None
    k_tile: Expression
    b_layout: str
    output: str
    rules: tuple[Rule, ...]
    folder: Path
    spec_text: str

    @property
    def defaults(self) -> dict[str, int]:
        return {p.name: p.default for p in self.params.values()}

    @property
    def source_path(self) -> Path:
        return self.folder / self.source

    @property
    def dtype(self) -> str:
        return DTYPE_OF[self.precision]

    def with_defaults(self, params: dict[str, int] | None) -> dict[str, int]:
        """Every parameter's value: the given ones over the defaults (names checked)."""
        unknown = sorted(set(params or {}) - set(self.params))
        if unknown:
            raise SpecError(f"{self.id} has no parameter(s) {', '.join(unknown)}; it has "
                            f"{', '.join(self.params) or 'none'}")
        return {**self.defaults, **(params or {})}

    def param_problems(self, params: dict[str, int]) -> list[str]:
        """Every parameter outside its values or range, and every rule of the parameters
        alone that fails, in words."""
        out = [why for name, p in self.params.items() if (why := p.problem(params[name]))]
        if out:
            return out
        for rule in self.rules:
            if not rule.on_shape:
                why = _rule_problem(rule, params)
                if why:
                    out.append(why)
        return out

    def shape_problems(self, M: int, N: int, K: int, params: dict[str, int]) -> list[str]:
        env = {**params, "M": M, "N": N, "K": K}
        return [why for rule in self.rules if rule.on_shape
                if (why := _rule_problem(rule, env))]

    def block_of(self, params: dict[str, int]) -> tuple[int, int]:
        if self.language is Language.TRITON:
            warps = params["num_warps"] if "num_warps" in params else TRITON_WARPS
            return (32 * warps, 1)
        if self.geometry is not None:
            return GEOMETRIES[self.geometry](params).block
        assert self.block is not None
        dims = [e(params) for e in self.block]
        return (dims[0], dims[1] if len(dims) > 1 else 1)

    def tile_of(self, params: dict[str, int]) -> tuple[int, int]:
        if self.geometry is not None and self.tile is None:
            return GEOMETRIES[self.geometry](params).tile
        if self.tile is None:
            return (1, 1)
        return (self.tile[0](params), self.tile[1](params))

    def geometry_of(self, params: dict[str, int]) -> Geometry:
        k_tile = (GEOMETRIES[self.geometry](params).k_tile
                  if self.geometry is not None else self.k_tile(params))
        return Geometry(self.block_of(params), self.tile_of(params), k_tile)

    def grid_of(self, M: int, N: int, K: int, params: dict[str, int]) -> tuple[int, int, int]:
        if self.grid is None:  # the registry's rule: (cols of C, rows of C) in tiles
            rows, cols = self.tile_of(params)
            return (-(-N // cols), -(-M // rows), 1)
        env = {**params, "M": M, "N": N, "K": K}
        dims = [e(env) for e in self.grid] + [1, 1]
        return (dims[0], dims[1], dims[2])

    def smem_of(self, params: dict[str, int]) -> int:
        return self.smem(params)

    def launch(self, source: str, M: int, N: int, K: int, params: dict[str, int],
               refused: str | None = None) -> UserLaunch:
        """The run command's ``kernel`` object for this shape and these parameters (all
        of them, :meth:`with_defaults`); ``refused``: why the constraint check said no
        (the runner then answers with that, naming the kernel)."""
        try:
            geometry = self.geometry_of(params)
            grid = self.grid_of(M, N, K, params)
            smem = self.smem_of(params)
        except (ExpressionError, KeyError) as exc:
            refused = refused or f"the launch cannot be computed: {exc}"
            geometry, grid, smem = Geometry((1, 1), (1, 1)), (1, 1, 1), 0
        clipped: list[str] = []

        def clip(v: int, hi: int, what: str) -> int:
            if not 1 <= v <= hi:
                clipped.append(f"{what} of {v} is outside 1 to {hi}")
            return min(max(v, 1), hi)

        return UserLaunch(
            id=self.id, title=self.title, language=str(self.language), name=self.name,
            file=self.source, source=source, precision=str(self.precision),
            reference=self.reference, output=self.output, b_layout=self.b_layout,
            params=dict(params),
            block=(clip(geometry.block[0], 1 << 16, "block x"),
                   clip(geometry.block[1], 1 << 16, "block y")),
            grid=(clip(grid[0], 2**31 - 1, "grid x"), clip(grid[1], 65535, "grid y"),
                  clip(grid[2], 65535, "grid z")),
            smem=min(max(smem, 0), 1 << 20),
            tile=(clip(geometry.tile[0], 1 << 20, "tile rows"),
                  clip(geometry.tile[1], 1 << 20, "tile cols")),
            k_tile=clip(geometry.k_tile, MAX_PARAM, "k_tile"), arch=self.arch,
            vector=self.vector,
            refused=refused or ("; ".join(clipped) if clipped else None)
            or (f"{smem} bytes of dynamic shared memory" if not 0 <= smem <= 1 << 20
                else None))


def _rule_problem(rule: Rule, env: dict[str, int]) -> str | None:
    try:
        return rule.problem(env)
    except ExpressionError as exc:
        return str(exc)

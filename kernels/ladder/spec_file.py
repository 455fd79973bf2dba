"""A user's kernel spec file: the TOML beside their ``.cu`` (or Triton ``.py``), its
bounds, and the one reader that turns it into a checked :class:`~.kernel_spec.KernelSpec`
(docs/user-kernels.md).

Read once, at the edge where the file is opened (the CLI's ``--kernel``, the app's File ▸
Open kernel…): :mod:`tomllib` reads the text, msgspec decodes it into the typed sections
below (unknown keys refused, every number and text bounded), and :func:`parse_spec` then
checks what types cannot say (names known, expressions readable, defaults allowed), each
failure one line naming the field. The expressions of the launch (grid, block, dynamic
shared memory, rules) are read by ``spec_expression`` and never executed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import msgspec

from ..files.reading import MAX_BYTES, FileRefused, Kind, inside, loads_toml, read_text
from .kernel_spec import GEOMETRIES, KernelSpec, Language, Param, Rule, SpecError, UserPrecision
from .level import MAX_PARAM, Precision
from .registry import BY_ID
from .source_check import check_source
from .spec_expression import (
    FUNCTIONS,
    SHAPE_NAMES,
    Expression,
    ExpressionError,
    parse_expression,
)
from .user_level import TRITON_OPTIONS

MAX_SPEC_BYTES = MAX_BYTES[Kind.SPEC]
MAX_PARAMS = 16
MAX_VALUES = 64  # allowed values listed for one parameter
MAX_RULES = 16
ID = r"^[a-z][a-z0-9_]{0,39}$"
IDENT = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"  # a C++ / Python identifier
PARAM = r"^[A-Za-z_][A-Za-z0-9_]{0,31}$"
FILE = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\.(cu|py)$"  # a plain name beside the spec
RESERVED = frozenset({*SHAPE_NAMES, *FUNCTIONS})

Text = Annotated[str, msgspec.Meta(max_length=200)]
Expr = Annotated[str, msgspec.Meta(max_length=200)] | int


class _Strict(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class KernelSection(_Strict, frozen=True):
    id: Annotated[str, msgspec.Meta(pattern=ID)]
    name: Annotated[str, msgspec.Meta(pattern=IDENT)]
    source: Annotated[str, msgspec.Meta(pattern=FILE)]
    precision: UserPrecision
    language: Language = Language.CUDA
    title: Text = ""
    reference: Annotated[str, msgspec.Meta(pattern=ID)] | None = None
    arch: Annotated[str, msgspec.Meta(pattern=r"^sm_[0-9]{2,3}a?$")] | None = None
    # >0: the template ends in a bool VEC flag, true where K and N are multiples of this
    vector: Annotated[int, msgspec.Meta(ge=0, le=16)] = 0
    notes: Annotated[str, msgspec.Meta(max_length=2000)] = ""


class ParamSection(_Strict, frozen=True):
    default: Annotated[int, msgspec.Meta(ge=0, le=MAX_PARAM)]
    values: Annotated[list[Annotated[int, msgspec.Meta(ge=0, le=MAX_PARAM)]],
                      msgspec.Meta(min_length=1, max_length=MAX_VALUES)] | None = None
    min: Annotated[int, msgspec.Meta(ge=0, le=MAX_PARAM)] | None = None
    max: Annotated[int, msgspec.Meta(ge=0, le=MAX_PARAM)] | None = None
    doc: Text = ""


class LaunchSection(_Strict, frozen=True):
    geometry: str | None = None  # one of GEOMETRIES
    block: Annotated[list[Expr], msgspec.Meta(min_length=1, max_length=2)] | None = None
    grid: Annotated[list[Expr], msgspec.Meta(min_length=1, max_length=3)] | None = None
    smem: Expr = 0  # dynamic shared memory, bytes
    tile: Annotated[list[Expr], msgspec.Meta(min_length=2, max_length=2)] | None = None
    k_tile: Expr = 1


class LayoutSection(_Strict, frozen=True):
    b: Annotated[str, msgspec.Meta(pattern="^(kn|nk)$")] = "kn"
    output: Annotated[str, msgspec.Meta(pattern="^(fp32|fp16|bf16)$")] = "fp32"


class RuleSection(_Strict, frozen=True):
    value: Expr
    multiple_of: Expr
    why: Text = ""


class SpecFile(_Strict, frozen=True):
    kernel: KernelSection
    launch: LaunchSection
    params: dict[str, Any] = {}
    layout: LayoutSection = LayoutSection()
    rules: Annotated[list[RuleSection], msgspec.Meta(max_length=MAX_RULES)] = []


def load_spec(path: str | Path) -> KernelSpec:
    """Read and check a spec file (SpecError: one line, the file and the field). Read as
    every user file is (kernels/files/reading.py): a regular file only, bounded in bytes
    and nesting before it is parsed."""
    p = Path(path)
    try:
        text = read_text(p, Kind.SPEC)
    except FileRefused as exc:
        raise SpecError(str(exc)) from None
    return parse_spec(text, p.parent, p.name)


def parse_spec(text: str, folder: Path, label: str = "spec") -> KernelSpec:
    """Check a spec's text; ``folder``: where its source file lies."""
    if len(text.encode()) > MAX_SPEC_BYTES:
        raise SpecError(f"{label}: a spec is at most {MAX_SPEC_BYTES:,} bytes")
    try:
        raw = loads_toml(text, label)
        doc = msgspec.convert(raw, SpecFile)
    except FileRefused as exc:
        raise SpecError(str(exc)) from None
    except msgspec.ValidationError as exc:
        raise SpecError(f"{label}: {_field_message(str(exc))}") from None
    except RecursionError:  # (dotted keys nest without brackets)
        raise SpecError(f"{label}: nested too deeply to be a spec") from None
    try:
        return _checked(doc, folder, text)
    except (ExpressionError, _FieldError) as exc:
        raise SpecError(f"{label}: {exc}") from None


class _FieldError(ValueError):
    pass


def _field_message(msg: str) -> str:
    """msgspec's "Expected ... - at `$.kernel.id`" as "kernel.id: expected ..."."""
    m = re.match(r"^(.*?) - at `\$\.?(.*)`$", msg)
    what, where = m.groups() if m is not None else (msg, "")
    unknown = re.match(r"^Object contains unknown field `(.*)`$", what)
    if unknown is not None:
        return f"{where + '.' if where else ''}{unknown.group(1)}: an unknown key"
    missing = re.match(r"^Object missing required field `(.*)`$", what)
    if missing is not None:
        return f"{where + '.' if where else ''}{missing.group(1)}: missing"
    where = where or "the spec"
    return f"{where}: {what[0].lower()}{what[1:]}"


def _param_message(msg: str) -> str:
    """A parameter's decoding error; a value that is neither a number nor a table says
    what a parameter is."""
    if msg.startswith("Expected `object`"):
        return "a whole number (the default) or a table with default, values, min, max"
    text = _field_message(msg)
    return text.removeprefix("the spec: ")


def _params(raw: dict[str, Any], language: Language) -> dict[str, Param]:
    if len(raw) > MAX_PARAMS:
        raise _FieldError(f"params: {len(raw)} parameters; at most {MAX_PARAMS}")
    out: dict[str, Param] = {}
    for name, value in raw.items():
        if not re.match(PARAM, name) or name in RESERVED:
            raise _FieldError(f"params.{name}: a parameter name is an identifier (not "
                              f"{', '.join(sorted(RESERVED))})")
        if language is Language.CUDA and name in TRITON_OPTIONS:
            raise _FieldError(f"params.{name}: a Triton launch option; this kernel is CUDA")
        try:
            sec = msgspec.convert({"default": value} if type(value) is int else value,
                                  ParamSection)
        except msgspec.ValidationError as exc:
            raise _FieldError(f"params.{name}: {_param_message(str(exc))}") from None
        lo = sec.min if sec.min is not None else 0
        hi = sec.max if sec.max is not None else MAX_PARAM
        if lo > hi:
            raise _FieldError(f"params.{name}: min {lo} is above max {hi}")
        values = tuple(sec.values) if sec.values is not None else None
        p = Param(name, sec.default, values, lo, hi, sec.doc)
        why = p.problem(sec.default)
        if why:
            raise _FieldError(f"params.{name}.default: {why}")
        out[name] = p
    return out


def _exprs(field: str, items: list[Any] | None, names: frozenset[str]
           ) -> tuple[Expression, ...] | None:
    if items is None:
        return None
    out = []
    for i, item in enumerate(items):
        try:
            out.append(parse_expression(item, names))
        except ExpressionError as exc:
            raise _FieldError(f"{field}[{i}]: {exc}") from None
    return tuple(out)


def _expr(field: str, item: Any, names: frozenset[str]) -> Expression:
    try:
        return parse_expression(item, names)
    except ExpressionError as exc:
        raise _FieldError(f"{field}: {exc}") from None


def _checked(doc: SpecFile, folder: Path, text: str) -> KernelSpec:
    k, la = doc.kernel, doc.launch
    params = _params(doc.params, k.language)
    pnames = frozenset(params)
    shape = pnames | frozenset(SHAPE_NAMES)
    if k.language is Language.TRITON and k.vector:
        raise _FieldError("kernel.vector: a VEC template flag is a CUDA kernel's; Triton "
                          "specialises on its own")
    if k.language is Language.CUDA and not k.source.endswith(".cu"):
        raise _FieldError("kernel.source: a CUDA kernel's source is a .cu file")
    if k.language is Language.TRITON and not k.source.endswith(".py"):
        raise _FieldError("kernel.source: a Triton kernel's source is a .py file")
    if la.geometry is not None and la.geometry not in GEOMETRIES:
        raise _FieldError(f"launch.geometry: {la.geometry!r} is not a named geometry; known: "
                          f"{', '.join(GEOMETRIES)}")
    if k.language is Language.CUDA and la.geometry is None and la.block is None:
        raise _FieldError("launch.block: give the threads per block (or launch.geometry)")
    if k.language is Language.TRITON and la.block is not None:
        raise _FieldError("launch.block: a Triton kernel's block is num_warps x 32 threads")
    if la.geometry is not None and la.block is not None:
        raise _FieldError("launch.block: give launch.geometry or launch.block, not both")
    block = _exprs("launch.block", la.block, pnames)
    tile = _exprs("launch.tile", la.tile, pnames)
    grid = _exprs("launch.grid", la.grid, shape)
    if la.geometry is not None:
        try:
            GEOMETRIES[la.geometry]({n: p.default for n, p in params.items()})
        except KeyError as exc:
            raise _FieldError(f"launch.geometry: {la.geometry} needs the parameter "
                              f"{exc.args[0]}") from None
    if grid is None and tile is None and la.geometry is None:
        raise _FieldError("launch.grid: give the blocks of the grid, e.g. "
                          "[\"ceil_div(N, BN)\", \"ceil_div(M, BM)\"], or launch.tile")
    if k.id in BY_ID:
        raise _FieldError(f"kernel.id: {k.id!r} is a level of the registry; name your "
                          "kernel otherwise")
    reference = k.reference or f"cublas_{k.precision}"
    if not reference.startswith("cublas_") or reference.removeprefix("cublas_") != \
            str(k.precision):
        raise _FieldError(f"kernel.reference: {reference!r}; a {k.precision} kernel is "
                          f"compared with cublas_{k.precision}")
    rules = tuple(Rule(_expr(f"rules[{i}].value", r.value, shape),
                       _expr(f"rules[{i}].multiple_of", r.multiple_of, shape), r.why)
                  for i, r in enumerate(doc.rules))
    if k.vector and k.vector & (k.vector - 1):
        raise _FieldError(f"kernel.vector: {k.vector} is not a power of two")
    spec = KernelSpec(
        id=k.id, title=k.title or k.id, name=k.name, language=k.language, source=k.source,
        precision=Precision(str(k.precision)), reference=reference, arch=k.arch,
        vector=k.vector, notes=k.notes, params=params, geometry=la.geometry, block=block,
        grid=grid, smem=_expr("launch.smem", la.smem, pnames),
        tile=(tile[0], tile[1]) if tile else None,
        k_tile=_expr("launch.k_tile", la.k_tile, pnames), b_layout=doc.layout.b,
        output=doc.layout.output, rules=rules, folder=folder, spec_text=text)
    _try_defaults(spec)
    return spec


def _try_defaults(spec: KernelSpec) -> None:
    """The defaults must make a launch: every expression evaluates with them."""
    p = spec.defaults
    problems = spec.param_problems(p)
    if problems:
        raise _FieldError(f"params: the defaults break a rule: {problems[0]}")
    try:
        spec.geometry_of(p)
        spec.smem_of(p)
        spec.grid_of(4096, 4096, 4096, p)
    except (ExpressionError, KeyError) as exc:
        raise _FieldError(f"launch: with the default parameters: {exc}") from None


def read_source(spec: KernelSpec) -> str:
    """The spec's source file, bounded and checked (only that file is compiled): a
    regular file inside the spec's folder (a symlink that leads out of it is refused:
    the source travels in the run command, and a spec handed over must not send a file
    from elsewhere on this machine)."""
    path = spec.source_path
    if not inside(path, spec.folder):
        raise SpecError(f"{path}: a symlink that leads out of the spec's folder "
                        f"({spec.folder}); the source must lie beside its spec")
    try:
        text = read_text(path, Kind.SOURCE)
    except FileRefused as exc:
        raise SpecError(str(exc)) from None
    why = check_source(text, spec.language)
    if why is not None:
        raise SpecError(f"{path}: {why}")
    return text

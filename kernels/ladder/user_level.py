"""A user's kernel as one run launches it: the ``kernel`` object of a run command, and the
Level the runner makes of it (docs/protocol.md, "User kernels").

The client reads the spec (``spec_file``, with msgspec), evaluates its expressions for
the run's shape and parameters, and sends plain facts: the source text, the name, the
block, the grid, the dynamic shared memory, the precision and layouts, and, where the
constraint check refused the variant, why. The runner (no msgspec) checks these facts
with :func:`from_wire`, every field bounded, and runs the Level of :func:`UserLaunch.level`
through the same path as a registry level. Nothing in the object is executed except the
source, which is the kernel its user chose to run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .level import (
    MAX_PARAM,
    Geometry,
    Kind,
    Level,
    OutputFormat,
    Precision,
    Toolchain,
)
from .source_check import MAX_SOURCE_BYTES, check_source

_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_FILE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\.(cu|py)$")
_ARCH = re.compile(r"^sm_[0-9]{2,3}a?$")
MAX_TITLE = 200
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_SMEM = 1 << 20
USER_PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
# Triton's launch options, spelled as parameters so they can be swept like the others
TRITON_OPTIONS = ("num_warps", "num_stages")


class LaunchRefused(ValueError):
    """A ``kernel`` object the runner cannot take; ``str()`` names the field."""


@dataclass(frozen=True, slots=True)
class UserLaunch:
    id: str
    title: str
    language: str  # "cuda" or "triton"
    name: str
    file: str
    source: str
    precision: str
    reference: str
    output: str
    b_layout: str
    params: dict[str, int]
    block: tuple[int, int]
    grid: tuple[int, int, int]
    smem: int
    tile: tuple[int, int]
    k_tile: int
    arch: str | None = None
    vector: int = 0
    refused: str | None = None  # the client's constraint check said no: why
    sha256: str = field(default="", compare=False)  # of the source; filled in by from_wire

    def as_wire(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "language": self.language,
                "name": self.name, "file": self.file, "source": self.source,
                "sha256": self.digest, "precision": self.precision,
                "reference": self.reference, "output": self.output,
                "b_layout": self.b_layout, "params": dict(self.params),
                "block": list(self.block), "grid": list(self.grid), "smem": self.smem,
                "tile": list(self.tile), "k_tile": self.k_tile, "arch": self.arch,
                "vector": self.vector, "refused": self.refused}

    @property
    def digest(self) -> str:
        return self.sha256 or hashlib.sha256(self.source.encode()).hexdigest()

    def level(self, folder: Path) -> Level:
        """The Level the engine runs; ``folder``: where the runner wrote the source (a
        folder of its own, holding that file alone)."""
        block, tile, k_tile, smem = self.block, self.tile, self.k_tile, self.smem
        geometry = Geometry(block, tile, k_tile)
        return Level(
            id=self.id, title=self.title, precision=Precision(self.precision),
            adds=f"your kernel {self.name} from {self.file}",
            follows=f"user kernel ({self.file})", kind=Kind.LEVEL, source=self.file,
            kernel=self.name, params=dict(self.params),
            geometry=lambda _p: geometry, dyn_smem=(lambda _p: smem) if smem else None,
            source_dir=str(folder), arch=self.arch, b_layout=self.b_layout,
            output_format=OutputFormat(self.output), reference=self.reference,
            vector=self.vector, edge_variant=self.vector > 0, vec_flag=self.vector > 0,
            user_file=self.file, fixed_grid=self.grid,
            toolchain=Toolchain.TRITON if self.language == "triton" else Toolchain.NVRTC)


def _text(obj: dict[str, Any], name: str, pattern: re.Pattern[str] | None = None,
          most: int = MAX_TITLE) -> str:
    v = obj.get(name)
    if not isinstance(v, str) or len(v) > most or (pattern is not None and
                                                   not pattern.match(v)):
        shown = repr(v)[:60]
        raise LaunchRefused(f"kernel.{name}: {shown} is not a valid {name}")
    return v


def _int(obj: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(obj, bool) or not isinstance(obj, int) or not lo <= obj <= hi:
        raise LaunchRefused(f"kernel.{name}: {obj!r} is not a whole number from {lo} to {hi}")
    return obj


def _ints(obj: dict[str, Any], name: str, count: tuple[int, int],
          most: tuple[int, ...]) -> tuple[int, ...]:
    v = obj.get(name)
    if not isinstance(v, list) or not count[0] <= len(v) <= count[1]:
        raise LaunchRefused(f"kernel.{name}: a list of {count[0]} to {count[1]} numbers")
    return tuple(_int(x, f"{name}[{i}]", 1, most[i]) for i, x in enumerate(v))


def from_wire(obj: Any, known_ids: frozenset[str] = frozenset()) -> UserLaunch:
    """Check a run command's ``kernel`` object (LaunchRefused names the field).
    ``known_ids``: the registry's ids, which a user's kernel may not take."""
    if not isinstance(obj, dict):
        raise LaunchRefused("kernel: an object")
    kid = _text(obj, "id", _ID)
    if kid in known_ids:
        raise LaunchRefused(f"kernel.id: {kid!r} is a level of the registry; name your "
                            "kernel otherwise")
    language = _text(obj, "language", re.compile("^(cuda|triton)$"))
    source = obj.get("source")
    if not isinstance(source, str):
        raise LaunchRefused("kernel.source: the kernel's text")
    why = check_source(source, language)
    if why is not None:
        raise LaunchRefused(f"kernel.source: {why}")
    file = _text(obj, "file", _FILE)
    if file.endswith(".py") != (language == "triton"):
        raise LaunchRefused(f"kernel.file: {file} is not a {language} source")
    params = obj.get("params")
    if not isinstance(params, dict) or len(params) > 16 or not all(
            isinstance(k, str) and _IDENT.match(k) for k in params):
        raise LaunchRefused("kernel.params: up to 16 names with whole numbers")
    params = {k: _int(v, f"params.{k}", 0, MAX_PARAM) for k, v in params.items()}
    precision = _text(obj, "precision", re.compile(f"^({'|'.join(USER_PRECISIONS)})$"))
    reference = _text(obj, "reference", re.compile(f"^cublas_{precision}$"))
    arch = obj.get("arch")
    if arch is not None:
        arch = _text(obj, "arch", _ARCH)
    refused = obj.get("refused")
    if refused is not None:
        refused = _text(obj, "refused", most=2000)
    sha = obj.get("sha256", "")
    digest = hashlib.sha256(source.encode()).hexdigest()
    if sha and sha != digest:
        raise LaunchRefused("kernel.sha256: does not match the source it came with")
    block = _ints(obj, "block", (1, 2), (1 << 16, 1 << 16))  # the device's limits: later
    grid = _ints(obj, "grid", (1, 3), MAX_GRID)
    tile = _ints(obj, "tile", (2, 2), (1 << 20, 1 << 20))
    return UserLaunch(
        id=kid, title=_text(obj, "title"), language=language,
        name=_text(obj, "name", _IDENT), file=file, source=source, precision=precision,
        reference=reference, output=_text(obj, "output", re.compile("^(fp32|fp16|bf16)$")),
        b_layout=_text(obj, "b_layout", re.compile("^(kn|nk)$")), params=params,
        block=(block[0], block[1] if len(block) > 1 else 1),
        grid=(*grid, *(1,) * (3 - len(grid))),  # type: ignore[arg-type]
        smem=_int(obj.get("smem"), "smem", 0, MAX_SMEM),
        tile=(tile[0], tile[1]), k_tile=_int(obj.get("k_tile"), "k_tile", 1, MAX_PARAM),
        arch=arch, vector=_int(obj.get("vector", 0), "vector", 0, 16), refused=refused,
        sha256=digest)


__all__ = ["MAX_SOURCE_BYTES", "LaunchRefused", "UserLaunch", "from_wire"]

"""What ``record --ncu-source`` profiles: the levels of the registry with a kernel of their
own, and the user's kernels of ``--kernel SPEC.toml`` (docs/user-kernels.md), each a
:class:`Target`: the id its event carries, the kernel name ncu's ``-k`` matches, the
options of the one launch (``engine/launch.py``) and the files its source lines are
named by.

A user's kernel is profiled once, at the step's shape, in the variant of its first
planned run (``--param`` over the defaults; the first of a ``--vary`` grid). Its launch
reads the same spec file with the same parser and builds the Level the runner builds
(``user_kernels.spec_level``), and only if the source still has the hash of the one
that ran. The ``-k`` name is the spec's function name for CUDA (ncu's function name of
the template instantiation), and for Triton the compiled kernel's name that the runs
reported (Triton names the entry after its function: that name where no run said).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..ladder import registry
from ..ladder.kernel_spec import Language, SpecError
from ..ladder.spec_file import load_spec, read_source
from ..protocol.plan import RunRequest

# a kernel name the -k regex may be made of (a C++ or Python identifier, bounded)
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


@dataclass(frozen=True, slots=True)
class Target:
    """One kernel the step profiles."""

    level: str  # the level's id, or the user kernel's (its spec's id)
    kernel: str  # the function name the -k regex matches
    user: bool = False  # a user's kernel: the name matches whole, never inside another
    triton: bool = False
    options: tuple[str, ...] = ()  # the launch's, after LEVEL M N K
    params: dict[str, int] | None = None  # a user kernel's variant
    files: tuple[str, ...] | None = None  # None: the level's own (found when profiled)
    refused: str | None = None  # why it is not launched at all

    @property
    def regex(self) -> str:
        """ncu's ``-k``: the registry's name as it is matched today; a user's name as a
        whole identifier, so that ``copy`` is not CuPy's ``cupy_copy`` fill kernel."""
        if not self.user:
            return f"regex:{self.kernel}"
        return f"regex:(^|[^A-Za-z0-9_]){self.kernel}($|[^A-Za-z0-9_])"

    def compiled_as(self, name: str | None) -> Target:
        """This target with the kernel name a run reported (a Triton kernel's compiled
        name), where it is a plain name; else as it is."""
        if name is None or not NAME.match(name) or name == self.kernel:
            return self
        return dataclasses.replace(self, kernel=name)


def level_targets(level_ids: Iterable[str]) -> list[Target]:
    """The registry levels of ``level_ids`` with a kernel of their own, once each."""
    out = []
    for lv in dict.fromkeys(level_ids):
        level = registry.BY_ID.get(lv)
        if level is not None and level.kernel is not None:
            out.append(Target(lv, level.kernel))
    return out


def user_targets(spec_paths: Sequence[str], planned: Iterable[RunRequest],
                 size: tuple[int, int, int]) -> list[Target]:
    """Each ``--kernel`` spec with a planned run, in the variant of its first run, at
    ``size``: refused (with the reason, never launched) where the constraint check says
    no at that shape or the spec cannot be read again."""
    from ..toolchain import nvrtc
    from ..toolchain.user_sources import folder_for
    from ..toolchain.variant_check import check_spec

    first: dict[str, dict[str, int]] = {}
    for run in planned:
        if run.kernel is not None and run.level not in first:
            params = run.kernel.get("params")
            first[run.level] = dict(params) if isinstance(params, dict) else {}
    M, N, K = size
    out: list[Target] = []
    for path in spec_paths:
        try:  # read when the runs were planned: a file changed since says so here
            spec = load_spec(path)
            source = read_source(spec)
            if spec.id not in first or any(t.level == spec.id for t in out):
                continue
            params = spec.with_defaults(first[spec.id])
        except SpecError as exc:
            out.append(Target(Path(path).stem, "?", user=True, refused=str(exc)))
            continue
        _check, launch = check_spec(spec, source, params, M, N, K, compile=False)
        options = ("--kernel", str(Path(path).resolve()),
                   *(a for k, v in params.items() for a in ("--param", f"{k}={v}")),
                   "--sha256", launch.digest)
        files: tuple[str, ...] = (spec.source,)
        if launch.refused is None:
            try:  # the spec's file and the project's headers it includes
                files = tuple(nvrtc.source_files(launch.level(folder_for(launch))))
            except (OSError, ValueError):
                pass
        out.append(Target(spec.id, spec.name, user=True,
                          triton=spec.language is Language.TRITON, options=options,
                          params=dict(params), files=files,
                          refused=None if launch.refused is None else
                          f"refused before launch at {M}x{N}x{K}: {launch.refused}"))
    return out

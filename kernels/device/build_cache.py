"""The folder where compiled kernels are kept between runs, so a second run starts warm.

One folder, ``$GEMMSCOPE_CACHE_DIR`` (default ``$XDG_CACHE_HOME/gemmscope``, else
``~/.cache/gemmscope``), holds every compiler's cache, one subfolder each:

- ``cupy/``: CuPy's kernel cache (``CUPY_CACHE_DIR``): the levels' cubins (NVRTC) and
  CuPy's own elementwise kernels. CuPy names each file by a hash of the source, the
  options, the arch, the NVRTC version and its own headers, so a file made by another
  CuPy, NVRTC or GPU is never taken, only missed.
- ``triton/``: Triton's (``TRITON_CACHE_DIR``), for a user's Triton kernels;
- ``deep_gemm/``: DeepGEMM's JIT (``DG_JIT_CACHE_DIR``), for its reference;
- ``sass/``: the build events' NVRTC cubin, resources and SASS (toolchain/build_event.py),
  by a hash of the source, options and compiler.

A variable the user set already (``CUPY_CACHE_DIR``...) is kept. The variables must be
set before the library is imported (CuPy reads ``CUPY_CACHE_DIR`` at import):
:func:`configure` runs first thing in the runner and before device/gpu.py imports CuPy.

The folder holds only files keyed by what made them, so it can be carried: ``tar`` it on
one GPU machine, unpack it on the next and point ``GEMMSCOPE_CACHE_DIR`` at it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV = "GEMMSCOPE_CACHE_DIR"
# subfolder -> the variable its library reads
LIBRARY_DIRS: dict[str, str] = {
    "cupy": "CUPY_CACHE_DIR",
    "triton": "TRITON_CACHE_DIR",
    "deep_gemm": "DG_JIT_CACHE_DIR",
}
SASS = "sass"  # gemmscope's own (build events' NVRTC cubins and SASS)


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """``$GEMMSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/gemmscope``, else
    ``~/.cache/gemmscope``."""
    env = os.environ if environ is None else environ
    if env.get(ENV):
        return Path(env[ENV]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base).expanduser() / "gemmscope"


def cache_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The library variables to set (those not set already) so that every compiler
    caches under :func:`cache_root`."""
    env = os.environ if environ is None else environ
    root = cache_root(env)
    return {var: str(root / sub) for sub, var in LIBRARY_DIRS.items() if not env.get(var)}


def configure() -> None:
    """Point the compilers' caches into the folder (this process and its children)."""
    os.environ.update(cache_env())


def sass_dir(environ: Mapping[str, str] | None = None) -> Path:
    return cache_root(environ) / SASS


@dataclass(frozen=True, slots=True)
class CacheFolder:
    """One compiler's cache folder as the doctor shows it."""

    name: str  # "cupy", "triton", "deep_gemm", "sass"
    path: Path
    variable: str | None  # the variable that names it (None: gemmscope's own)
    own: bool  # under the gemmscope folder (False: the user's variable points elsewhere)
    entries: int
    size_bytes: int


def folders(environ: Mapping[str, str] | None = None) -> list[CacheFolder]:
    """Every cache folder with its files and bytes (0 where it does not exist yet)."""
    env = os.environ if environ is None else environ
    root = cache_root(env)
    out = []
    for sub, var in [*LIBRARY_DIRS.items(), (SASS, None)]:
        given = env.get(var) if var else None
        path = Path(given).expanduser() if given else root / sub
        entries, size = _count(path)
        out.append(CacheFolder(sub, path, var, not given, entries, size))
    return out


def _count(path: Path) -> tuple[int, int]:
    entries = size = 0
    try:
        walk = list(os.walk(path))
    except OSError:
        return 0, 0
    for folder, _dirs, files in walk:
        for name in files:
            try:
                size += (Path(folder) / name).stat().st_size
            except OSError:
                continue
            entries += 1
    return entries, size


def entry_names(path: Path) -> frozenset[str]:
    """The files of one cache folder (top level), to tell a compile from a cache hit:
    CuPy writes one file per new build, nothing on a hit (nothing where unreadable)."""
    try:
        return frozenset(e.name for e in os.scandir(path) if e.is_file())
    except OSError:
        return frozenset()

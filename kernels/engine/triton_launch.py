"""Launching a user's Triton kernel inside the runner (docs/user-kernels.md, "Triton").

The runner writes the user's ``.py`` to a folder of its own (``toolchain/user_sources``)
and imports it from there (Triton's ``@jit`` reads its function's source from the file),
then calls the function the spec names as

    fn[grid](A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
             stride_cn, **meta, num_warps=..., num_stages=...)

on torch views (DLPack, no copy) of the bench's CuPy operands, on the bench's own stream,
so the CUDA events that time every level time this kernel the same way. The first call
compiles; its CompiledKernel (cubin, registers, shared memory) is kept for the build
event. Triton and torch are imported here, lazily: a runner without them refuses the run
with the reason.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..device.gpu import get_torch, require_cupy
from ..ladder.level import Level
from ..ladder.user_level import TRITON_OPTIONS
from .operands import Operands

_lock = threading.Lock()
_modules: dict[Path, Any] = {}
# (level id, params) -> the CompiledKernel of its first launch, for the build event
COMPILED: dict[tuple[str, tuple[tuple[str, int], ...]], Any] = {}


class TritonMissing(RuntimeError):
    """Triton or torch cannot be imported in this runner."""


def triton_missing() -> str | None:
    for name in ("triton", "torch"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed in the runner's Python"
    return None


def _function(level: Level) -> Any:
    assert level.source_dir is not None and level.source is not None
    path = Path(level.source_dir) / level.source
    with _lock:
        module = _modules.get(path)
        if module is None:
            name = f"gemmscope_user_{Path(level.source_dir).name}_{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ValueError(f"{level.id}: cannot load {level.source}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # Triton looks its function's module up by name
            spec.loader.exec_module(module)
            _modules[path] = module
    fn = getattr(module, str(level.kernel), None)
    if fn is None or not hasattr(fn, "__getitem__"):
        raise ValueError(f"{level.id}: {level.source} has no @triton.jit function "
                         f"{level.kernel!r}")
    return fn


def triton_launcher(level: Level, ops: Operands) -> tuple[Callable[[], None], dict[str, Any]]:
    """The launch of a Triton level on the current CuPy stream, and its resources (after
    one compiling launch)."""
    why = triton_missing()
    if why is not None:
        raise TritonMissing(f"{level.id} is a Triton kernel; {why}")
    cp, torch = require_cupy(), get_torch()
    if torch is None:
        raise TritonMissing(f"{level.id} is a Triton kernel; torch cannot be imported")
    fn = _function(level)
    a, b, c = (torch.from_dlpack(x) for x in (ops.a, ops.b, ops.c))
    if ops.b_layout == "nk":
        b = b.t()  # Bt stored N x K: the kernel reads B (K x N) through its strides
    M, N, K = ops.shape
    grid = level.grid(M, N)
    meta = {k: v for k, v in level.params.items() if k not in TRITON_OPTIONS}
    options = {k: v for k, v in level.params.items() if k in TRITON_OPTIONS}
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1))
    stream = torch.cuda.ExternalStream(cp.cuda.get_current_stream().ptr)

    def run_level() -> Any:
        with torch.cuda.stream(stream):
            return fn[grid](*args, **meta, **options)

    compiled = run_level()  # compiles; C is poisoned and checked after this by the bench
    COMPILED[(level.id, tuple(level.params.items()))] = compiled
    info = {"variant": "triton", "threads": 32 * _meta(compiled, "num_warps", 4),
            # which code ran, as a level's result says it (issue 41 item 6)
            "code_key": code_key_of(level), "compiler": f"Triton {_version()}",
            "regs": int(getattr(compiled, "n_regs", 0) or 0),
            "smem_bytes": int(_meta(compiled, "shared", 0)),
            "local_bytes": int(getattr(compiled, "n_spills", 0) or 0) * 4,
            "kernel": str(_meta(compiled, "name", level.kernel))}
    return run_level, info


def _arch() -> str:
    cc = require_cupy().cuda.Device().compute_capability
    return f"sm_{cc}a" if cc == "90" else f"sm_{cc}"


def code_key_of(level: Level) -> str:
    """The code key of a Triton level on this GPU (toolchain/triton_build.py)."""
    from ..toolchain.triton_build import triton_code_key

    assert level.source_dir is not None and level.source is not None
    source = (Path(level.source_dir) / level.source).read_text(encoding="utf-8")
    return triton_code_key(source, _version(), dict(level.params), _arch())


def _meta(compiled: Any, name: str, default: Any) -> Any:
    md = getattr(compiled, "metadata", None)
    if isinstance(md, dict):
        return md.get(name, default)
    return getattr(md, name, default)


def artifacts(level: Level) -> dict[str, Any] | None:
    """What the build event needs of a Triton level's compiled kernel (None: not run)."""
    compiled = COMPILED.get((level.id, tuple(level.params.items())))
    if compiled is None:
        return None
    asm = getattr(compiled, "asm", {}) or {}
    return {"cubin": asm.get("cubin"), "ptx": asm.get("ptx"),
            "name": str(_meta(compiled, "name", level.kernel)),
            "regs": int(getattr(compiled, "n_regs", 0) or 0),
            "spills": int(getattr(compiled, "n_spills", 0) or 0),
            "shared": int(_meta(compiled, "shared", 0)),
            "num_warps": int(_meta(compiled, "num_warps", 4)),
            "num_stages": int(_meta(compiled, "num_stages", 0)),
            "triton": _version(), "code_key": code_key_of(level)}


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:
        return "?"


def build_event_of(level: Level) -> dict[str, Any]:
    """The build event of a Triton level that has run (toolchain/triton_build.py), with
    the driver's occupancy of Triton's function and this GPU's limits."""
    from ..toolchain import occupancy
    from ..toolchain.triton_build import triton_event

    art = artifacts(level)
    if art is None:
        raise ValueError(f"{level.id} has not run, so Triton has compiled nothing yet")
    cp = require_cupy()
    dev = cp.cuda.Device()
    limits = occupancy.DeviceLimits.from_attributes(dev.attributes)
    compiled = COMPILED[(level.id, tuple(level.params.items()))]
    driver = None
    try:
        driver = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            int(compiled.function), 32 * art["num_warps"], art["shared"]))
    except Exception:  # the calculator's number stands, said as its source
        driver = None
    return triton_event(level, art, limits, driver, _arch())

"""The ``build`` event: what one compiled variant of a level is, so a recording can show
exactly what ran on any machine (docs/protocol.md, "build").

Two makers, one format. :func:`gpu_event` runs in the runner after the first run of a
(level, variant, params): resources from the loaded kernel (CuPy), occupancy from the
driver's occupancy API beside the calculator's (``occupancy.py``), and the SASS of the same
source and options recompiled by NVRTC to a cubin (CuPy keeps none) and disassembled.
:func:`offline_event` needs no GPU (the CLI's ``diff`` and ``sass``): NVRTC from PyPI
compiles for the level's arch, resources come from the cubin (``cubin.py``), occupancy from
the calculator with the H100/H200 limits. A piece that cannot be had is ``null`` with a
``<field>_reason``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..device import build_cache
from ..ladder.registry import Level
from ..protocol import atomic_file, events
from . import cubin, nvrtc, occupancy, sass, sass_check
from .compile_child import LADDER, USER, ChildFailed, child_main, compile_in_child
from .nvrtc import CompileError

# variant name (as in results) -> the VEC template flag it was compiled with
VEC_OF = {"vector": True, "scalar": False, "tma": True}
# one event stays well below the protocol's line limit; past these, SASS then sources go
MAX_EVENT_BYTES = events.MAX_LINE_BYTES * 3 // 4
OFFLINE_ARCH = "sm_90"  # what CuPy compiles for on an H100/H200 (sm_90a where a level asks)


def variant_name(level: Level, vec: bool) -> str:
    """The ``variant`` of a run (level_launch.level_launcher names it the same way)."""
    return "tma" if level.persistent else "vector" if vec else "scalar"


def aligned_variant(level: Level) -> str:
    """The variant an aligned shape (4096^3) runs."""
    return variant_name(level, level.vector > 1 or not level.edge_variant)


def nvrtc_missing() -> str | None:
    """Why NVRTC cannot compile here (None when it can)."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return "cuda-bindings is not installed (pip install 'gemmscope[nvrtc]')"
    try:
        err, *_ = nvrtc.nvrtcVersion()
    except Exception as exc:  # the library itself is missing
        return f"NVRTC cannot be loaded ({exc})"
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return f"NVRTC cannot be loaded ({err})"
    return None


def _nvrtc_version() -> str:
    from cuda.bindings import nvrtc

    _err, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


# ------------------------------------------------------------------ offline compile

@dataclass(frozen=True, slots=True)
class Offline:
    """A level compiled by NVRTC to a cubin: both variants' resources and SASS."""

    lowered: dict[str, str]  # name expression -> mangled name
    options: list[str]
    nvrtc: str  # NVRTC's version
    resources: dict[str, cubin.KernelResources]  # by mangled name
    sass: dict[str, str] | None  # by mangled name; None where nvdisasm is missing
    sass_reason: str | None
    cubin_sha256: str | None = None  # of the cubin NVRTC made (both variants)


_cache: dict[tuple[str, tuple[tuple[str, int], ...], str, str], Offline] = {}
_lock = threading.Lock()


def compile_cubin(level: Level, params: dict[str, int], arch: str,
                  isolated: bool = False,
                  on_compile: Callable[[], None] | None = None) -> Offline:
    """Compile (once per process) and disassemble a level; raises CompileError, or
    RuntimeError saying what is missing when NVRTC is. ``isolated``: in a child process,
    as the runner does: cuda-bindings' NVRTC loaded into the runner broke a later
    ``import torch`` there (the FP8 reference), and a compiler crash must not cost a run.
    ``on_compile()``: called before NVRTC runs (neither this process nor the build cache
    folder has the answer). A user's source is always compiled in a child, under
    compile_child.USER limits; one that passes them is a CompileError that says so."""
    user = level.user_file is not None
    source = nvrtc.assemble(level)
    # the source is part of the key: a user's kernel keeps its id when its file changes
    key = (level.id, tuple(params.items()), arch, hashlib.sha256(source.encode()).hexdigest())
    with _lock:
        if key in _cache:
            return _cache[key]
    spec = {"program": level.id, "source": source,
            "names": list(nvrtc.variants(level, params).values()),
            "options": list(nvrtc.offline_options(level, arch)), "arch": arch,
            "files": list(nvrtc.source_files(level))}
    got = cached_answer(spec)
    if got is None:
        if on_compile is not None:
            on_compile()
        if user or isolated:
            try:
                got = compile_in_child(spec, USER if user else LADDER)
            except ChildFailed as exc:
                raise (CompileError if user else RuntimeError)(f"{level.id}: {exc}") from None
        else:
            got = compile_spec(spec)
        if "error" not in got:
            keep_answer(spec, got)
    if "error" in got:
        raise (CompileError if got["error_kind"] == "compile" else RuntimeError)(got["error"])
    out = Offline(got["lowered"], got["options"], got["nvrtc"],
                  {n: cubin.KernelResources(**r) for n, r in got["resources"].items()},
                  got["sass"], got["sass_reason"], got.get("cubin_sha256"))
    with _lock:
        _cache[key] = out
    return out


def screen_user_source(level: Level, params: dict[str, int] | None, arch: str) -> None:
    """A user's CUDA source compiled first in the limited child (compile_child.USER), so
    that one which compiles without end or takes every byte is a CompileError, said in
    words, before CuPy compiles it inside the runner; the build event reuses this
    compile. Nothing happens where NVRTC (cuda-bindings) is missing."""
    if level.user_file is None or nvrtc_missing() is not None:
        return
    compile_cubin(level, {**level.params, **(params or {})}, arch, isolated=True)


# ------------------------------------------------------------------ on disk
# The answers of compile_spec, kept in the build cache folder (device/build_cache.py,
# ``sass/``) so that a runner's build events cost no compile on the machine's next run.
# The name hashes the spec (source, options, names, arch) with what turns it into the
# answer: the NVRTC and nvdisasm installed (by package version and file, found without
# loading NVRTC into this process) and this module's own parsing code.
_TOOL_PACKAGES = ("cuda-bindings", "nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu13",
                  "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvdisasm", "nvidia-cuda-nvdisasm-cu13")


@functools.cache
def _toolchain_id() -> str:
    import importlib.metadata

    parts = []
    for name in _TOOL_PACKAGES:
        try:
            parts.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    tool = sass_check.nvdisasm_path()
    if tool is not None:
        st = os.stat(tool)
        parts.append(f"nvdisasm={tool}:{st.st_size}:{st.st_mtime_ns}")
    parts += [f"{v}={os.environ.get(v, '')}" for v in ("CUDA_PATH", "CUDA_HOME")]
    here = Path(__file__).parent
    for module in ("build_event.py", "nvrtc.py", "cubin.py", "sass.py"):
        parts.append(hashlib.sha256((here / module).read_bytes()).hexdigest())
    return "\n".join(parts)


def answer_path(spec: dict[str, Any]) -> Path:
    h = hashlib.sha256(json.dumps(spec, sort_keys=True).encode())
    h.update(_toolchain_id().encode())
    return build_cache.sass_dir() / f"{h.hexdigest()[:40]}.json"


def cached_answer(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The answer kept for this spec (None: none, or unreadable)."""
    try:
        got = json.loads(answer_path(spec).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return got if isinstance(got, dict) and "lowered" in got else None


def keep_answer(spec: dict[str, Any], got: dict[str, Any]) -> None:
    """Keep a successful answer; a folder that cannot be written costs nothing."""
    path = answer_path(spec)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_file.write_text(path, json.dumps(got))
    except OSError:
        pass


def forget(level_id: str) -> None:
    """Drop the offline compiles of a level (a user's kernel whose source changed)."""
    with _lock:
        for key in [k for k in _cache if k[0] == level_id]:
            del _cache[key]


def compile_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """NVRTC and nvdisasm on one level's source; a JSON-able answer (``error`` and
    ``error_kind`` -- ``missing`` or ``compile`` -- where there is none)."""
    missing = nvrtc_missing()
    if missing is not None:
        return {"error": missing, "error_kind": "missing"}
    try:
        ob = nvrtc.compile_source(spec["program"], spec["source"], spec["names"],
                                  tuple(spec["options"]), spec["arch"])
    except CompileError as exc:
        return {"error": str(exc), "error_kind": "compile"}
    texts, reason = None, sass.nvdisasm_missing()
    if reason is None:
        try:
            texts = sass.disassemble(ob.cubin, spec["files"])
        except Exception as exc:  # a tool that fails is a reason, not a lost event
            reason = f"nvdisasm failed: {exc}"
    return {"lowered": ob.lowered, "options": list(ob.options), "nvrtc": _nvrtc_version(),
            "resources": {n: dataclasses.asdict(r) for n, r in cubin.kernels(ob.cubin).items()},
            "sass": texts, "sass_reason": reason, "cubin_sha256": ob.cubin_sha256}


# ------------------------------------------------------------------ the event

def offline_event(level: Level, variant: str | None = None,
                  params: dict[str, int] | None = None, arch: str | None = None,
                  t: float = 0.0, isolated: bool = False) -> dict[str, Any]:
    """A build event with no GPU: raises CompileError, or RuntimeError when NVRTC is
    missing (nothing to report then). ``isolated``: compile in a child process (see
    ``compile_cubin``), for a process that imports torch later (the FP8 reference)."""
    variant = variant or aligned_variant(level)
    vec = _vec(level, variant)
    params = dict(params or level.params)
    arch = arch or level.arch or OFFLINE_ARCH
    off = compile_cubin(level, params, arch, isolated)
    name = level.name_expression(vec, params)
    res = off.resources[off.lowered[name]]
    threads = level.threads[0] * level.threads[1]
    dyn = level.dyn_smem_bytes(params)
    calc = occupancy.occupancy(res.regs, threads, res.smem_static_bytes, dyn,
                               barriers=res.barriers)
    occ = _occupancy(calc, res.regs, threads, res.smem_static_bytes, dyn, res.barriers,
                     occupancy.HOPPER, None,
                     f"no GPU: the occupancy calculator with the {OFFLINE_ARCH} limits")
    return _event(level, variant, params, name, off, arch,
                  f"NVRTC {off.nvrtc} (cuda-bindings)", list(off.options),
                  regs=res.regs, smem_static=res.smem_static_bytes, dyn=dyn,
                  local=res.local_bytes, threads=threads, barriers=res.barriers,
                  resources_from="cubin", occ=occ, t=t)


def gpu_event(level: Level, variant: str, params: dict[str, int] | None = None,
              t: float | None = None,
              on_compile: Callable[[], None] | None = None) -> dict[str, Any]:
    """A build event on the GPU, for a variant that has just run (so it is compiled);
    ``on_compile()`` where NVRTC compiles it again for its SASS (see compile_cubin)."""
    from ..device.gpu import require_cupy

    cp = require_cupy()
    built = nvrtc.compile_level(level, params)  # this process's cache: no new compile
    vec = _vec(level, variant)
    kernel = built.kernels[vec]
    params = dict(built.params)
    threads = level.threads[0] * level.threads[1]
    dyn = level.dyn_smem_bytes(params)
    regs, static = int(kernel.num_regs), int(kernel.shared_size_bytes)
    local = int(kernel.local_size_bytes)
    dev = cp.cuda.Device()
    limits = occupancy.DeviceLimits.from_attributes(dev.attributes)
    cc = dev.compute_capability
    arch = level.arch or f"sm_{cc}"
    off: Offline | None = None
    sass_reason = None
    try:
        off = compile_cubin(level, params, arch, isolated=True, on_compile=on_compile)
    except Exception as exc:
        sass_reason = f"no cubin to disassemble: {exc}"
    name = level.name_expression(vec, params)
    barriers = off.resources[off.lowered[name]].barriers if off else 0
    driver, driver_reason = None, None
    try:
        driver = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, threads, dyn))
    except Exception as exc:
        driver_reason = f"the driver's occupancy API failed: {exc}"
    calc = occupancy.occupancy(regs, threads, static, dyn, limits, barriers)
    occ = _occupancy(calc, regs, threads, static, dyn, barriers, limits, driver,
                     driver_reason)
    return _event(level, variant, params, name, off, arch, built.compiler,
                  [*(o for o in nvrtc.options(level) if not o.startswith("-I")),
                   f"-arch=sm_{cc}", "-ftz=true"],
                  regs=regs, smem_static=static, dyn=dyn, local=local, threads=threads,
                  barriers=barriers, resources_from="driver", occ=occ, t=t,
                  sass_reason=sass_reason, code_key=built.code_key)


def _vec(level: Level, variant: str) -> bool:
    if variant not in VEC_OF or (variant == "scalar" and not level.edge_variant):
        raise ValueError(f"{level.id} has no variant {variant!r}; it has "
                         f"{', '.join(sorted({variant_name(level, v) for v in (True, False)}))}")
    return VEC_OF[variant]


def _occupancy(calc: occupancy.Occupancy, regs: int, threads: int, static: int, dyn: int,
               barriers: int, limits: occupancy.DeviceLimits, driver: int | None,
               driver_reason: str | None) -> dict[str, Any]:
    occ = calc.as_dict()
    warps = -(-threads // limits.warp_size)
    if driver is not None:  # the driver's number is the answer; the calculator explains it
        occ.update({"blocks_per_sm": driver, "warps_per_sm": driver * warps,
                    "occupancy_pct": round(100.0 * driver * warps / limits.max_warps_per_sm,
                                           2)})
        if driver != calc.blocks_per_sm:
            occ["limited_by"] = [r for r, n in calc.limits.items() if n == driver]
    occ.update({
        "source": "driver" if driver is not None else "calculator",
        "driver_blocks_per_sm": driver, "calculator_blocks_per_sm": calc.blocks_per_sm,
        "what_if": occupancy.what_if(regs, threads, static, dyn, limits, barriers),
        "device": limits.as_dict()})
    if driver is None:
        occ["driver_reason"] = driver_reason
    return occ


def _event(level: Level, variant: str, params: dict[str, int], name: str,
           off: Offline | None, arch: str, compiler: str, options: list[str], *, regs: int,
           smem_static: int, dyn: int, local: int, threads: int, barriers: int,
           resources_from: str, occ: dict[str, Any], t: float | None,
           sass_reason: str | None = None, code_key: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "build", "level": level.id, "variant": variant, "params": params,
        "kernel": name, "arch": arch, "compiler": compiler, "options": options,
        "sources": nvrtc.source_files(level),
        "regs": regs, "smem_static_bytes": smem_static, "smem_dynamic_bytes": dyn,
        "local_bytes": local, "threads_per_block": threads, "barriers": barriers,
        "resources_from": resources_from, "occupancy": occ,
        # which code (issue 31 item 2): the key the results of this build carry (GPU), and
        # the sha256 of the cubin disassembled here (sass_from says which compiler made it;
        # the same compiler as the run's makes the same cubin, the build being deterministic)
        "code_key": code_key,
        "cubin_sha256": off.cubin_sha256 if off is not None else None,
    }
    if t is not None:
        event["t"] = t
    if off is not None:
        event["mangled"] = off.lowered[name]
        sass_reason = off.sass_reason
    if off is None or off.sass is None:
        event.update({"sass": None, "sass_reason": sass_reason, "main_loop": None,
                      "instruction_mix": None, "instruction_mix_reason": sass_reason})
    else:
        mangled = off.lowered[name]
        event.update(sass_fields(off.sass[mangled]))
        event["sass_from"] = {"compiler": f"NVRTC {off.nvrtc} (cuda-bindings)",
                              "arch": arch, "disassembler": "nvdisasm -c -gi",
                              "regs": off.resources[mangled].regs}
    return bound(event)


def sass_fields(text: str) -> dict[str, Any]:
    """``sass``, ``main_loop`` and ``instruction_mix`` of one kernel's compact SASS."""
    lines = sass.parse(text)
    span = sass.main_loop(text)
    return {"sass": text, "main_loop": list(span) if span else None,
            "instruction_mix": {"kernel": sass.instruction_mix(lines),
                                "main_loop": sass.instruction_mix(sass.in_span(lines, span))
                                if span else None}}


def bound(event: dict[str, Any]) -> dict[str, Any]:
    """Keep the event under MAX_EVENT_BYTES: drop the SASS, then the sources, saying why."""
    for field in ("sass", "sources"):
        size = len(events.dumps(event).encode())
        if size <= MAX_EVENT_BYTES:
            break
        event[field] = None
        event[f"{field}_reason"] = (f"left out: the event would be {size:,} bytes, over "
                                    f"its bound of {MAX_EVENT_BYTES:,}")
    return event


if __name__ == "__main__":  # the compile child (compile_child.compile_in_child starts it)
    sys.exit(child_main(sys.argv[1:], compile_spec))

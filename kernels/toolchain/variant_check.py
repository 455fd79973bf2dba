"""The constraint check of one variant, from a registry level or a user's spec: what the
CLI asks before it sends a run and what the app shows beside the parameters it edits.

The registers come from a compile (NVRTC from PyPI, no GPU: ``build_event.compile_cubin``)
where ``compile`` is asked and NVRTC is there; otherwise the check says they are not
known yet. (The runner never imports this module: the spec side needs msgspec.)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..ladder.kernel_spec import KernelSpec, Language, SpecError
from ..ladder.level import Level
from ..ladder.spec_expression import ExpressionError
from ..ladder.user_level import UserLaunch
from . import build_event
from .constraints import Check, Finding, Status, Variant, check
from .nvrtc import CompileError, first_error
from .occupancy import HOPPER, DeviceLimits
from .user_sources import folder_for


def label(name: str, params: dict[str, int]) -> str:
    return f"{name} " + " ".join(f"{k}={v}" for k, v in params.items())


def level_variant(level: Level, params: dict[str, int] | None, M: int, N: int,
                  K: int, sm_count: int | None = None) -> tuple[Variant, Level | None]:
    """A registry level with some parameters changed: the Variant and the Level that
    would run (None where the parameters cannot make one); a persistent level's grid is
    the blocks it launches on ``sm_count`` SMs (its tile count where that is None)."""
    try:
        lv = level.with_params(params or {})
    except ValueError as exc:
        p = {**level.params, **(params or {})}
        return Variant(label(level.id, p), (str(exc).removeprefix(f"{level.id}: "),),
                       launch=False), None
    problems = [why for why in (lv.shape_refusal(M, N, K),) if why]
    geometry = lv.launch_geometry()
    return Variant(label(lv.id, lv.params), tuple(problems), geometry.block,
                   lv.grid(M, N, sm_count), lv.dyn_smem_bytes()), lv


def spec_variant(spec: KernelSpec, params: dict[str, int] | None, M: int, N: int,
                 K: int) -> Variant:
    try:
        p = spec.with_defaults(params)
    except SpecError as exc:
        return Variant(spec.id, (str(exc),), launch=False)
    problems = spec.param_problems(p)
    if not problems:
        problems = spec.shape_problems(M, N, K, p)
    try:  # the launch as far as it can be computed, problems or not
        return Variant(label(spec.id, p), tuple(problems), spec.block_of(p),
                       spec.grid_of(M, N, K, p), spec.smem_of(p))
    except (ExpressionError, KeyError, ZeroDivisionError) as exc:
        return Variant(label(spec.id, p), (*problems, f"the launch: {exc}"), launch=False)


def with_registers(v: Variant, level: Level, arch: str | None = None) -> Variant:
    """The variant with registers and static shared memory from an offline compile (the
    same variant unchanged where NVRTC is missing; CompileError where it fails)."""
    if build_event.nvrtc_missing() is not None or v.problems:
        return v
    arch = arch or level.arch or build_event.OFFLINE_ARCH
    off = build_event.compile_cubin(level, dict(level.params), arch)
    name = level.name_expression(level.vector > 1 or not level.edge_variant, level.params)
    res = off.resources[off.lowered[name]]
    return Variant(v.label, v.problems, v.block, v.grid, v.dyn_smem, res.regs,
                   res.smem_static_bytes, f"NVRTC {off.nvrtc} for {arch}", res.local_bytes)


def with_build(v: Variant, build: dict[str, Any] | None) -> Variant:
    """The variant with the registers and static shared memory of a build event of the
    same variant (a run's, or a recording's), where one is given."""
    if build is None or not isinstance(build.get("regs"), int):
        return v
    static = build.get("smem_static_bytes")
    local = build.get("local_bytes")
    return dataclasses.replace(
        v, regs=build["regs"], static_smem=static if isinstance(static, int) else None,
        local_bytes=local if isinstance(local, int) else 0,
        resources_from=f"the build event of a run, {str(build.get('compiler', ''))[:60]}")


def check_spec(spec: KernelSpec, source: str, params: dict[str, int] | None, M: int,
               N: int, K: int, limits: DeviceLimits = HOPPER,
               compile: bool = True, build: dict[str, Any] | None = None
               ) -> tuple[Check, UserLaunch]:
    """The check of a user's variant and the run command's ``kernel`` object for it
    (carrying the refusal where the check failed). ``build``: a build event of this
    variant, whose registers stand in for a compile."""
    v = with_build(spec_variant(spec, params, M, N, K), build)
    p = {**spec.defaults, **(params or {})} if not set(params or {}) - set(spec.params) \
        else spec.defaults
    compile_error = None
    launch = spec.launch(source, M, N, K, p)
    if compile and build is None and spec.language is Language.CUDA and not v.problems:
        try:
            v = with_registers(v, launch.level(folder_for(launch)))
        except CompileError as exc:
            compile_error = first_error(str(exc))
        except RuntimeError:
            pass  # NVRTC could not run here: the check says the registers are unknown
    result = check(v, limits)
    if not result.ok:
        launch = spec.launch(source, M, N, K, p, refused=result.refusal)
    if compile_error is not None:  # shown, not refused: the runner reports the compile
        result = Check((*result.findings, Finding("compile", Status.FAIL, compile_error)),
                       result.occupancy)
    return result, launch

"""The runner: a child process that reads JSON-line commands and writes JSON-line events.

It owns the GPU. A kernel that faults leaves a sticky error in the CUDA context, so after
such an error the runner reports it and exits (code 70); its parent restarts it. Bad
commands, runs over the device's limits and CUDA errors that are not sticky are answered
with an ``error`` event and the runner keeps serving.

Beside it: its session event (session_header.py), a run's events (run_events.py), the
references' figures it keeps for the levels after them (reference_figures.py) and the
build events it says (builds_said.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, TextIO

from ..device import build_cache
from ..device.gpu import (
    DeviceInfo,
    context_usable,
    deep_gemm_missing,
    device_info,
    get_cupy,
    is_sticky,
    software_versions,
)
from ..device.gpu_select import gpu_env, visible_index
from ..device.telemetry import Nvml, Sampler
from ..ladder import registry
from ..ladder.registry import Kind, Level, Library, Precision
from ..protocol import commands, events
from ..protocol.events import ErrorKind, Mode, ProtocolError
from ..toolchain.nvrtc import CompileError, traceable
from . import trace_launch
from .builds_said import BuildsSaid
from .measure import Bench, Refused, refusal, wall_clock
from .paired import run_paired
from .paired_sustained import run_sustained_paired
from .reference_figures import ReferenceFigures
from .run_events import measure_burst, measure_sustained, paired_run_start, phase_emitter
from .session_header import session_header
from .sustained import Trial
from .user_kernels import LaunchRefused, UserKernels

EXIT_CONTEXT_LOST = 70
DEEPGEMM_REFERENCE = "deepgemm_fp8"  # an FP8 level's second paired reference
LOST = object()  # a measurement that lost the CUDA context (Runner._measured)


def unavailable_here() -> list[str]:
    """References this runner cannot run and so does not list: DeepGEMM's where the
    deep_gemm package (or torch) is not importable."""
    if deep_gemm_missing() is None:
        return []
    return [lv.id for lv in registry.references() if lv.library is Library.DEEPGEMM]


def load_extra_levels(path: str) -> list[Level]:
    """Levels from a Python file's LEVELS list (test-only levels, e.g. one that faults)."""
    spec = importlib.util.spec_from_file_location("gemmscope_extra_levels", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load levels from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.LEVELS)


class Runner:
    def __init__(self, out: TextIO, telemetry_hz: float = 50.0,
                 extra_levels: list[Level] | None = None):
        self.out = out
        self.clock = wall_clock()
        self._lock = threading.Lock()
        self.levels: dict[str, Level] = dict(registry.BY_ID)
        for lv in extra_levels or []:
            self.levels[lv.id] = lv
        self.telemetry_hz = telemetry_hz
        self.device: DeviceInfo | None = None
        self.no_gpu_reason: str | None = None
        self.bench: Bench | None = None
        self.sampler: Sampler | None = None
        # each reference's TFLOPS, SM clock and energy window, for the levels after it
        self.references = ReferenceFigures()
        # the builds said so far (each once, after its first run)
        self.builds = BuildsSaid(lambda event: self.emit(event))
        self.user = UserKernels()  # user kernels sent in run commands (docs/user-kernels.md)
        # a burst of a level paired with its reference (tests put a fake bench's here)
        self.pair_burst: Callable[..., tuple[dict[str, Any], dict[str, Any]]] = run_paired
        # what software makes this runner's results (every result names it; None: no GPU)
        self.versions: dict[str, str | None] | None = None

    # ------------------------------------------------------------------ output
    def emit(self, event: dict[str, Any]) -> None:
        event.setdefault("t", round(self.clock(), 6))
        line = events.dumps(event)
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def error(self, kind: ErrorKind, message: str, **where: Any) -> None:
        self.emit({"type": "error", "kind": str(kind), "message": message,
                   **{k: v for k, v in where.items() if v is not None}})

    # ------------------------------------------------------------------ start
    def start(self) -> None:
        cp, reason = get_cupy()
        if cp is not None:
            try:
                self.device = device_info()
            except Exception as exc:
                reason = f"CUDA device not usable: {exc}"
        self.no_gpu_reason = reason
        # NVML ignores CUDA_VISIBLE_DEVICES: the GPU CUDA runs on, by its bus id
        nvml = Nvml(visible_index(), self.device.pci_bus_id if self.device else None)
        device = self.device.as_event() if self.device else None
        if device is not None:
            device["uuid"] = nvml.uuid()
        header = session_header(device, reason, nvml, self.telemetry_hz, unavailable_here())
        # t counts from the header, which the session places by the time it arrives: a
        # clock started before CUDA's initialisation above would put every later event
        # that long after the session's own events (ncu's step, errors) on one axis
        self.clock = wall_clock()
        self.sampler = Sampler(nvml, self.emit, self.clock, hz=self.telemetry_hz)
        self.emit({"type": "session", "t": 0.0, **header})
        if not nvml.available:
            self.emit({"type": "info", "message": f"telemetry unavailable: {nvml.reason}"})
        if self.device is not None:
            self.bench = Bench(self.device, self.clock, self.sampler)
            self.versions = software_versions(nvml.driver_version())
        self.sampler.start()
        self.emit({"type": "ready"})

    def stop(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()

    # ------------------------------------------------------------------ serve
    def serve(self, lines: Any) -> int:
        """Handle commands until quit or end of input; returns the exit code."""
        for raw in lines:
            if not raw.strip():
                continue
            try:
                cmd = commands.parse_command(raw)  # parsed once: the handlers trust it
            except ProtocolError as exc:
                cid = commands.command_id(raw)
                self.error(ErrorKind.BAD_INPUT, str(exc), id=cid)
                self.emit({"type": "done", "id": cid})
                continue
            try:
                code = self.handle(cmd)
            except Exception as exc:  # a bug must not cost the session: say it, go on
                if _context_lost(exc):
                    self.error(ErrorKind.LAUNCH, f"the CUDA context is lost ({exc}); the "
                               "runner exits and must be restarted", id=cmd.id)
                    return EXIT_CONTEXT_LOST
                self.error(ErrorKind.INTERNAL, f"{exc!r}\n{traceback.format_exc()}",
                           id=cmd.id)
                self.emit({"type": "done", "id": cmd.id})
                continue
            if code is not None:
                return code
        self.emit({"type": "bye"})
        return 0

    def handle(self, cmd: commands.Command) -> int | None:
        cid = cmd.id
        if isinstance(cmd, commands.RunCommand):
            if self.run(cmd):
                return EXIT_CONTEXT_LOST
        elif isinstance(cmd, commands.TraceCommand):
            if self.trace(cmd):
                return EXIT_CONTEXT_LOST
        elif isinstance(cmd, commands.TelemetryCommand):
            if self.sampler is not None:
                self.sampler.set_rate(cmd.hz)
            state = "off" if cmd.hz == 0 else f"{cmd.hz:g} Hz"
            self.emit({"type": "info", "id": cid, "message": f"telemetry sampling {state}"})
        elif cmd.cmd == "quit":
            self.emit({"type": "bye", "id": cid})
            return 0
        elif cmd.cmd == "ping":
            self.emit({"type": "pong", "id": cid})
        elif cmd.cmd == "levels":
            entries = [lv.catalog_entry(i) for i, lv in enumerate(self.levels.values())]
            self.emit({"type": "levels", "id": cid, "levels": entries})
        self.emit({"type": "done", "id": cid})
        return None

    # ------------------------------------------------------------------ runs
    def run(self, cmd: commands.RunCommand) -> bool:
        """One run command (plus its reference); True when the CUDA context is lost."""
        if cmd.kernel is not None:
            return self.run_user(cmd)
        level = self.levels.get(cmd.level)
        where = cmd.where()
        if level is None:
            self.error(ErrorKind.UNKNOWN_LEVEL, f"unknown level {cmd.level!r}; known: "
                       f"{', '.join(self.levels)}", **where)
            return False
        if cmd.params:
            try:
                level = level.with_params(cmd.params)
            except ValueError as exc:
                self.error(ErrorKind.BAD_INPUT, str(exc), **where, params=dict(cmd.params))
                return False
        if self.bench is None:
            self.error(ErrorKind.NO_GPU, f"cannot run {level.id}: {self.no_gpu_reason}",
                       **where)
            return False
        refused = refusal(level, cmd.M, cmd.N, cmd.K, self.device)  # before its reference
        if refused is not None:
            self.error(ErrorKind(refused.kind), str(refused), **where)
            return False
        return self._with_reference(level, cmd, level.params if cmd.params else None)

    def trace(self, cmd: commands.TraceCommand) -> bool:
        """One trace command (issue 46): the level's trace build launched once, its
        timeline a ``trace`` event; True when the CUDA context is lost."""
        where = cmd.where()
        level = self.levels.get(cmd.level)
        if level is None:
            self.error(ErrorKind.UNKNOWN_LEVEL, f"unknown level {cmd.level!r}", **where)
            return False
        if self.bench is None:
            self.error(ErrorKind.NO_GPU, f"cannot trace {level.id}: {self.no_gpu_reason}",
                       **where)
            return False
        refused = refusal(level, cmd.M, cmd.N, cmd.K, self.device)
        if refused is None and not traceable(level):
            refused = Refused(f"{level.id} has no trace build; the levels with one: "
                              f"{', '.join(lv.id for lv in self.levels.values() if traceable(lv))}")
        if refused is not None:
            self.error(ErrorKind(refused.kind), str(refused), **where)
            return False
        event = self._measured(level, where, lambda: trace_launch.trace_event(
            level, cmd.M, cmd.N, cmd.K, cmd.pairs, cmd.every))
        if event is LOST:
            return True
        if event is not None:
            self.emit({**event, "id": cmd.id})
        return False

    def _with_reference(self, level: Level, cmd: commands.RunCommand,
                        params: dict[str, int] | None) -> bool:
        """The level and, where the run compares, its reference: paired with it (a burst
        in one loop, kernels/engine/paired.py; a sustained run in alternating windows,
        paired_sustained.py), else alone (a reference refused here is said first)."""
        reference = self._pairable(level, cmd)
        if reference is not None:
            return self._run_paired(level, reference, cmd, params)
        if self._reference_first(level, cmd):
            return True
        return self._run_one(level, cmd, params)

    def _pairable(self, level: Level, cmd: commands.RunCommand) -> Level | None:
        """The reference a run of ``level`` is paired with (None: not paired)."""
        ref_id = level.reference
        if not (cmd.compare and level.kind is Kind.LEVEL and ref_id in self.levels):
            return None
        reference = self.levels[ref_id]
        return reference if refusal(reference, cmd.M, cmd.N, cmd.K, self.device) is None \
            else None

    def _run_paired(self, level: Level, reference: Level, cmd: commands.RunCommand,
                    params: dict[str, int] | None) -> bool:
        """A level paired with its reference (a burst's pair loop, or a sustained run's
        alternating windows): the reference's result (``paired_with`` the level), then
        the level's with the paired ratio; True where it ended the runner."""
        where = {**cmd.where(), "level": level.id}
        ref_where = {**cmd.where(), "level": reference.id}
        failed = {**where, "params": dict(params)} if params else where
        mode = str(cmd.mode)
        paired_run_start(self.emit, level, reference, cmd, where, ref_where)

        def said(side: str) -> tuple[dict[str, Any], dict[str, Any]]:
            # the reference's launches: its own level id, and "of" (until the repeat
            # events carry the tiers field that tells them apart)
            if side == "reference":
                return ref_where, {"of": "reference", "paired_with": level.id}
            return where, {}

        def on_launch(side: str, i: int, ms: float) -> None:
            at, of = said(side)
            self.emit({"type": "repeat", **at, "mode": mode, "i": i, "pair": i, "ms": ms,
                       "tflops": cmd.shape.tflops(ms), **of})

        def on_trial(side: str, trial: Trial) -> None:
            at, of = said(side)
            self.emit({"type": "repeat", **at, "mode": mode, **trial.as_event(),
                       "pair": trial.i, **of})

        on_phase = phase_emitter(self.emit, where, cmd.mode)

        assert self.bench is not None
        bench = self.bench
        bench.distribution = cmd.operands  # both sides drawn as the command says
        if cmd.mode == Mode.SUSTAINED:
            out = self._measured(level, failed, lambda: run_sustained_paired(
                bench, level, reference, cmd.M, cmd.N, cmd.K, cmd.sustained, cmd.warmup,
                params, on_phase, on_trial))
        else:
            out = self._measured(level, failed, lambda: self.pair_burst(
                bench, level, reference, cmd.M, cmd.N, cmd.K, cmd.max_pairs, cmd.warmup,
                cmd.pair_budget_s, on_launch, params, settle_s=cmd.settle_s,
                on_settle=lambda left: on_phase("settle", 0, left),
                second=self._second_reference(level, cmd),
                on_compile=lambda: on_phase("compile", 0, None),
                energy_s=cmd.energy_s,
                ref_energy=self.references.energy_of(reference.id, cmd)))
        if out is LOST:
            return True
        if out is None:
            return False
        ref_result, result = out
        self.references.keep(reference.id, cmd, ref_result)
        self._emit_result(reference, cmd, ref_result, ref_where)
        if params:
            result["params"] = dict(params)
        self._emit_result(level, cmd, result, failed)
        return False

    def _second_reference(self, level: Level, cmd: commands.RunCommand) -> Level | None:
        """DeepGEMM beside an FP8 level's cuBLASLt reference, where this runner has it
        (deep_gemm imports) and it takes the shape; else None."""
        deep = self.levels.get(DEEPGEMM_REFERENCE)
        if (deep is None or level.precision is not Precision.FP8
                or deep.id == level.reference):
            return None
        return deep if refusal(deep, cmd.M, cmd.N, cmd.K, self.device) is None else None

    def _reference_first(self, level: Level, cmd: commands.RunCommand) -> bool:
        """Run the level's reference at the command's shape and mode first, where the run
        compares and none is measured yet (a refusal of it is said, and the level runs
        all the same); True where that run ended the runner (as :meth:`_run_one`)."""
        ref_id = level.reference
        if not (cmd.compare and level.kind is Kind.LEVEL and ref_id in self.levels
                and not self.references.measured(ref_id, cmd)):
            return False
        reference = self.levels[ref_id]
        refused = refusal(reference, cmd.M, cmd.N, cmd.K, self.device)
        if refused is not None:
            self.error(ErrorKind(refused.kind), str(refused),
                       **{**cmd.where(), "level": reference.id})
            return False
        return self._run_one(reference, cmd, None)

    def run_user(self, cmd: commands.RunCommand) -> bool:
        """A run of a user's kernel (the command's ``kernel`` object): refused in words
        where the client's constraint check or the runner's own said no, else the same
        path as a level, its reference first."""
        where = cmd.where()
        try:
            level, launch, event = self.user.level(cmd.kernel)
        except LaunchRefused as exc:
            self.error(ErrorKind.BAD_INPUT, f"user kernel {cmd.level!r}: {exc}", **where)
            return False
        if level.id != cmd.level or cmd.params:
            self.error(ErrorKind.BAD_INPUT, f"a run of user kernel {level.id!r} names it as "
                       "its level and carries its parameters in the kernel object", **where)
            return False
        where["params"] = dict(level.params)
        if event is not None:
            self.builds.forget(level.id)
            self.emit({**event, "id": cmd.id})
        if launch.refused is not None:
            self.error(ErrorKind.REFUSED, f"{level.id} ({_params_text(level.params)}) was "
                       f"refused before launch: {launch.refused}", **where)
            return False
        if self.bench is None:
            self.error(ErrorKind.NO_GPU, f"cannot run {level.id}: {self.no_gpu_reason}",
                       **where)
            return False
        refused = refusal(level, cmd.M, cmd.N, cmd.K, self.device)
        if refused is not None:
            self.error(ErrorKind(refused.kind), str(refused), **where)
            return False
        return self._with_reference(level, cmd, dict(level.params))  # a Kind.LEVEL

    def _run_one(self, level: Level, cmd: commands.RunCommand,
                 params: dict[str, int] | None) -> bool:
        """Measure one level (refused before, where it would be) as the command says."""
        where = {**cmd.where(), "level": level.id}
        # a variant's errors say which (a sweep's refused cells); its repeats need not
        failed = {**where, "params": dict(params)} if params else where
        measure = {Mode.BURST: measure_burst, Mode.SUSTAINED: measure_sustained}[cmd.mode]
        assert self.bench is not None
        bench = self.bench
        bench.distribution = cmd.operands  # A and B drawn as the command says
        result = self._measured(level, failed, lambda: measure(self.emit, bench, level, cmd,
                                                               where, params))
        if result is LOST:
            return True
        if result is None:
            return False
        if params:
            result["params"] = dict(params)
        if level.kind is Kind.REFERENCE:
            self.references.keep(level.id, cmd, result)
        else:
            self.references.compare(level, cmd, result)
        self._emit_result(level, cmd, result, failed)
        return False

    def _measured(self, level: Level, failed: dict[str, Any], measure: Callable[[], Any]
                  ) -> Any:
        """``measure()``, its failures said as error events: its value, None after an
        error the runner survives, or LOST where the CUDA context is lost."""
        try:
            return measure()
        except Refused as exc:
            self.error(ErrorKind(exc.kind), str(exc), **failed)
            return None
        except CompileError as exc:
            self.error(ErrorKind.COMPILE, str(exc), **failed)
            return None
        except Exception as exc:
            if _context_lost(exc):
                self.error(ErrorKind.LAUNCH, f"{level.id} failed on the GPU: {exc}. The CUDA "
                           "context is lost; the runner exits and must be restarted.", **failed)
                return LOST
            if _is_cuda_error(exc):  # e.g. an invalid launch configuration: not sticky
                self.error(ErrorKind.LAUNCH, f"{level.id} failed on the GPU: {exc}", **failed)
                return None
            if type(exc).__name__ == "OutOfMemoryError":
                self.error(ErrorKind.OUT_OF_MEMORY, f"{level.id}: {exc}", **failed)
                return None
            self.error(ErrorKind.INTERNAL, f"{level.id}: {exc!r}\n{traceback.format_exc()}",
                       **failed)
            return None

    def _emit_result(self, level: Level, cmd: commands.RunCommand, result: dict[str, Any],
                     failed: dict[str, Any]) -> None:
        """The result event, the level's build event after its first run, and a verify
        error where the answer was wrong."""
        if self.versions is not None:  # what software made it (issue 41 item 6)
            result["versions"] = self.versions
        M, N, K = cmd.M, cmd.N, cmd.K
        self.emit({"type": "result", "id": cmd.id, **result})
        self._emit_build(level, result.get("variant"), result.get("params"), cmd)
        if not result["verified"]:
            why = "NaN in C (an element was not written)" if result["nan"] else (
                f"relative error {result['rel_err']:.3g} > tolerance {result['tol']:.0e}")
            self.error(ErrorKind.VERIFY, f"{level.id} gave a wrong answer at {M}x{N}x{K}: {why}",
                       **failed)

    def _emit_build(self, level: Level, variant: str | None, params: dict[str, int] | None,
                    cmd: commands.RunCommand) -> None:
        """After the first run of a (level, variant, params): its build event
        (:meth:`.BuildsSaid.say`)."""
        self.builds.say(level, variant, params, cmd)


def _params_text(params: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()) or "no parameters"


def _is_cuda_error(exc: BaseException) -> bool:
    name = type(exc).__name__
    return (name in ("CUDARuntimeError", "CUDADriverError") or "cudaError" in str(exc)
            or "CUDA_ERROR_" in str(exc))


def _context_lost(exc: BaseException) -> bool:
    """A sticky CUDA error (every later CUDA call in this process fails), or any CUDA
    error after which the device no longer synchronises."""
    return _is_cuda_error(exc) and (is_sticky(exc) or not context_usable())


def main(telemetry_hz: float = 50.0, levels_from: str | None = None,
         device: int | None = None) -> int:
    # before CuPy is imported (it is, lazily, in start): its GPU and its cache folder
    if device is not None:
        os.environ.update(gpu_env(device))
    build_cache.configure()
    # stdout carries the protocol only; anything else printed goes to stderr
    out = sys.stdout
    sys.stdout = sys.stderr
    extra = load_extra_levels(levels_from) if levels_from else None
    runner = Runner(out, telemetry_hz=telemetry_hz, extra_levels=extra)
    runner.start()
    try:
        # bytes, each line bounded: bad UTF-8 or an endless line is answered, not fatal
        code = runner.serve(events.read_lines(sys.stdin.buffer, events.MAX_COMMAND_BYTES))
    finally:
        runner.stop()
    return code

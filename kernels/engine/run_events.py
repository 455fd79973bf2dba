"""The events of one run of one level as the runner says them: its ``run_start``, each
``repeat`` (a sustained run's trials) and its ``phase`` events (compile, settle, cooldown,
window), around the bench's burst (measure.Bench.run) or sustained run (sustained.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ladder import registry
from ..ladder.registry import Level
from ..protocol import commands
from ..protocol.commands import ENERGY_S
from ..protocol.events import Mode
from .measure import Bench
from .sustained import Trial, run_sustained

Emit = Callable[[dict[str, Any]], None]
Phases = Callable[[str, int, float | None], None]


def phase_emitter(emit: Emit, where: dict[str, Any], mode: Mode) -> Phases:
    """The one emitter of a run's ``phase`` events (compile, settle, cooldown,
    window): ``(phase, trial, seconds)``; a compile phase has no seconds
    (docs/protocol.md, phase)."""
    def on_phase(phase: str, trial: int, seconds: float | None) -> None:
        emit({"type": "phase", **where, "mode": str(mode), "phase": phase,
              "trial": trial, **({} if seconds is None else {"seconds": seconds})})

    return on_phase


def paired_run_start(emit: Emit, level: Level, reference: Level, cmd: commands.RunCommand,
                     where: dict[str, Any], ref_where: dict[str, Any]) -> None:
    """The ``run_start`` events of a level paired with its reference: the reference's
    (``paired_with`` the level), then the level's."""
    mode = str(cmd.mode)
    if cmd.mode == Mode.SUSTAINED:
        start = {**cmd.sustained.fields(), "repeats": cmd.sustained.trials}
    else:
        start = {"repeats": cmd.max_pairs, "pair_budget_s": cmd.pair_budget_s,
                 **({"energy_s": cmd.energy_s} if cmd.energy_s != ENERGY_S[0] else {}),
                 **({"settle_s": cmd.settle_s} if cmd.settle_s else {})}
    for lv, at, extra in ((reference, ref_where, {"paired_with": level.id}),
                          (level, where, {"reference": reference.id, "paired": True})):
        emit({"type": "run_start", **at, "dtype": registry.DTYPE_OF[lv.precision],
              "precision": str(lv.precision), "mode": mode, **start,
              "warmup": cmd.warmup, **extra})


def measure_burst(emit: Emit, bench: Bench, level: Level, cmd: commands.RunCommand,
                  where: dict[str, Any], params: dict[str, int] | None) -> dict[str, Any]:
    """A burst run of the level alone: its events, then the bench's result."""
    asked = {"settle_s": cmd.settle_s} if cmd.settle_s else {}
    if cmd.energy_s != ENERGY_S[0]:  # a window other than the documented one: said
        asked["energy_s"] = cmd.energy_s
    emit({"type": "run_start", **where, "dtype": registry.DTYPE_OF[level.precision],
          "precision": str(level.precision), "mode": str(Mode.BURST),
          "repeats": cmd.repeats, "warmup": cmd.warmup, **asked})

    def on_repeat(i: int, ms: float) -> None:
        emit({"type": "repeat", **where, "mode": str(Mode.BURST), "i": i, "ms": ms,
              "tflops": cmd.shape.tflops(ms)})

    on_phase = phase_emitter(emit, where, Mode.BURST)
    return bench.run(level, cmd.M, cmd.N, cmd.K, cmd.repeats, cmd.warmup, on_repeat,
                     params, settle_s=cmd.settle_s,
                     on_settle=lambda left: on_phase("settle", 0, left),
                     on_compile=lambda: on_phase("compile", 0, None),
                     energy_s=cmd.energy_s)


def measure_sustained(emit: Emit, bench: Bench, level: Level, cmd: commands.RunCommand,
                      where: dict[str, Any], params: dict[str, int] | None
                      ) -> dict[str, Any]:
    """A sustained run of the level alone: its events, then its result."""
    config = cmd.sustained
    emit({"type": "run_start", **where, "dtype": registry.DTYPE_OF[level.precision],
          "precision": str(level.precision), "mode": str(Mode.SUSTAINED),
          **config.fields(), "repeats": config.trials, "warmup": cmd.warmup})

    on_phase = phase_emitter(emit, where, Mode.SUSTAINED)

    def on_trial(trial: Trial) -> None:  # a trial is a sustained run's repeat
        emit({"type": "repeat", **where, "mode": str(Mode.SUSTAINED), **trial.as_event()})

    return run_sustained(bench, level, cmd.M, cmd.N, cmd.K, config, cmd.warmup,
                         params, on_phase, on_trial)

"""The build events a runner says: after the first run of each (level, variant, params),
its sources, resources, occupancy and SASS (toolchain/build_event.py; a Triton level's
from triton_launch), once each, a failure an ``info`` event that never costs the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ladder.level import Toolchain
from ..ladder.registry import Kind, Level
from ..protocol import commands
from ..toolchain import build_event
from . import triton_launch
from .run_events import phase_emitter

BuildKey = tuple[str, str, tuple[tuple[str, int], ...]]  # level, variant, params


class BuildsSaid:
    def __init__(self, emit: Callable[[dict[str, Any]], None]):
        self.emit = emit
        self.built: set[BuildKey] = set()

    def forget(self, level_id: str) -> None:
        """A level built anew (a user's kernel sent again): its builds are said again."""
        self.built = {key for key in self.built if key[0] != level_id}

    def say(self, level: Level, variant: str | None, params: dict[str, int] | None,
            cmd: commands.RunCommand) -> None:
        """After the first run of a (level, variant, params): its build event (sources,
        resources, occupancy, SASS). ``params``: the run's (the level's own, or those it
        picked for the shape). Never costs the run: a failure is an info event. Where
        NVRTC compiles the level again for its SASS, a ``phase`` ``compile`` says so."""
        cid = cmd.id
        params = dict(params or level.params)
        key = (level.id, variant or "", tuple(params.items()))
        if level.kind is not Kind.LEVEL or variant is None or key in self.built:
            return
        self.built.add(key)

        phase = phase_emitter(self.emit, {**cmd.where(), "level": level.id}, cmd.mode)

        def on_compile() -> None:  # NVRTC again, for the SASS: the run is not done yet
            phase("compile", 0, None)

        try:
            event = (triton_launch.build_event_of(level) if level.toolchain is Toolchain.TRITON
                     else build_event.gpu_event(level, variant, params, on_compile=on_compile))
        except Exception as exc:
            self.emit({"type": "info", "id": cid,
                       "message": f"no build event for {level.id} ({variant}): {exc!r}"})
            return
        self.emit({**event, "id": cid})

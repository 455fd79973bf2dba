"""What the session store keeps per GPU (a session of several GPUs, protocol version 4):
its run stream, telemetry, run windows and latest results. Free of Qt."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...kernels.ladder import Shape
from ...kernels.protocol import DeviceEntry, Mode, RunStart
from ...kernels.results import Result
from .repeat_stream import RepeatStream
from .telemetry import RunWindows, TelemetryBuffer


@dataclass(slots=True)
class DeviceState:
    """One GPU's part of a session."""

    stream: RepeatStream = field(default_factory=RepeatStream)
    telemetry: TelemetryBuffer = field(default_factory=TelemetryBuffer)
    runs: RunWindows = field(default_factory=RunWindows)
    # sustained runs' trial windows: a `phase` "window" event opens one, the trial's
    # `repeat` (sent as it finishes) closes it; until then it reaches `seconds` ahead
    trial_spans: list[tuple[float, float]] = field(default_factory=list)
    open_trial: tuple[Any, int] | None = None  # (run id, index in trial_spans)
    running: RunStart | None = None  # the run_start of the run in progress
    # what the run in progress does now, where a `phase` event said ("compile", "settle",
    # "cooldown", "window"); None: measuring, or not said
    doing: str | None = None
    latest: dict[str, Result] = field(default_factory=dict)  # burst results by level
    # (level, shape, mode) -> the latest result
    latest_at: dict[tuple[str, Shape, Mode], Result] = field(default_factory=dict)
    shape_levels: dict[Shape, set[str]] = field(default_factory=dict)  # ladder levels
    # the repeats of each (level, shape, mode)'s latest run, and which key a run has (by
    # Run.run_key: its id and level, as a compared level's reference echoes its id)
    streams: dict[tuple[str, Shape | None, Mode], RepeatStream] = field(default_factory=dict)
    run_keys: dict[tuple[str, str], tuple[str, Shape | None, Mode]] = field(default_factory=dict)


def device_label(entry: DeviceEntry) -> str:
    """How a GPU of the session is named in the app: "GPU 1 (NVIDIA H200)", with its host
    where it is another; the header's own words, as plain text."""
    index = entry.gpu if entry.gpu is not None else entry.id
    text = f"GPU {index}"
    if entry.name:
        text += f" ({entry.name})"
    if entry.host:
        text += f" on {entry.host}"
    return text[:120]

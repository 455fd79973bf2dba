"""The run form's fields, checked without Qt: each value, or why it is refused.

What a run is and how runs are queued lives in ``kernels.plan`` and ``kernels.session``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ...kernels import protocol as rec
from ...kernels.drive import runnable_here
from ...kernels.ladder import Shape
from ...kernels.protocol import (
    DEFAULT_DISTRIBUTION,
    DEFAULT_REPEATS,
    MAX_DIM,
    MAX_REPEATS,
    SUSTAINED_FIELDS,
    Distribution,
    Mode,
    RunMode,
    RunRequest,
    ladder_requests,
    sweep_requests,
)

# The energy window of the app's burst runs, GPU seconds. The runner's default (1 s, which
# `gemmscope bench` and `record` keep) would hold a warm 24-run ladder at 2048³ over 30 s
# on energy windows alone; half a second keeps it under (issue 40 item 3), with the idle
# ends weighing up to about 3% instead of 1.5% (docs/energy.md). Every result says its
# window (energy_window.asked_s).
APP_ENERGY_S = 0.5


@dataclass(frozen=True, slots=True)
class RunForm:
    """What the run form says, every field read once: the shape and repeats of the runs
    a click asks for, and how they are measured (``RunRequest.with_mode``). The form's
    runs are made here, each a :class:`RunRequest` carrying the form's shape."""

    shape: Shape
    repeats: int = DEFAULT_REPEATS
    mode: RunMode = field(default_factory=RunMode)
    operands: Distribution = DEFAULT_DISTRIBUTION  # what A and B are drawn from

    def request(self, level: str) -> RunRequest:
        """One level's run at the form's shape and repeats (measured as the form says
        once :meth:`runs` sends it)."""
        return RunRequest(level, self.shape, self.repeats)

    def ladder(self, level_ids: Iterable[str]) -> list[RunRequest]:
        return ladder_requests(level_ids, self.shape, self.repeats)

    def sweep(self, level: str) -> list[RunRequest]:
        """The level at the sweep's square sizes (the form's repeats; its shape is not
        used)."""
        return sweep_requests(level, self.repeats)

    def runs(self, requests: list[RunRequest], header: rec.Session | None
             ) -> tuple[list[RunRequest], list[str]]:
        """The requests to send, measured as the form says, without the levels a GPU of
        the session cannot run (by the archs the header's catalog claims); and a line
        for each level left out ("skipped: wgmma_tma needs sm_90a only ...")."""
        skipped: list[str] = []
        kept = runnable_here(header, requests, lambda line: skipped.append(line.strip()))
        return [self._measured(r) for r in kept], skipped

    def _measured(self, request: RunRequest) -> RunRequest:
        run = request.with_mode(self.mode)
        if run.mode == Mode.BURST and run.energy_s is None:
            run = replace(run, energy_s=APP_ENERGY_S)
        # the default distribution goes unsaid, as the CLI leaves it: the runner draws it
        if self.operands is not DEFAULT_DISTRIBUTION:
            run = replace(run, operands=self.operands)
        return run


def parse_int_field(name: str, text: str, lo: int, hi: int) -> tuple[int | None, str]:
    """(value, "") when ``text`` is a whole number in [lo, hi], else (None, why not)."""
    s = text.strip().replace("_", "").replace(",", "")
    if not s:
        return None, f"{name} is empty"
    try:
        value = int(s)
    except ValueError:
        return None, f"{name} must be a whole number, not {text.strip()!r}"
    if value < lo:
        return None, f"{name} must be at least {lo}"
    if value > hi:
        return None, f"{name} must be at most {hi:,}"
    return value, ""


def parse_dim(name: str, text: str) -> tuple[int | None, str]:
    return parse_int_field(name, text, 1, MAX_DIM)


def parse_repeats(text: str) -> tuple[int | None, str]:
    return parse_int_field("repeats", text, 1, MAX_REPEATS)


def parse_sustained(name: str, text: str) -> tuple[float | int | None, str]:
    """A sustained run's ``window_s``, ``trials`` or ``cooldown_s`` within the limits the
    runner checks (``kernels.commands.SUSTAINED_FIELDS``); trials is a whole number."""
    _default, lo, hi = SUSTAINED_FIELDS[name]
    if name == "trials":
        return parse_int_field(name, text, int(lo), int(hi))
    s = text.strip()
    if not s:
        return None, f"{name} is empty"
    try:
        value = float(s)
    except ValueError:
        return None, f"{name} must be a number of seconds, not {s!r}"
    if not lo <= value <= hi:  # (NaN fails this too)
        return None, f"{name} must be from {lo:g} to {hi:g} s"
    return value, ""


def sustained_default(name: str) -> str:
    """The field's default as the form shows it (3, not 3.0)."""
    return f"{SUSTAINED_FIELDS[name][0]:g}"

"""The event protocol between the runner and its readers (live app, replay, report).

One JSON object per line. Every event has ``type`` and ``t`` (seconds since the session
started). Commands go the other way, one JSON object per line with ``cmd``. The full
description is docs/protocol.md; this module is the one place that validates both, so
the rest of the code can trust what it gets ("parse at the edge").
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

# 2: a restarted runner's header is recorded as a `restart` event on the session's time
# axis (version 1 files wrote a second `session` header with `t` from zero again)
# 3: results say their `mode` (burst or sustained; older results read as burst), and a
# burst result's energy comes from the energy counter over a window of flush + launch
# pairs (J per GEMM including one L2 flush), no longer from power samples
PROTOCOL_VERSION = 3

# the longest line a reader takes: a runner's or a recording's line beyond it is refused
# (whole events are small; the largest, a build event with sources and SASS, stays far
# below this)
MAX_LINE_BYTES = 8 * 1024 * 1024

_NUM = (int, float)
_OPT_NUM = (int, float, type(None))
_STR = (str,)
_INT = (int,)


class ErrorKind(StrEnum):
    BAD_INPUT = "bad_input"
    UNKNOWN_LEVEL = "unknown_level"
    REFUSED = "refused"  # the level cannot run this shape (says why)
    UNSUPPORTED = "unsupported"  # the device cannot run the level (e.g. needs sm_90a)
    OUT_OF_MEMORY = "out_of_memory"
    COMPILE = "compile"
    LAUNCH = "launch"
    VERIFY = "verify"
    TIMEOUT = "timeout"
    RUNNER_CRASH = "runner_crash"
    NO_GPU = "no_gpu"
    INTERNAL = "internal"


# type -> {field: allowed python types}; only the fields every reader relies on.
REQUIRED: dict[str, dict[str, tuple[type, ...]]] = {
    "session": {"protocol": _INT, "created": _STR, "levels": (dict,)},
    "ready": {},
    "run_start": {"level": _STR, "M": _INT, "N": _INT, "K": _INT, "repeats": _INT},
    "repeat": {"level": _STR, "M": _INT, "N": _INT, "K": _INT, "i": _INT, "ms": _NUM,
               "tflops": _NUM},
    "result": {"level": _STR, "M": _INT, "N": _INT, "K": _INT, "dtype": _STR,
               "median_ms": _NUM, "tflops": _NUM, "verified": (bool,), "rel_err": _OPT_NUM,
               "repeats": _INT},
    "error": {"kind": _STR, "message": _STR},
    "telemetry": {},
    "counters": {"level": _STR, "M": _INT, "N": _INT, "K": _INT, "tool": _STR,
                 "metrics": (dict,)},
    "phase": {"phase": _STR, "trial": _INT},
    "build": {"level": _STR, "variant": _STR},
    "info": {"message": _STR},
    "restart": {"restarts": _INT},
    "done": {},
    "levels": {"levels": (list,)},
    "pong": {},
    "bye": {},
}


class ProtocolError(ValueError):
    """A line that cannot be read; the message names the line."""

    def __init__(self, message: str, line: int | None = None, source: str | None = None):
        where = ""
        if source is not None:
            where += f"{source}"
        if line is not None:
            where += f"{':' if where else 'line '}{line}"
        super().__init__(f"{where}: {message}" if where else message)
        self.line = line
        self.source = source


def dumps(event: dict[str, Any]) -> str:
    """One event as one line of JSON (NaN and infinity become null)."""
    return json.dumps(_finite(event), separators=(",", ":"), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def validate_event(obj: Any) -> dict[str, Any]:
    """Check one decoded event; returns it or raises ProtocolError (without a line)."""
    if not isinstance(obj, dict):
        raise ProtocolError("an event must be a JSON object")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolError('an event needs a string "type"')
    t = obj.get("t")
    if not isinstance(t, _NUM) or isinstance(t, bool):
        raise ProtocolError(f'{kind} event needs a number "t"')
    for name, types in REQUIRED.get(kind, {}).items():
        if name not in obj:
            raise ProtocolError(f'{kind} event lacks "{name}"')
        value = obj[name]
        if isinstance(value, bool) and bool not in types:
            raise ProtocolError(f'{kind} event: "{name}" must not be a boolean')
        if not isinstance(value, types):
            want = " or ".join(sorted({t.__name__ for t in types}))
            raise ProtocolError(f'{kind} event: "{name}" must be {want}, not {value!r}')
    if kind == "counters":
        _check_metrics(obj["metrics"])
    if kind in MODE_EVENTS:
        _check_mode(obj)
    if kind == "build":
        _check_build(obj)
    if kind == "session" and obj["protocol"] > PROTOCOL_VERSION:
        raise ProtocolError(
            f"protocol {obj['protocol']} is newer than this reader ({PROTOCOL_VERSION}); "
            "update gemmscope to read it")
    return obj


class Mode(StrEnum):
    """How a run is measured (docs/energy.md)."""

    BURST = "burst"  # timed repeats with an L2 flush before each; energy over flush+launch
    SUSTAINED = "sustained"  # back to back for a window, in trials with a cool-down


MODE_EVENTS = ("result", "run_start", "repeat")


def _check_mode(obj: dict[str, Any]) -> None:
    """A result without ``mode`` (files before version 3) is a burst result."""
    mode = obj.setdefault("mode", str(Mode.BURST))
    if mode not in tuple(Mode):
        raise ProtocolError(f'{obj["type"]} event: "mode" must be one of '
                            f'{", ".join(Mode)}, not {mode!r}')


def _check_metrics(metrics: dict[Any, Any]) -> None:
    """A counters event's metrics: names to numbers, or null where the tool had none."""
    for name, value in metrics.items():
        if not isinstance(name, str) or isinstance(value, bool) or not isinstance(
                value, _OPT_NUM):
            raise ProtocolError(f'counters event: metric {name!r} must be a number or null, '
                                f'not {value!r}')


def _check_build(event: dict[str, Any]) -> None:
    """A build event's sources (paths to text) and SASS (text), each null or absent where
    it could not be had."""
    sources = event.get("sources")
    if sources is not None and not (isinstance(sources, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in sources.items())):
        raise ProtocolError('build event: "sources" must map file paths to their text')
    for name in ("sass", "sass_reason"):
        if event.get(name) is not None and not isinstance(event[name], str):
            raise ProtocolError(f'build event: "{name}" must be text or null')


def parse_line(line: str, lineno: int | None = None, source: str | None = None) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON ({exc.msg} at column {exc.colno})", lineno, source) from None
    try:
        return validate_event(obj)
    except ProtocolError as exc:
        raise ProtocolError(str(exc), lineno, source) from None


def iter_events(lines: Iterable[str], source: str | None = None) -> Iterator[dict[str, Any]]:
    """Validated events from session-file lines; the first must be the session header.

    A truncated last line (a recording cut off by a crash) is not an error when it is the
    final line: everything before it is still returned.
    """
    pending: tuple[int, str, ProtocolError] | None = None
    first = True
    timeline = Timeline()
    for lineno, raw in enumerate(lines, start=1):
        if pending is not None:
            raise pending[2]
        line = raw.strip()
        if not line:
            continue
        try:
            event = parse_line(line, lineno, source)
        except ProtocolError as exc:
            if not raw.endswith("\n"):
                pending = (lineno, line, exc)
                continue
            raise
        if first:
            if event["type"] != "session":
                raise ProtocolError(
                    f'the first event must be "session", not "{event["type"]}"', lineno, source)
            first = False
        yield timeline.place(event)
    if first and pending is None:
        raise ProtocolError("no session header: the file is empty", None, source)


class Timeline:
    """Puts events on the session's time axis: the one place where runner restarts are
    joined.

    Each runner counts ``t`` from its own start. The first ``session`` header anchors the
    axis; a later one (a runner restarted in the same session, or a version 1 file) becomes
    a ``restart`` event carrying that header as ``runner``, and the new runner's events are
    shifted to go on from there. Live, ``now`` is the owner's clock when the event arrived,
    so every event is placed on that clock; reading a file, no ``now`` is given and a
    restart goes on from the latest time seen.
    """

    def __init__(self) -> None:
        self.offset_s = 0.0
        self.last_s = 0.0
        self.header: dict[str, Any] | None = None
        self.restarts = 0

    def place(self, event: dict[str, Any], now: float | None = None) -> dict[str, Any]:
        t = float(event["t"])
        if event["type"] == "session":
            if self.header is None:
                self.header = event
                if now is not None:
                    self.offset_s = now - t
            else:
                self.restarts += 1
                # never before what the previous runner said: one axis, in order
                self.offset_s = max(now - t, self.last_s - t) if now is not None \
                    else self.last_s - t
                runner = {k: v for k, v in event.items() if k not in ("type", "t")}
                event = {"type": "restart", "t": t, "restarts": self.restarts,
                         "runner": runner}
        placed = dict(event)
        placed["t"] = round(t + self.offset_s, 6)
        self.last_s = max(self.last_s, placed["t"])
        return placed


@dataclass(frozen=True, slots=True)
class Session:
    """A recording read whole: its header and every event (header included)."""

    path: str
    header: dict[str, Any]
    events: list[dict[str, Any]]

    @property
    def results(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "result"]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "error"]

    @property
    def counters(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "counters"]


def read_session(path: str | Path) -> Session:
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as fh:
            events = list(iter_events(fh, source=str(path)))
    except OSError as exc:
        raise ProtocolError(f"cannot open: {exc.strerror}", None, str(path)) from None
    except UnicodeDecodeError:
        raise ProtocolError("not a text file", None, str(path)) from None
    return Session(str(path), events[0], events)


# ---------------------------------------------------------------- commands (stdin)

COMMANDS = ("run", "levels", "ping", "telemetry", "quit")
MAX_DIM = 1 << 20
MAX_REPEATS = 10_000
MAX_WARMUP = 1000
MAX_TELEMETRY_HZ = 200.0


def parse_command(line: str) -> dict[str, Any]:
    """Decode and check one command line; raises ProtocolError with a readable reason."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"command is not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ProtocolError("a command must be a JSON object")
    cmd = obj.get("cmd")
    if cmd not in COMMANDS:
        raise ProtocolError(f"unknown command {cmd!r}; known: {', '.join(COMMANDS)}")
    if cmd == "run":
        if not isinstance(obj.get("level"), str):
            raise ProtocolError('run needs a string "level"')
        for name in ("M", "N", "K"):
            check_size(name, obj.get(name))
        for name, lo, hi in (("repeats", 1, MAX_REPEATS), ("warmup", 0, MAX_WARMUP)):
            if name in obj:
                v = obj[name]
                if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                    raise ProtocolError(f"{name} must be an integer from {lo} to {hi}, not {v!r}")
        check_mode_fields(obj)
        params = obj.get("params")
        if params is not None and not (
                isinstance(params, dict) and all(isinstance(k, str) and isinstance(v, int)
                                                 and not isinstance(v, bool)
                                                 for k, v in params.items())):
            raise ProtocolError("params must map template parameter names to integers")
    if cmd == "telemetry":
        check_telemetry_hz(obj.get("hz"))
    return obj


# sustained runs (docs/energy.md): field -> (default, least, most)
SUSTAINED_FIELDS: dict[str, tuple[float, float, float]] = {
    "window_s": (3.0, 1.0, 30.0),  # below 1 s the counter's steps weigh too much
    "trials": (3, 1, 10),
    "cooldown_s": (5.0, 0.0, 120.0),
}


def check_mode_fields(obj: dict[str, Any]) -> None:
    """A run command's ``mode`` and, for sustained runs only, its window, trials and
    cool-down, each within SUSTAINED_FIELDS."""
    mode = obj.get("mode", str(Mode.BURST))
    if mode not in tuple(Mode):
        raise ProtocolError(f"mode must be one of {', '.join(Mode)}, not {mode!r}")
    for name, (_default, lo, hi) in SUSTAINED_FIELDS.items():
        if name not in obj:
            continue
        if mode != Mode.SUSTAINED:
            raise ProtocolError(f"{name} applies to sustained runs only (mode is {mode})")
        v = obj[name]
        whole = name == "trials"
        if isinstance(v, bool) or not isinstance(v, int if whole else _NUM) or \
                not lo <= v <= hi:
            kind = "an integer" if whole else "a number of seconds"
            raise ProtocolError(f"{name} must be {kind} from {lo:g} to {hi:g}, not {v!r}")


def check_telemetry_hz(hz: Any) -> float:
    """The NVML sampling rate: 0 (off) or from 1 to MAX_TELEMETRY_HZ samples a second."""
    if not isinstance(hz, _NUM) or isinstance(hz, bool) or not (
            hz == 0 or 1 <= hz <= MAX_TELEMETRY_HZ):
        raise ProtocolError(f"telemetry hz must be 0 (off) or from 1 to "
                            f"{MAX_TELEMETRY_HZ:g}, not {hz!r}")
    return float(hz)




def check_size(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(f"{name} must be a whole number, not {value!r}")
    if value < 1:
        raise ProtocolError(f"{name} must be at least 1, not {value}")
    if value > MAX_DIM:
        raise ProtocolError(f"{name}={value} is larger than {MAX_DIM}")
    return value

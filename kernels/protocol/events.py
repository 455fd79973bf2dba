"""The event protocol between the runner and its readers (live app, replay, report).

One JSON object per line. Every event has ``type`` and ``t`` (seconds since the session
started). Commands go the other way, one JSON object per line with ``cmd``. The full
description is docs/protocol.md; this module is the one place that validates both, so
the rest of the code can trust what it gets ("parse at the edge").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from enum import StrEnum
from itertools import accumulate
from typing import IO, Any

from . import ceilings, source_counters

# 2: a restarted runner's header is recorded as a `restart` event on the session's time
# axis (version 1 files wrote a second `session` header with `t` from zero again)
# 3: results say their `mode` (burst or sustained; older results read as burst), and a
# burst result's energy comes from the energy counter over a window of flush + launch
# pairs (J per GEMM including one L2 flush), no longer from power samples
# 4: several GPUs in one session: every event but the header may say its `device` (an
# index into the header's `devices`; absent: device 0, as in every older file) and the
# `host` it ran on; the header lists the GPUs in `devices`, a GPU that joins later is a
# `device` event
PROTOCOL_VERSION = 4

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
    WORKER_LOST = "worker_lost"  # a cluster worker died with the run in flight


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
    "ceilings": {"peak_tflops": (dict,)},
    "source_counters": {"level": _STR, "M": _INT, "N": _INT, "K": _INT, "tool": _STR,
                        "status": _STR},
    "info": {"message": _STR},
    "restart": {"restarts": _INT},
    "phase": {"phase": _STR, "trial": _INT},
    "build": {"level": _STR, "variant": _STR},
    "done": {},
    "levels": {"levels": (list,)},
    "device": {"device": _INT},
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
        self.reason = message


class NewerProtocol(ProtocolError):
    """A session header of a protocol this reader does not know: the file is refused."""


# Limits at the edge, checked before json builds anything from a line: Python's json
# raises RecursionError on deep nesting and ValueError on integers over 4300 digits,
# and a line of megabytes or a bignum is no event. The header of a recording is ~16 KB
# and a command a few hundred bytes, so the limits are far from real data.
# the longest line a reader takes (the largest event, a build event with sources and
# SASS, stays far below it)
MAX_EVENT_BYTES = 8 << 20
MAX_LINE_BYTES = MAX_EVENT_BYTES
MAX_COMMAND_BYTES = 64 << 10
MAX_DEPTH = 32  # nested arrays and objects
MAX_INT_DIGITS = 100  # Python's int() refuses over 4300; no count or size comes near 100

# a JSON string, or what is left of the line after an unterminated one; it always
# matches from a quote, so a line full of quotes costs one pass, never one per quote
_STRING = re.compile(r'"[^"\\]*(?:\\(?:.|$)[^"\\]*)*(?:"|$)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def too_deep(text: str) -> bool:
    """Whether arrays and objects in a JSON text nest deeper than MAX_DEPTH (brackets in
    strings not counted), found without parsing it; cheap when brackets are few."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(_STEP[c] for c in brackets), default=0) > MAX_DEPTH


def _parse_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise ProtocolError(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _parse_float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None  # 1e400 overflows: not a measurement


def _parse_constant(name: str) -> None:
    return None  # NaN, Infinity, -Infinity: never written, read as null


# one decoder, made once (making one per line cost more than the number checks)
_decode = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float,
                           parse_constant=_parse_constant).decode


def loads(line: str | bytes, max_bytes: int = MAX_EVENT_BYTES, what: str = "") -> Any:
    """One JSON text within the limits above; non-finite numbers become None.

    Raises ProtocolError (without a line number) for text that is longer than
    ``max_bytes`` (its newline not counted), not UTF-8, nested too deep, holds an
    integer too long, or is not JSON. ``what`` begins the message ("command is ")."""
    size = len(line) - (line[-1:] in (b"\n", "\n"))
    if isinstance(line, str) and max_bytes < 4 * size:  # up to 4 bytes a character
        size = len(line.encode("utf-8", "surrogatepass")) - line.endswith("\n")
    if size > max_bytes:
        raise ProtocolError(f"{what}longer than {max_bytes} bytes")
    if isinstance(line, bytes | bytearray):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"{what}not UTF-8 text (byte {line[exc.start]:#04x} at "
                                f"column {exc.start + 1})") from None
    if too_deep(line):
        raise ProtocolError(f"{what}nested deeper than {MAX_DEPTH} levels")
    try:
        return _decode(line)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"{what}not JSON ({exc.msg} at column {exc.colno})") from None


def read_lines(stream: IO[bytes], max_bytes: int = MAX_EVENT_BYTES) -> Iterator[bytes]:
    """The lines of a byte stream, newline kept; of a line longer than ``max_bytes`` only
    its first ``max_bytes + 1`` bytes (and its newline) are kept, so that no line can
    fill the memory: whoever parses it refuses it as too long."""
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        if len(line) > max_bytes and not line.endswith(b"\n"):
            rest = line
            while rest and not rest.endswith(b"\n"):
                rest = stream.readline(1 << 16)
            if rest:
                line += b"\n"
        yield line


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


def _str_list(value: Any) -> list[str] | None:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None


def _int_list(value: Any) -> list[int] | None:
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]


def _int_map(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    return {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def _num_map(value: Any) -> dict[str, float | int | None] | None:
    if not isinstance(value, dict):
        return None
    return {k: (v if isinstance(v, _NUM) and not isinstance(v, bool) else None)
            for k, v in value.items()}


Rule = tuple[type, ...] | Callable[[Any], Any]


def _clean(obj: dict[str, Any], rules: dict[str, Rule]) -> None:
    """Optional fields: a value of another type than the rule's reads as null (absent),
    so that no reader meets a string where it expects a number."""
    for name, rule in rules.items():
        value = obj.get(name)
        if value is None:
            continue
        if not isinstance(rule, tuple):
            obj[name] = rule(value)
        elif type(value) not in rule:  # exact types, as json decodes them: a bool is no int
            obj[name] = None


def _device(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    _clean(value, DEVICE_FIELDS)
    return value


def _catalog(value: Any) -> list[dict[str, Any]] | None:
    """Catalog entries with a string id; their fields cleaned like an event's."""
    if not isinstance(value, list):
        return None
    entries = [e for e in value if isinstance(e, dict) and isinstance(e.get("id"), str)]
    for entry in entries:
        _clean(entry, CATALOG_FIELDS)
    return entries


def _source_map(value: Any) -> dict[str, Any]:
    return {k: v for k, v in value.items()
            if isinstance(v, dict) and all(isinstance(v.get(f), str) for f in ("source", "sha256"))}


def _index(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


_SHAPE: dict[str, Rule] = {"level": _STR, "M": _INT, "N": _INT, "K": _INT}
# where an event ran (version 4), on every event but the header: absent means device 0
PLACE_FIELDS: dict[str, Rule] = {"device": _index, "host": _STR, "worker": _STR}
DEVICE_FIELDS: dict[str, Rule] = {
    "name": _STR, "sm_count": _INT, "cc": _STR, "arch": _STR, "sm_clock_max_mhz": _NUM,
    "mem_clock_max_mhz": _NUM, "memory_gib": _NUM, "l2_bytes": _INT, "driver": _STR,
    "cuda_runtime": _STR, "cupy": _STR, "peak_tflops": _num_map, "limits": _int_map,
    "uuid": _STR, "pci_bus_id": _STR, "mem_bandwidth_gbs": _NUM, "peak_clock_mhz": _NUM,
    "peak_tensor_clock_mhz": _NUM, "peak_source": _STR, "gpu_table_key": _STR}
CATALOG_FIELDS: dict[str, Rule] = {
    "title": _STR, "adds": _STR, "precision": _STR, "params": _int_map, "block": _int_list,
    "tile": _int_list, "follows": _STR, "notes": _STR, "kind": _STR, "order": _INT,
    "source": _STR, "arch": _STR, "b_layout": _STR, "persistent": (bool,),
    "k_multiple": _INT, "archs": _str_list, "arch_need": _STR,
    "output_format": _STR}
# one GPU of a session (an entry of the header's `devices`, or a `device` event): the
# device fields as the runner said them, and where it is
DEVICE_ENTRY_FIELDS: dict[str, Rule] = {
    **DEVICE_FIELDS, "gpu": _STR, "host": _STR,
    "worker": _STR, "telemetry": (dict,), "no_gpu_reason": _STR}


def _device_entries(value: Any) -> list[dict[str, Any]] | None:
    """The header's `devices`: entries with an index `id`; fields cleaned as a device's."""
    if not isinstance(value, list):
        return None
    entries = [e for e in value if isinstance(e, dict) and _index(e.get("id")) is not None]
    for entry in entries:
        _clean(entry, DEVICE_ENTRY_FIELDS)
    return entries


# type -> {optional field: its type, or a function that cleans it}; see _clean
OPTIONAL: dict[str, dict[str, Rule]] = {
    "session": {"device": _device, "catalog": _catalog, "gemmscope": (dict,),
                "telemetry": (dict,), "no_gpu_reason": _STR, "synthetic": (bool,),
                "remote": _STR, "devices": _device_entries, "gpu": _STR},
    "device": DEVICE_ENTRY_FIELDS,
    "run_start": {"dtype": _STR, "precision": _STR, "warmup": _INT},
    "result": {
        "precision": _STR, "min_ms": _NUM, "max_ms": _NUM, "q1_ms": _NUM, "q3_ms": _NUM,
        "tol": _NUM, "deepgemm_diff": _NUM, "warmup": _INT, "reference": _STR,
        "reference_tflops": _NUM, "pct_of_reference": _NUM, "peak_tflops": _NUM,
        "pct_of_peak": _NUM, "sm_clock_mhz_avg": _NUM, "sm_clock_mhz_min": _NUM,
        "avg_power_w": _NUM, "power_source": _STR, "energy_j": _NUM, "gflop_per_j": _NUM,
        "throttled": _str_list, "variant": _STR, "regs": _INT, "smem_bytes": _INT,
        "threads": _INT, "params": _int_map, "nan": (bool,)},
    "error": _SHAPE,
    "info": _SHAPE,
    "telemetry": {**{name: _NUM for name in (
        "sm_clock_mhz", "mem_clock_mhz", "power_w", "power_limit_w", "energy_j", "temp_c",
        "gpu_util_pct", "sm_occupancy_pct", "sm_util_pct", "tensor_util_pct",
        "dram_bw_util_pct", "fp32_util_pct")}, "power_kind": _STR, "reasons": _str_list},
    "counters": {"kernel": _STR, "params": _int_map, "command": _str_list, "launch": _STR},
}


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


def validate_event(obj: Any) -> dict[str, Any]:
    """Check one decoded event; returns it or raises ProtocolError (without a line).

    Optional fields of a wrong type are set to null in place (docs/protocol.md, reader
    rules)."""
    if not isinstance(obj, dict):
        raise ProtocolError("an event must be a JSON object")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolError('an event needs a string "type"')
    t = obj.get("t")
    if not isinstance(t, _NUM) or isinstance(t, bool):
        raise ProtocolError(f'{kind} event needs a number "t"')
    if not -MAX_SESSION_S <= t <= MAX_SESSION_S:  # 1e300: no session lasts that long
        raise ProtocolError(f'{kind} event: "t" = {t:.6g} s is not a session time (at '
                            f'most {MAX_SESSION_S:g} s either side of its start)')
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
    if kind == source_counters.TYPE and (why := source_counters.check(obj)) is not None:
        raise ProtocolError(f"{kind} event: {why}")
    if kind == ceilings.TYPE and (why := ceilings.check(obj)) is not None:
        raise ProtocolError(f"{kind} event: {why}")
    if kind == "session":
        if obj["protocol"] > PROTOCOL_VERSION:
            raise NewerProtocol(
                f"protocol {obj['protocol']} is newer than this reader ({PROTOCOL_VERSION}); "
                "update gemmscope to read it")
        obj["levels"] = _source_map(obj["levels"])
    if kind == "device":
        if _index(obj["device"]) is None:
            raise ProtocolError(f'device event: "device" must be an index (0, 1, ...), not '
                                f'{obj["device"]!r}')
    elif kind != "session":
        _clean(obj, PLACE_FIELDS)
    _clean(obj, OPTIONAL.get(kind, {}))
    return obj


def device_of(event: dict[str, Any]) -> int:
    """The index of the GPU an event belongs to (0 where it says none: older files, and
    sessions of one GPU)."""
    index = event.get("device")
    return index if type(index) is int and index >= 0 else 0


def session_devices(header: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The GPUs of a session: the header's ``devices`` (version 4, several GPUs), else
    one entry, id 0, made of its ``device`` (older files; ``[]`` without a GPU)."""
    if header is None:
        return []
    listed = header.get("devices")
    if isinstance(listed, list) and listed:
        return listed
    device = header.get("device")
    if not isinstance(device, dict):
        return []
    return [{"id": 0, **device, "host": header.get("remote"),
             "telemetry": header.get("telemetry")}]


def parse_line(line: str | bytes, lineno: int | None = None,
               source: str | None = None) -> dict[str, Any]:
    try:
        return validate_event(loads(line, MAX_EVENT_BYTES))
    except ProtocolError as exc:
        raise type(exc)(exc.reason, lineno, source) from None


MAX_SESSION_S = 1e8  # about three years: a time beyond is not a session's


class Timeline:
    """Puts events on the session's time axis: the one place where runner restarts are
    joined.

    Each runner counts ``t`` from its own header (t = 0, the moment it is written). The
    first ``session`` header anchors the axis; a later one (a runner restarted in the same
    session, or a version 1 file) becomes a ``restart`` event carrying that header as
    ``runner``, and the new runner's events are shifted to go on from there. Live, ``now``
    is the owner's clock when the event arrived, so every event is placed on that clock;
    reading a file, no ``now`` is given and a restart goes on from the latest time seen.
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
        if not -MAX_SESSION_S <= placed["t"] <= MAX_SESSION_S:  # restarts add up
            raise ProtocolError(f'{event["type"]} event: "t" = {t:.6g} s puts it '
                                f'{placed["t"]:.6g} s from the session\'s start, past '
                                f'{MAX_SESSION_S:g} s')
        self.last_s = max(self.last_s, placed["t"])
        return placed

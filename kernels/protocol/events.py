"""The wire between the runner and its readers (live app, replay, report): its version,
its limits, the bounded JSON decoder, the writer, and the kinds and modes it names.

One JSON object per line. Every event has ``type`` and ``t`` (seconds since the session
started). Commands go the other way, one JSON object per line with ``cmd``. The full
description is docs/protocol.md. The runner needs only this module and ``commands`` (no
msgspec); readers decode events into their records with ``decoding``, "parse at the
edge".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from enum import StrEnum
from itertools import accumulate
from typing import IO, Any

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
MAX_SESSION_S = 1e8  # about three years: a time beyond is not a session's
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


# an NVML sample's numbers (MHz, W, °C, J, %; null where the GPU has none): the one list
# the sampler writes, the records read and the telemetry view draws; the GPM metrics last
TELEMETRY_FIELDS = ("sm_clock_mhz", "mem_clock_mhz", "power_w", "power_limit_w", "temp_c",
                    "gpu_util_pct", "energy_j", "sm_occupancy_pct", "sm_util_pct",
                    "tensor_util_pct", "dram_bw_util_pct", "fp32_util_pct")
GPM_FIELDS = TELEMETRY_FIELDS[7:]


class Mode(StrEnum):
    """How a run is measured (docs/energy.md)."""

    # timed repeats with an L2 flush before each; energy over the launches back to back
    # (energy_window.pattern "launch"; "flush+launch" in results recorded before issue 31)
    BURST = "burst"
    SUSTAINED = "sustained"  # back to back for a window, in trials with a cool-down


class Distribution(StrEnum):
    """What a run's operands A and B are drawn from (issue 41 item 5): a run command's
    ``operands`` and every result's. The power a GEMM draws, and so the clock the power
    limiter leaves it, depends on the data; ``zeros`` is there to show that (a product of
    zeros toggles few bits), not to time a kernel by."""

    UNIFORM = "uniform"  # uniform on [-1, 1): what every run drew before the field
    NORMAL = "normal"  # standard normal, mean 0, variance 1
    PM1 = "pm1"  # -1 or +1, each with probability 1/2
    ZEROS = "zeros"  # every element 0.0 (verified only where C is exactly zero)


DEFAULT_DISTRIBUTION = Distribution.UNIFORM
# An experiment's knob, not a setting: with an integer in this variable every run of a
# runner draws the same operands (the generator seeded before each draw), so that
# repetitions of a ratio differ only in what is not the data (issue 41 item 8: the FP8
# levels' ratio at 4096^3 moved about 0.7% from run to run, each run's interval 0.3%).
# `record` refuses it: a recording's runs draw fresh values, as the truth rules say.
OPERAND_SEED = "GEMMSCOPE_OPERAND_SEED"



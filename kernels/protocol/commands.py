"""Commands the runner reads on stdin, each parsed once at the edge into its type
(docs/protocol.md, "Commands"): one JSON object per line with ``cmd``. The limits and the
defaults of a run live here too, so the CLI, the app's run form and the runner check and
fill in the same numbers.

No msgspec: the runner parses its commands with this module alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..ladder.shape import Shape
from .events import (
    DEFAULT_DISTRIBUTION,
    MAX_COMMAND_BYTES,
    Distribution,
    Mode,
    ProtocolError,
    loads,
)
from .trace_kinds import STAGE_EVERY

COMMANDS = ("run", "trace", "levels", "ping", "telemetry", "quit")
MAX_DIM = 1 << 20
MAX_REPEATS = 10_000
MAX_WARMUP = 1000
MAX_TELEMETRY_HZ = 200.0
DEFAULT_REPEATS = 20  # timed repeats of a burst run
DEFAULT_WARMUP = 3  # untimed launches before them

# a burst run's idle seconds before its warmup, so that every burst (and its reference)
# starts from the same rest of the power limiter (issue 31 item 6): default, least, most
SETTLE_S = (0.0, 0.0, 60.0)

# a burst run's energy window (docs/energy.md), GPU seconds of back-to-back launches after
# its timed repeats: default, least, most; 0 turns it off (the energy fields are null and
# say why). Below a quarter of a second the counter's 0.1 s steps weigh too much.
ENERGY_S = (1.0, 0.25, 30.0)

# a paired burst's time budget (issue 41 item 3): wall seconds for the loop of one level
# and its reference, which stops sooner once the ratio is precise: default, least, most
PAIR_BUDGET_S = (2.0, 0.1, 600.0)
# a paired burst's most pairs (the loop stops sooner by precision or its budget): default,
# least, most. Not `repeats` (a plain burst's count, default 20): with 20 as the bound the
# precision rule, which needs more pairs than that for a 0.5% interval, would never stop it
MAX_PAIRS = (200, 6, 10000)

# sustained runs (docs/energy.md): field -> (default, least, most)
SUSTAINED_FIELDS: dict[str, tuple[float, float, float]] = {
    "window_s": (3.0, 1.0, 30.0),  # below 1 s the counter's steps weigh too much
    "trials": (3, 1, 10),
    "cooldown_s": (5.0, 0.0, 120.0),
}


@dataclass(frozen=True, slots=True)
class SustainedConfig:
    """A sustained run's window, trials and cool-down (each within SUSTAINED_FIELDS)."""

    window_s: float = SUSTAINED_FIELDS["window_s"][0]
    trials: int = int(SUSTAINED_FIELDS["trials"][0])
    cooldown_s: float = SUSTAINED_FIELDS["cooldown_s"][0]

    def fields(self) -> dict[str, Any]:
        return {"window_s": self.window_s, "trials": self.trials,
                "cooldown_s": self.cooldown_s}


@dataclass(frozen=True, slots=True)
class RunMode:
    """How a run is measured: burst, or sustained (``sustained``: its settings; None:
    the runner's defaults)."""

    mode: Mode = Mode.BURST
    sustained: SustainedConfig | None = None


@dataclass(frozen=True, slots=True)
class RunCommand:
    """A ``run`` command as the runner takes it: every field checked and filled in."""

    level: str
    M: int
    N: int
    K: int
    id: Any = None
    mode: Mode = Mode.BURST
    repeats: int = DEFAULT_REPEATS
    warmup: int = DEFAULT_WARMUP
    compare: bool = True
    params: dict[str, int] | None = field(default=None, hash=False)
    sustained: SustainedConfig = field(default_factory=SustainedConfig)  # sustained runs
    settle_s: float = SETTLE_S[0]  # burst runs
    energy_s: float = ENERGY_S[0]  # burst runs
    pair_budget_s: float = PAIR_BUDGET_S[0]  # burst runs paired with their reference
    max_pairs: int = MAX_PAIRS[0]  # burst runs paired with their reference
    operands: Distribution = DEFAULT_DISTRIBUTION  # what A and B are drawn from
    # a user's kernel (docs/user-kernels.md): its object, checked by the engine
    kernel: dict[str, Any] | None = field(default=None, hash=False, compare=False)

    @property
    def shape(self) -> Shape:
        return Shape(self.M, self.N, self.K)

    def where(self) -> dict[str, Any]:
        """The fields every event of the run names it by."""
        return {"id": self.id, "level": self.level, "M": self.M, "N": self.N, "K": self.K}


# a trace command's pairs of plain and trace launches timed for its cost: default, most
TRACE_PAIRS = (20, 1000)
DEFAULT_TRACE_SIZE = 4096  # record --trace's M = N = K where --trace-size is not given


@dataclass(frozen=True, slots=True)
class TraceCommand:
    """``trace``: one launch of a level's trace build, its timeline as a ``trace`` event,
    and its cost against the plain build in ``pairs`` alternating launches (issue 46)."""

    level: str
    M: int
    N: int
    K: int
    id: Any = None
    pairs: int = TRACE_PAIRS[0]
    every: int | None = None  # K-stage sampling (trace_kinds.STAGE_EVERY); None: auto

    def where(self) -> dict[str, Any]:
        return {"id": self.id, "level": self.level, "M": self.M, "N": self.N, "K": self.K}


@dataclass(frozen=True, slots=True)
class TelemetryCommand:
    """``telemetry``: the NVML sampling rate (0: off)."""

    hz: float
    id: Any = None


@dataclass(frozen=True, slots=True)
class PlainCommand:
    """``levels``, ``ping`` or ``quit``: a name and an id."""

    cmd: str
    id: Any = None


Command = RunCommand | TraceCommand | TelemetryCommand | PlainCommand


def parse_command(line: str | bytes) -> Command:
    """Decode and check one command line into its type; raises ProtocolError with a
    readable reason."""
    obj = loads(line, MAX_COMMAND_BYTES, "command is ")
    if not isinstance(obj, dict):
        raise ProtocolError("a command must be a JSON object")
    cmd = obj.get("cmd")
    if cmd not in COMMANDS:
        raise ProtocolError(f"unknown command {cmd!r}; known: {', '.join(COMMANDS)}")
    if cmd == "run":
        return _run(obj)
    if cmd == "trace":
        return _trace(obj)
    if cmd == "telemetry":
        return TelemetryCommand(check_telemetry_hz(obj.get("hz")), obj.get("id"))
    return PlainCommand(str(cmd), obj.get("id"))


def _trace(obj: dict[str, Any]) -> TraceCommand:
    if not isinstance(obj.get("level"), str):
        raise ProtocolError('trace needs a string "level"')
    M, N, K = (check_size(name, obj.get(name)) for name in ("M", "N", "K"))
    pairs = obj.get("pairs", TRACE_PAIRS[0])
    if not _is_int(pairs) or not 0 <= pairs <= TRACE_PAIRS[1]:
        raise ProtocolError(f"pairs must be an integer from 0 to {TRACE_PAIRS[1]}, "
                            f"not {pairs!r}")
    every = obj.get("every")
    if every is not None and (not _is_int(every) or every not in STAGE_EVERY):
        raise ProtocolError(f"every must be one of {', '.join(map(str, STAGE_EVERY))} "
                            f"(or absent: the least sampling one event holds), not {every!r}")
    return TraceCommand(obj["level"], M, N, K, obj.get("id"), pairs, every)


def _run(obj: dict[str, Any]) -> RunCommand:
    if not isinstance(obj.get("level"), str):
        raise ProtocolError('run needs a string "level"')
    M, N, K = (check_size(name, obj.get(name)) for name in ("M", "N", "K"))
    counts = {}
    for name, lo, hi, default in (("repeats", 1, MAX_REPEATS, DEFAULT_REPEATS),
                                  ("warmup", 0, MAX_WARMUP, DEFAULT_WARMUP)):
        v = obj.get(name, default)
        if not _is_int(v) or not lo <= v <= hi:
            raise ProtocolError(f"{name} must be an integer from {lo} to {hi}, not {v!r}")
        counts[name] = v
    mode, sustained = check_mode_fields(obj)

    def burst_field(name: str, default: float, check: Callable[[Any], float],
                    instead: str = "") -> float:
        """A burst run's field: checked where given, refused with a sustained run."""
        if name not in obj:
            return default
        if mode != Mode.BURST:
            raise ProtocolError(f"{name} applies to burst runs only{instead}")
        return check(obj[name])

    settle_s = burst_field("settle_s", SETTLE_S[0], check_settle_s,
                           " (a sustained run idles cooldown_s before each trial)")
    energy_s = burst_field("energy_s", ENERGY_S[0], check_energy_s,
                           " (a sustained run's trials are its energy windows: window_s)")
    pair_budget_s = burst_field("pair_budget_s", PAIR_BUDGET_S[0], check_pair_budget_s)
    max_pairs = int(burst_field("max_pairs", MAX_PAIRS[0], check_max_pairs))
    params = obj.get("params")
    if params is not None and not (
            isinstance(params, dict) and all(isinstance(k, str) and _is_int(v)
                                             for k, v in params.items())):
        raise ProtocolError("params must map template parameter names to integers")
    compare = obj.get("compare", True)
    if not isinstance(compare, bool):
        raise ProtocolError(f"compare must be true or false, not {compare!r}")
    kernel = obj.get("kernel")  # a user's kernel: checked by the engine (ladder/user_level)
    if kernel is not None and not isinstance(kernel, dict):
        raise ProtocolError("kernel must be an object (docs/user-kernels.md)")
    return RunCommand(obj["level"], M, N, K, obj.get("id"), mode, counts["repeats"],
                      counts["warmup"], compare, params or None, sustained,
                      settle_s=settle_s, energy_s=energy_s, pair_budget_s=pair_budget_s,
                      max_pairs=max_pairs, operands=check_operands(obj), kernel=kernel)


def check_operands(obj: dict[str, Any]) -> Distribution:
    """A run command's ``operands``: one of Distribution's names (default uniform)."""
    given = obj.get("operands", str(DEFAULT_DISTRIBUTION))
    if given not in tuple(Distribution):
        raise ProtocolError(f"operands must be one of {', '.join(Distribution)}, "
                            f"not {given!r}")
    return Distribution(given)


def command_id(line: str | bytes) -> Any:
    """The "id" of a command line that failed validation (None where it has none), so
    that the answer can still be matched to it."""
    try:
        obj = loads(line, MAX_COMMAND_BYTES)
    except ProtocolError:
        return None
    return obj.get("id") if isinstance(obj, dict) else None


def check_mode_fields(obj: dict[str, Any]) -> tuple[Mode, SustainedConfig]:
    """A run command's ``mode`` and, for sustained runs only, its window, trials and
    cool-down, each within SUSTAINED_FIELDS (defaults for those it leaves out)."""
    given = obj.get("mode", str(Mode.BURST))
    if given not in tuple(Mode):
        raise ProtocolError(f"mode must be one of {', '.join(Mode)}, not {given!r}")
    mode = Mode(given)
    values: dict[str, Any] = {}
    for name, (_default, lo, hi) in SUSTAINED_FIELDS.items():
        if name not in obj:
            continue
        if mode != Mode.SUSTAINED:
            raise ProtocolError(f"{name} applies to sustained runs only (mode is {mode})")
        values[name] = _within(name, obj[name], lo, hi, whole=name == "trials")
    return mode, SustainedConfig(**values)


def check_settle_s(value: Any) -> float:
    """A burst run's settle: seconds from SETTLE_S's least to its most."""
    _, lo, hi = SETTLE_S
    return float(_within("settle_s", value, lo, hi))


def check_energy_s(value: Any) -> float:
    """A burst run's energy window: 0 (none) or seconds from ENERGY_S's least to its
    most."""
    _, lo, hi = ENERGY_S
    if not isinstance(value, bool) and isinstance(value, int | float) and value == 0:
        return 0.0
    try:
        return float(_within("energy_s", value, lo, hi))
    except ProtocolError:
        raise ProtocolError(f"energy_s must be 0 (no energy window) or a number of seconds "
                            f"from {lo:g} to {hi:g}, not {value!r}") from None


def check_max_pairs(value: Any) -> float:
    """A paired burst's most pairs: a whole number from MAX_PAIRS's least to its most."""
    return _within("max_pairs", value, *MAX_PAIRS[1:], whole=True)


def check_pair_budget_s(value: Any) -> float:
    """A paired burst's time budget: seconds from PAIR_BUDGET_S's least to its most."""
    _, lo, hi = PAIR_BUDGET_S
    return float(_within("pair_budget_s", value, lo, hi))


def _within(name: str, v: Any, lo: float, hi: float, whole: bool = False) -> float:
    """``v`` where it is an integer (``whole``) or a number of seconds from ``lo`` to
    ``hi`` (NaN and infinities are not), as a float unless whole; else ProtocolError."""
    if isinstance(v, bool) or not isinstance(v, int if whole else int | float) or \
            not lo <= v <= hi:
        kind = "an integer" if whole else "a number of seconds"
        raise ProtocolError(f"{name} must be {kind} from {lo:g} to {hi:g}, not {v!r}")
    return v if whole else float(v)


def check_telemetry_hz(hz: Any) -> float:
    """The NVML sampling rate: 0 (off) or from 1 to MAX_TELEMETRY_HZ samples a second."""
    if not isinstance(hz, int | float) or isinstance(hz, bool) or not (
            hz == 0 or 1 <= hz <= MAX_TELEMETRY_HZ):
        raise ProtocolError(f"telemetry hz must be 0 (off) or from 1 to "
                            f"{MAX_TELEMETRY_HZ:g}, not {hz!r}")
    return float(hz)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_size(name: str, value: Any) -> int:
    if not _is_int(value):
        raise ProtocolError(f"{name} must be a whole number, not {value!r}")
    if value < 1:
        raise ProtocolError(f"{name} must be at least 1, not {value}")
    if value > MAX_DIM:
        raise ProtocolError(f"{name}={value} is larger than {MAX_DIM}")
    return int(value)

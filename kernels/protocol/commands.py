"""Commands the runner reads on stdin, checked once at the edge (docs/protocol.md,
"Commands"): one JSON object per line with ``cmd``. The limits a command may ask for live
here too, so the CLI and the app's run form check the same numbers."""

from __future__ import annotations

from typing import Any

from .events import _NUM, MAX_COMMAND_BYTES, Mode, ProtocolError, loads

COMMANDS = ("run", "levels", "ping", "telemetry", "quit")
MAX_DIM = 1 << 20
MAX_REPEATS = 10_000
MAX_WARMUP = 1000
MAX_TELEMETRY_HZ = 200.0


def parse_command(line: str | bytes) -> dict[str, Any]:
    """Decode and check one command line; raises ProtocolError with a readable reason."""
    obj = loads(line, MAX_COMMAND_BYTES, "command is ")
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
        kernel = obj.get("kernel")  # a user's kernel: checked by the engine (user_level)
        if kernel is not None and not isinstance(kernel, dict):
            raise ProtocolError("kernel must be an object (docs/user-kernels.md)")
    if cmd == "telemetry":
        check_telemetry_hz(obj.get("hz"))
    return obj


def command_id(line: str | bytes) -> Any:
    """The "id" of a command line that failed validation (None where it has none), so
    that the answer can still be matched to it."""
    try:
        obj = loads(line, MAX_COMMAND_BYTES)
    except ProtocolError:
        return None
    return obj.get("id") if isinstance(obj, dict) else None


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

"""What to run: one run request, and the ladders and sweeps made of them.

The CLI's ``bench``/``record`` and the app's run controls plan with these, so a sweep is
the same sizes wherever it is asked for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..ladder.shape import Shape
from .commands import DEFAULT_REPEATS, MAX_DIM, RunMode, SustainedConfig, check_size
from .events import Distribution, Mode, ProtocolError
from .option_bounds import MAX_DIGITS, whole_number
from .text_safety import shown

# square sizes a sweep walks: powers of two from 256 to 8192
SWEEP_SIZES = tuple(2**i for i in range(8, 14))


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One run the user asked for, the one spec from the run form or the command line to
    the runner: ``command`` is what the runner is sent (and parses into a RunCommand)."""

    level: str
    shape: Shape
    repeats: int = DEFAULT_REPEATS
    warmup: int | None = None  # None: the runner's default
    compare: bool | None = None
    params: dict[str, int] | None = field(default=None, hash=False)
    mode: Mode = Mode.BURST
    # a sustained run's window, trials and cool-down (None: the runner's defaults)
    sustained: SustainedConfig | None = None
    # a burst run's idle seconds before its warmup (None: the runner's default, none)
    settle_s: float | None = None
    # a burst run's energy window, GPU seconds (None: the runner's default; 0: none)
    energy_s: float | None = None
    # a paired burst's time budget (None: the runner's default, PAIR_BUDGET_S)
    pair_budget_s: float | None = None
    # a paired burst's most pairs (None: the runner's default, MAX_PAIRS)
    max_pairs: int | None = None
    # what A and B are drawn from (None: the runner's default, uniform)
    operands: Distribution | None = None
    # a user's kernel: the run command's ``kernel`` object (ladder/user_level.py), which
    # carries the source, so a run over ssh or on a cluster needs nothing else
    kernel: dict[str, Any] | None = field(default=None, hash=False, compare=False)

    @property
    def shape_text(self) -> str:
        return str(self.shape)

    def with_mode(self, how: RunMode) -> RunRequest:
        """The same run, measured as ``how`` says (the run form's mode)."""
        return replace(self, mode=how.mode, sustained=how.sustained)

    def describe(self) -> str:
        mode = "" if self.mode == Mode.BURST else f" ({self.mode})"
        return f"{self.level} at {self.shape_text}{mode}"

    def command(self, run_id: str) -> dict[str, Any]:
        s = self.shape
        cmd: dict[str, Any] = {"cmd": "run", "id": run_id, "level": self.level,
                               "M": s.M, "N": s.N, "K": s.K}
        if self.mode == Mode.BURST:
            cmd["repeats"] = self.repeats
            if self.settle_s:
                cmd["settle_s"] = self.settle_s
            if self.energy_s is not None:
                cmd["energy_s"] = self.energy_s
            if self.pair_budget_s is not None:
                cmd["pair_budget_s"] = self.pair_budget_s
            if self.max_pairs is not None:
                cmd["max_pairs"] = self.max_pairs
        else:
            cmd["mode"] = str(self.mode)
            if self.sustained is not None:
                cmd.update(self.sustained.fields())
        if self.warmup is not None:
            cmd["warmup"] = self.warmup
        if self.compare is not None:
            cmd["compare"] = self.compare
        if self.params:
            cmd["params"] = dict(self.params)
        if self.operands is not None:
            cmd["operands"] = str(self.operands)
        if self.kernel is not None:
            cmd["kernel"] = self.kernel
        return cmd

    def where(self) -> dict[str, Any]:
        """The fields an error event names the run by (a variant's parameters too)."""
        s = self.shape
        where: dict[str, Any] = {"level": self.level, "M": s.M, "N": s.N, "K": s.K}
        params = self.kernel.get("params") if self.kernel is not None else self.params
        if isinstance(params, dict) and params:
            where["params"] = dict(params)
        return where


def ladder_requests(level_ids: Iterable[str], shape: Shape,
                    repeats: int = DEFAULT_REPEATS) -> list[RunRequest]:
    return [RunRequest(lv, shape, repeats) for lv in level_ids]


def sweep_requests(level_id: str, repeats: int = DEFAULT_REPEATS,
                   sizes: Iterable[int] = SWEEP_SIZES) -> list[RunRequest]:
    """Square shapes M = N = K over ``sizes`` (the sweep chart plots TFLOPS against N)."""
    return [RunRequest(level_id, Shape(n, n, n), repeats) for n in sizes]


class RunQueue:
    """Pending runs and the one in flight, with the ids sent to the runner."""

    def __init__(self, prefix: str = "run") -> None:
        self.prefix = prefix
        self.pending: deque[RunRequest] = deque()
        self.current: RunRequest | None = None
        self.current_id: str | None = None
        self._next = 1

    def extend(self, requests: Iterable[RunRequest]) -> None:
        self.pending.extend(requests)

    def clear(self) -> None:
        self.pending.clear()

    @property
    def busy(self) -> bool:
        return self.current is not None

    def start_next(self) -> tuple[str, RunRequest] | None:
        """Take the next pending run (when none is in flight); returns its id and request."""
        if self.current is not None or not self.pending:
            return None
        self.current = self.pending.popleft()
        self.current_id = f"{self.prefix}-{self._next}"
        self._next += 1
        return self.current_id, self.current

    def finish(self, run_id: Any = None) -> RunRequest | None:
        """Mark the run in flight finished (when ``run_id`` is None or matches it)."""
        if self.current is None or (run_id is not None and run_id != self.current_id):
            return None
        done, self.current, self.current_id = self.current, None, None
        return done


# ------------------------------------------------------------------ sizes as text
# (ValueError says why not, in words: the command line turns it into argparse's error,
# kernels/cli/options.py; a talk's file into its own)
def parse_shape(text: str) -> tuple[int, int, int]:
    """'4096' (a cube) or 'MxNxK'."""
    said = shown(text, 40)
    parts = text.lower().replace("×", "x").split("x")
    if len(parts) not in (1, 3):
        raise ValueError(f"{said}: give N (a cube) or MxNxK")
    dims = [whole_number(p) for p in parts]
    if None in dims:
        raise ValueError(f"{said}: sizes must be whole numbers of at most {MAX_DIGITS} digits")
    for name, v in zip("MNK", dims * (3 if len(dims) == 1 else 1), strict=True):
        try:
            check_size(name, v)
        except ProtocolError as exc:
            raise ValueError(f"{said}: {exc}") from None
    m, n, k = (dims[0],) * 3 if len(dims) == 1 else dims
    assert m is not None and n is not None and k is not None
    return m, n, k


def parse_sweep(text: str) -> list[int]:
    """'256:8192' -> powers of two from 256 to 8192 (each side within 1 to MAX_DIM, as
    a size of ``-s`` is)."""
    said = shown(text, 40)
    parts = text.split(":")
    ends = [whole_number(x) for x in parts]
    if len(ends) != 2 or None in ends:
        raise ValueError(f"{said}: give LO:HI, e.g. 256:8192")
    lo, hi = ends
    assert lo is not None and hi is not None
    if not 1 <= lo <= hi <= MAX_DIM:
        raise ValueError(f"{said}: give LO:HI with 1 <= LO <= HI <= {MAX_DIM:,}")
    out, n = [], 1
    while n <= hi:
        if n >= lo:
            out.append(n)
        n *= 2
    if not out:
        raise ValueError(f"{said}: no power of two in range")
    return out

"""Run bookkeeping: what the user asked for, checked, queued one command at a time.

The runner serves one command at a time; a ladder or a sweep is a queue of runs sent one
after another (the next after the previous run's ``done``). Validation of the input
fields lives here so it is tested without Qt and says why a value is refused.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gemmscope.kernels.protocol import MAX_DIM

MAX_REPEATS = 10_000
# sizes a sweep walks: powers of two and a few odd sizes between them
SWEEP_N = (256, 512, 1000, 1024, 2048, 3000, 4096, 6144, 8192)


@dataclass(frozen=True, slots=True)
class RunRequest:
    level: str
    M: int
    N: int
    K: int
    repeats: int = 20

    @property
    def shape_text(self) -> str:
        return f"{self.M}×{self.N}×{self.K}"

    def describe(self) -> str:
        return f"{self.level} at {self.shape_text}"

    def command(self, run_id: str) -> dict[str, Any]:
        return {"cmd": "run", "id": run_id, "level": self.level, "M": self.M, "N": self.N,
                "K": self.K, "repeats": self.repeats}


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


def ladder_requests(level_ids: Iterable[str], M: int, N: int, K: int,
                    repeats: int) -> list[RunRequest]:
    return [RunRequest(lv, M, N, K, repeats) for lv in level_ids]


def sweep_requests(level_id: str, repeats: int,
                   sizes: Iterable[int] = SWEEP_N) -> list[RunRequest]:
    """Square shapes M = N = K over ``sizes`` (the sweep chart plots TFLOPS against N)."""
    return [RunRequest(level_id, n, n, n, repeats) for n in sizes]


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

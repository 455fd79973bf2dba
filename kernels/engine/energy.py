"""Energy of a window of back-to-back launches, from NVML's total-energy counter.

Two pieces, both free of CuPy and NVML so that they are tested with fakes:

- :class:`EnergyCounter` reads a counter that advances in steps (NVML's total energy, mJ
  since the driver loaded, moves every few tens of milliseconds). It reads each end of a
  window just after the counter has stepped, so that neither end lags by up to a step.
- :func:`run_batches` keeps the GPU fed with batches of launches (a CUDA graph each, or
  plain launches) until the GPU has worked for the asked window, waiting only on the
  older of two batches in flight, so the queue never runs dry; the time is the GPU's own
  (CUDA events around the whole window).

:func:`measure_window` puts them together. The method and its error bounds are in
docs/energy.md.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

# how often the counter is polled while waiting for its next step, and how long to wait
# for one (the H200's counter steps every few tens of ms; a step that does not come
# within this is reported as an unaligned read)
POLL_S = 0.0005
MAX_STEP_WAIT_S = 0.5
# GPU time one batch of launches aims at: long enough that enqueuing and waiting cost
# nothing, short enough that the window ends close to the asked length
BATCH_TARGET_S = 0.05
MAX_BATCH_LAUNCHES = 2000
IN_FLIGHT = 2  # batches queued on the GPU at once


@dataclass(frozen=True, slots=True)
class CounterMark:
    """One read of the counter: its value, when it was read (host clock, s), whether the
    read came just after a step, and (opening reads) the interval between two steps."""

    energy_j: float
    t_s: float
    aligned: bool
    step_s: float | None = None


@dataclass(frozen=True, slots=True)
class EnergyReading:
    """The counter's difference over a window and the host time between the two reads."""

    energy_j: float
    wall_s: float
    aligned: bool  # both reads came just after a step
    step_s: float | None  # the counter's step interval seen when the window opened


class EnergyCounter:
    """A stepping energy counter (``read_j``: joules, or None where it cannot be read)
    read at its steps. ``reason`` says why there is no counter when ``read_j`` is None."""

    def __init__(self, read_j: Callable[[], float | None], reason: str | None = None,
                 clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], None] = time.sleep,
                 poll_s: float = POLL_S, max_wait_s: float = MAX_STEP_WAIT_S):
        self._read = read_j
        self._reason = reason
        self.clock = clock
        self.sleep = sleep
        self.poll_s = poll_s
        self.max_wait_s = max_wait_s

    def reason(self) -> str | None:
        """None when the counter reads, else why not (names NVML's answer)."""
        if self._read() is not None:
            return None
        return self._reason or "the GPU's total-energy counter cannot be read"

    def next_step(self) -> CounterMark | None:
        """Wait until the counter changes and return the first new value (None when it
        cannot be read). After ``max_wait_s`` without a step, the last read is returned
        unaligned."""
        first = self._read()
        if first is None:
            return None
        deadline = self.clock() + self.max_wait_s
        while True:
            value, now = self._read(), self.clock()
            if value is None:
                return None
            if value != first:
                return CounterMark(value, now, True)
            if now >= deadline:
                return CounterMark(value, now, False)
            self.sleep(self.poll_s)

    def open(self) -> CounterMark | None:
        """The opening read of a window: just after a step, with the step interval (the
        time between two steps) measured on the way."""
        first = self.next_step()
        if first is None:
            return None
        second = self.next_step()
        if second is None:
            return None
        step = second.t_s - first.t_s if first.aligned and second.aligned else None
        return CounterMark(second.energy_j, second.t_s, second.aligned, step)

    def close(self, opened: CounterMark) -> EnergyReading | None:
        """The closing read, just after the next step once the work has finished: every
        joule of the window is in the counter by then."""
        end = self.next_step()
        if end is None:
            return None
        return EnergyReading(end.energy_j - opened.energy_j, end.t_s - opened.t_s,
                             opened.aligned and end.aligned, opened.step_s)


class Batches(Protocol):
    """Work enqueued on the GPU in batches and timed there."""

    def start(self) -> None:
        """Mark the start of the window (a CUDA event)."""

    def enqueue(self) -> int:
        """Enqueue one batch; returns how many GEMMs it holds."""

    def mark(self) -> Any:
        """Mark the end of what is enqueued so far."""

    def reached(self, mark: Any) -> bool:
        """Whether the GPU has already passed ``mark`` (without waiting)."""

    def wait(self, mark: Any) -> float:
        """Block until the GPU reaches ``mark``; GPU seconds since the start."""

    def finish(self) -> float:
        """Mark the end, wait for it; GPU seconds from the start to the end."""


@dataclass(frozen=True, slots=True)
class BatchRun:
    launches: int
    gpu_s: float  # CUDA events around the whole window
    waits: int  # times the host waited for the older batch
    # of those, how often the GPU had already finished it: the host, not the GPU, was
    # the limit then, and the queue may have run dry
    ready_waits: int


def run_batches(batches: Batches, window_s: float, on_wait: Callable[[], None] | None = None,
                in_flight: int = IN_FLIGHT) -> BatchRun:
    """Keep ``in_flight`` batches queued until the GPU has worked ``window_s`` seconds.

    Only the oldest batch is waited for, so the GPU always has the next one queued; the
    window therefore ends between one and ``in_flight`` batches after ``window_s``.
    ``on_wait`` runs after each wait (a telemetry sample where the sampler is off).
    """
    batches.start()
    launches, waits, ready = 0, 0, 0
    marks: deque[Any] = deque()
    while True:
        launches += batches.enqueue()
        marks.append(batches.mark())
        if len(marks) < in_flight:
            continue
        older = marks.popleft()
        waits += 1
        ready += batches.reached(older)
        done_s = batches.wait(older)
        if on_wait is not None:
            on_wait()
        if done_s >= window_s:
            break
    return BatchRun(launches, batches.finish(), waits, ready)


def batch_size(seconds_per_launch: float, target_s: float = BATCH_TARGET_S,
               most: int = MAX_BATCH_LAUNCHES) -> int:
    """Launches per batch so that a batch takes about ``target_s`` on the GPU."""
    if not seconds_per_launch > 0:
        return most
    return max(1, min(most, math.ceil(target_s / seconds_per_launch)))


@dataclass(frozen=True, slots=True)
class MeasuredWindow:
    """One window of back-to-back launches: GPU time, launches and the energy counter."""

    launches: int
    gpu_s: float
    t_start: float  # session clock, when the work was enqueued
    t_end: float  # session clock, when the GPU had finished
    waits: int
    ready_waits: int
    energy: EnergyReading | None
    energy_reason: str | None

    @property
    def s_per_launch(self) -> float:
        return self.gpu_s / self.launches

    @property
    def j_per_launch(self) -> float | None:
        return None if self.energy is None else self.energy.energy_j / self.launches

    @property
    def power_w(self) -> float | None:
        """Average power while the GPU worked: the window's joules over its GPU time."""
        return None if self.energy is None else self.energy.energy_j / self.gpu_s

    @property
    def edge_s(self) -> float | None:
        """Counter-window time outside the GPU's work (the GPU idle at the two ends)."""
        return None if self.energy is None else max(0.0, self.energy.wall_s - self.gpu_s)

    @property
    def host_bound(self) -> bool:
        """Mostly, the GPU had finished the older batch before the host came to wait for
        it: the host was the limit, so gaps may sit between launches (time and energy
        include them)."""
        return 2 * self.ready_waits > self.waits

    def describe(self) -> dict[str, Any]:
        """The window's facts as result fields."""
        e = self.energy
        return {"gpu_s": self.gpu_s, "launches": self.launches, "t_start": self.t_start,
                "t_end": self.t_end, "counter_aligned": None if e is None else e.aligned,
                "counter_step_s": None if e is None else e.step_s, "edge_s": self.edge_s,
                "host_bound": self.host_bound}


def measure_window(batches: Batches, counter: EnergyCounter | None, window_s: float,
                   clock: Callable[[], float], on_wait: Callable[[], None] | None = None,
                   no_counter: str | None = None) -> MeasuredWindow:
    """Open the counter at a step, run the batches for ``window_s`` of GPU time, close
    the counter at the next step after the GPU finished. ``clock`` is the session clock
    (for the telemetry samples of the window). Without a counter, ``no_counter`` (or the
    counter's reason) says why there is no energy."""
    opened = counter.open() if counter is not None else None
    reason = None
    if opened is None:
        reason = (counter.reason() if counter is not None else None) or no_counter or \
            "no energy counter"
    t_start = clock()
    run = run_batches(batches, window_s, on_wait)
    t_end = clock()
    energy = counter.close(opened) if counter is not None and opened is not None else None
    if opened is not None and energy is None:
        reason = "the energy counter stopped answering during the window"
    return MeasuredWindow(run.launches, run.gpu_s, t_start, t_end, run.waits,
                          run.ready_waits, energy, reason)


class StreamBatches:
    """:class:`Batches` on a CuPy stream: ``per_batch`` calls of ``body`` captured once
    into a CUDA graph (``graph=True``; replayed per batch), or called per batch.

    ``cp`` is CuPy (from gpu.require_cupy). A capture that fails (an operation that a
    graph cannot hold) falls back to plain launches; ``method`` says which ran and
    ``capture_error`` why the graph was not used.
    """

    def __init__(self, cp: Any, stream: Any, body: Callable[[], None], per_batch: int,
                 graph: bool = True):
        self.cp = cp
        self.stream = stream
        self.body = body
        self.per_batch = per_batch
        self.capture_error: str | None = None
        self._graph = self._capture() if graph else None
        self.method = "graph" if self._graph is not None else "stream"
        self._start = cp.cuda.Event()
        self._end = cp.cuda.Event()
        if self._graph is not None and per_batch > 1:
            # the first replay uploads the graph: not in a window (a batch of one launch,
            # a slow kernel, has nothing worth uploading and would cost seconds)
            self._graph.launch(stream)
            stream.synchronize()

    def _capture(self) -> Any:
        s = self.stream
        with s:
            s.begin_capture()
            try:
                for _ in range(self.per_batch):
                    self.body()
            except Exception as exc:
                self.capture_error = f"{type(exc).__name__}: {exc}"
            try:
                graph = s.end_capture()
            except Exception as exc:  # an invalidated capture ends with an error
                self.capture_error = self.capture_error or f"{type(exc).__name__}: {exc}"
                return None
        return None if self.capture_error else graph

    def start(self) -> None:
        self._start.record(self.stream)

    def enqueue(self) -> int:
        if self._graph is not None:
            self._graph.launch(self.stream)
        else:
            with self.stream:
                for _ in range(self.per_batch):
                    self.body()
        return self.per_batch

    def mark(self) -> Any:
        ev = self.cp.cuda.Event()
        ev.record(self.stream)
        return ev

    def reached(self, mark: Any) -> bool:
        return bool(mark.done)

    def wait(self, mark: Any) -> float:
        mark.synchronize()
        return float(self.cp.cuda.get_elapsed_time(self._start, mark)) / 1e3

    def finish(self) -> float:
        self._end.record(self.stream)
        self._end.synchronize()
        return float(self.cp.cuda.get_elapsed_time(self._start, self._end)) / 1e3


def seconds_per_call(cp: Any, stream: Any, body: Callable[[], None], calls: int = 1) -> float:
    """GPU seconds per call of ``body``, from ``calls`` calls back to back. It only sizes
    the batches, so one call (after the warm-up) does: a slow kernel costs no more."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    with stream:
        start.record(stream)
        for _ in range(calls):
            body()
        end.record(stream)
    end.synchronize()
    return float(cp.cuda.get_elapsed_time(start, end)) / 1e3 / calls

"""The producer/consumer timeline of a warp-specialized block, for the tiling animation.

An idealized schedule, not a measurement: one persistent block walks ``tiles`` tiles of
``k_steps`` K steps each; every K step of the consumers takes one time unit (a "slot"),
and after a tile's last K step the consumers spend one slot on the epilogue. Iteration
``it`` (a K step counted across the block's tiles, as the kernel's ``it``) lives in stage
``it % stages``. The producer issues the TMA copies of iteration it as soon as its stage
is free: at once for the first ``stages`` iterations, else once the consumers released
iteration it - stages (at the end of that iteration's slot), ``issue_at`` into the next
slot; the copy takes ``fill`` of a slot. The consumers wait on full[s] if the copy has not
landed yet, run the K step's wgmma operations evenly through the rest of the slot, and
arrive on empty[s] at its end. Barrier parities follow the source: consumers wait on
full[s] for parity (it / stages) & 1, the producer on empty[s] for the opposite one.

Time is a float: slot index plus the fraction of it gone by.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class StageState(StrEnum):
    EMPTY = "empty"  # free for the producer (never filled yet, or released)
    FILLING = "filling"  # TMA copies in flight, full[s] not complete
    FULL = "full"  # full[s] complete, consumers not on it yet
    CONSUMING = "consuming"  # consumers' wgmmas read it


class Work(StrEnum):
    WAIT = "wait"  # a consumer waits on full[s]
    MMA = "mma"  # issues / runs the K step's wgmma (and FP8 promotion) operations
    EPILOGUE = "epilogue"  # stores the tile's C through the staging buffer
    DONE = "done"


@dataclass(frozen=True, slots=True)
class StageView:
    stage: int
    state: StageState
    iteration: int | None  # what it holds or is receiving (None: nothing yet)
    tile: int | None  # index of that iteration's tile in the block's sequence
    k_step: int | None
    fill: float  # 0..1 of the copy landed
    round: int  # how many times the ring came round to it (it // stages)
    empty_arrivals: int  # consumers that arrived on empty[s] for this round


@dataclass(frozen=True, slots=True)
class ConsumerView:
    work: Work
    tile: int
    k_step: int | None  # None in the epilogue
    iteration: int | None
    stage: int | None
    op: int  # index of the operation running (wgmma/promote, or epilogue chunk)
    op_fraction: float  # 0..1 through that operation


@dataclass(frozen=True, slots=True)
class ProducerView:
    copying: tuple[int, ...]  # iterations whose TMA copies are in flight
    waiting_for: int | None  # the next iteration to issue, while its stage is not free
    waiting_stage: int | None


class PipelineSchedule:
    def __init__(self, stages: int, k_steps: int, tiles: int, ops_per_step: int,
                 epilogue_chunks: int, consumers: int = 2, issue_at: float = 0.15,
                 fill: float = 0.45) -> None:
        if stages < 1 or k_steps < 1 or tiles < 1:
            raise ValueError("stages, k_steps and tiles must be >= 1")
        self.stages, self.k_steps, self.tiles = stages, k_steps, tiles
        self.ops_per_step, self.epilogue_chunks = max(1, ops_per_step), max(1, epilogue_chunks)
        self.consumers = consumers
        self.issue_at, self.fill = issue_at, fill

    # -- the timeline -----------------------------------------------------------------
    @property
    def iterations(self) -> int:
        return self.tiles * self.k_steps

    @property
    def n_slots(self) -> int:
        return self.tiles * (self.k_steps + 1)

    def slot(self, it: int) -> int:
        """The slot in which the consumers compute iteration ``it``."""
        return it // self.k_steps * (self.k_steps + 1) + it % self.k_steps

    def epilogue_slot(self, tile: int) -> int:
        return tile * (self.k_steps + 1) + self.k_steps

    def slot_work(self, slot: int) -> tuple[int, int | None]:
        """(tile, k_step) of a slot; k_step None for an epilogue slot."""
        tile, inside = divmod(slot, self.k_steps + 1)
        return tile, (None if inside == self.k_steps else inside)

    def issue(self, it: int) -> float:
        if it < self.stages:
            return self.issue_at
        return self.slot(it - self.stages) + 1 + self.issue_at

    def landed(self, it: int) -> float:
        return self.issue(it) + self.fill

    def consume_start(self, it: int) -> float:
        return max(float(self.slot(it)), self.landed(it))

    def released(self, it: int) -> float:
        return float(self.slot(it) + 1)

    # -- states at a time ---------------------------------------------------------------
    def stage_at(self, stage: int, time: float) -> StageView:
        issued = [it for it in range(stage, self.iterations, self.stages)
                  if self.issue(it) <= time]
        if not issued:
            return StageView(stage, StageState.EMPTY, None, None, None, 0.0, 0, 0)
        it = issued[-1]
        tile, k = divmod(it, self.k_steps)
        rnd = it // self.stages
        if time < self.landed(it):
            return StageView(stage, StageState.FILLING, it, tile, k,
                             (time - self.issue(it)) / self.fill, rnd, 0)
        if time < self.consume_start(it):
            return StageView(stage, StageState.FULL, it, tile, k, 1.0, rnd, 0)
        if time < self.released(it):
            return StageView(stage, StageState.CONSUMING, it, tile, k, 1.0, rnd, 0)
        return StageView(stage, StageState.EMPTY, it, tile, k, 0.0, rnd, self.consumers)

    def consumer_at(self, time: float) -> ConsumerView:
        slot = min(math.floor(time), self.n_slots - 1)
        if time >= self.n_slots:
            return ConsumerView(Work.DONE, self.tiles - 1, None, None, None, 0, 1.0)
        tile, k = self.slot_work(slot)
        frac = time - slot
        if k is None:
            pos = frac * self.epilogue_chunks
            op = min(int(pos), self.epilogue_chunks - 1)
            return ConsumerView(Work.EPILOGUE, tile, None, None, None, op, pos - op)
        it = tile * self.k_steps + k
        start = self.consume_start(it)
        if time < start:
            return ConsumerView(Work.WAIT, tile, k, it, it % self.stages, 0, 0.0)
        pos = (time - start) / (slot + 1 - start) * self.ops_per_step
        op = min(int(pos), self.ops_per_step - 1)
        return ConsumerView(Work.MMA, tile, k, it, it % self.stages, op, pos - op)

    def producer_at(self, time: float) -> ProducerView:
        copying = tuple(it for it in range(self.iterations)
                        if self.issue(it) <= time < self.landed(it))
        nxt = next((it for it in range(self.iterations) if self.issue(it) > time), None)
        if nxt is None:
            return ProducerView(copying, None, None)
        return ProducerView(copying, nxt, nxt % self.stages)

"""Shared-memory bank math: which bank each lane of a warp instruction touches, the n-way
conflict and the number of wavefronts, counted the way Nsight Compute counts them.

Shared memory has 32 banks of 4-byte words; bank = (byte address / 4) mod 32. One
wavefront serves at most one distinct word per bank; lanes reading the same word share it
(broadcast). Wider accesses are split into phases, each served on its own:

- 32-bit: one phase of 32 lanes;
- 64-bit: two phases of 16 lanes (lanes 0-15, 16-31);
- 128-bit: four phases of 8 lanes (an LDS.128 needs 4 wavefronts at best).

A phase needs as many wavefronts as the busiest bank has distinct words. Conflicts are
wavefronts beyond the ideal, the ideal being one per phase with an active lane:
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`` counts exactly that (a
32-way conflicting LDS.32: 32 wavefronts, 31 conflicts).

One refinement (``BankRules.merge_uniform_pairs``, on by default): a 128-bit access in
which every pair of lanes n, n^1 (or every pair n, n^2) reads the same address is served
in two phases of 16 lanes, not four of 8, since the pairs' data can be packed. NVIDIA
staff described this rule for CC 7.x on their forum ("requests/instruction reduce from 4
to 2"), and an ncu measurement on an H100 posted there shows the same: 16 lanes on one
address and 16 on another took 2 wavefronts. Lanes that share addresses only across
quarter-warps (n and n+16) are not merged. ``PHASES_ONLY`` turns the refinement off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_BANKS = 32
WORD_BYTES = 4
WARP_SIZE = 32
ACCESS_WIDTHS = (1, 2, 4, 8, 16)  # bytes per lane; sub-word accesses use one word


@dataclass(frozen=True, slots=True)
class BankRules:
    merge_uniform_pairs: bool = True


HARDWARE = BankRules()
PHASES_ONLY = BankRules(merge_uniform_pairs=False)


def pairs_uniform(addr: np.ndarray, active: np.ndarray) -> bool:
    """Every active lane n reads what lane n^1 reads, or every one what n^2 reads
    (an inactive partner does not spoil the pair)."""
    lanes = np.arange(WARP_SIZE)
    for mate in (lanes ^ 1, lanes ^ 2):
        both = active & active[mate]
        if np.all(addr[both] == addr[mate][both]):
            return True
    return False


def lanes_per_phase(width_bytes: int) -> int:
    """Lanes served together: 32 for accesses up to 32 bits, 16 for 64, 8 for 128."""
    if width_bytes not in ACCESS_WIDTHS:
        raise ValueError(f"access width {width_bytes} bytes is not one of {ACCESS_WIDTHS}")
    return WARP_SIZE * WORD_BYTES // max(width_bytes, WORD_BYTES)



@dataclass(frozen=True, slots=True, eq=False)
class BankReport:
    """One warp instruction seen by the shared-memory banks.

    ``lane_bank`` is the bank of each lane's first word (-1 for an inactive lane);
    ``lane_phase`` its phase; ``load[p, b]`` the distinct words bank ``b`` serves in
    phase ``p``; ``lane_wavefront`` the wavefront (inside its phase) that serves the lane.
    """

    width_bytes: int
    addr: np.ndarray  # (32,) byte addresses
    active: np.ndarray  # (32,) bool
    lane_bank: np.ndarray  # (32,)
    lane_phase: np.ndarray  # (32,)
    lane_wavefront: np.ndarray  # (32,)
    load: np.ndarray  # (phases, 32)
    wavefronts: int
    ideal: int
    phase_lanes: int = 32  # lanes served together in one phase

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal

    @property
    def n_way(self) -> int:
        """The worst bank's distinct words in one phase (1: no conflict)."""
        return int(self.load.max()) if self.load.size else 0

    @property
    def phases(self) -> int:
        return int(self.load.shape[0])

    def words_of_lane(self, lane: int) -> np.ndarray:
        n = max(self.width_bytes, WORD_BYTES) // WORD_BYTES
        return self.addr[lane] // WORD_BYTES + np.arange(n)


def analyze_shared(addr: np.ndarray | list[int], width_bytes: int = 4,
                   active: np.ndarray | None = None, rules: BankRules = HARDWARE
                   ) -> BankReport:
    """Banks, phases and wavefronts of one warp instruction (byte addresses per lane)."""
    a = np.asarray(addr, dtype=np.int64).reshape(-1)
    if a.size != WARP_SIZE:
        raise ValueError(f"need {WARP_SIZE} lane addresses, got {a.size}")
    act = np.ones(WARP_SIZE, bool) if active is None else np.asarray(active, bool)
    if width_bytes >= WORD_BYTES and np.any(a[act] % width_bytes):
        raise ValueError(f"{width_bytes}-byte accesses must be {width_bytes}-byte aligned")
    per_phase = lanes_per_phase(width_bytes)
    if width_bytes == 16 and rules.merge_uniform_pairs and pairs_uniform(a, act):
        per_phase = 16
    n_phases = WARP_SIZE // per_phase
    words_per_lane = max(width_bytes, WORD_BYTES) // WORD_BYTES
    load = np.zeros((n_phases, N_BANKS), np.int64)
    lane_wave = np.full(WARP_SIZE, -1, np.int64)
    ideal = 0
    for p in range(n_phases):
        lanes = np.arange(p * per_phase, (p + 1) * per_phase)
        lanes = lanes[act[lanes]]
        if lanes.size == 0:
            continue
        ideal += 1
        words = (a[lanes, None] // WORD_BYTES + np.arange(words_per_lane)).reshape(-1)
        uniq = np.unique(words)
        banks = uniq % N_BANKS
        np.add.at(load[p], banks, 1)
        # rank of each distinct word inside its bank = the wavefront that serves it
        order = np.lexsort((uniq, banks))
        rank = np.empty_like(order)
        sb = banks[order]
        starts = np.r_[0, np.flatnonzero(np.diff(sb)) + 1]
        run_start = np.repeat(starts, np.diff(np.r_[starts, sb.size]))
        rank[order] = np.arange(sb.size) - run_start
        first = a[lanes] // WORD_BYTES
        lane_wave[lanes] = rank[np.searchsorted(uniq, first)]
    wavefronts = int(load.max(axis=1).sum())
    lane_bank = np.where(act, (a // WORD_BYTES) % N_BANKS, -1)
    lane_phase = np.arange(WARP_SIZE) // per_phase
    return BankReport(width_bytes, a, act, lane_bank, lane_phase, lane_wave, load,
                      wavefronts, ideal, per_phase)


def strided_addresses(stride_words: int, width_bytes: int = 4, base: int = 0) -> np.ndarray:
    """Lane i at ``base + i * stride_words`` words (the textbook stride experiment)."""
    return base + np.arange(WARP_SIZE, dtype=np.int64) * stride_words * WORD_BYTES


def bank_cells(rep: BankReport) -> dict[tuple[int, int, int], list[int]]:
    """(phase, bank, rank) -> the lanes whose access covers that word; rank r is the
    r-th distinct word of the bank in the phase, served by the phase's wavefront r."""
    cells: dict[tuple[int, int, int], list[int]] = {}
    per_phase = rep.phase_lanes
    for p in range(rep.phases):
        lanes = [ln for ln in range(p * per_phase, (p + 1) * per_phase) if rep.active[ln]]
        words = {ln: rep.words_of_lane(ln) for ln in lanes}
        uniq = sorted({int(w) for ws in words.values() for w in ws})
        rank: dict[int, int] = {}
        seen: dict[int, int] = {}
        for w in uniq:
            b = w % N_BANKS
            rank[w] = seen.get(b, 0)
            seen[b] = rank[w] + 1
        for ln in lanes:
            for w in words[ln]:
                key = (p, int(w) % N_BANKS, rank[int(w)])
                cells.setdefault(key, []).append(ln)
    return cells


def wavefront_index(rep: BankReport, phase: int, rank: int) -> int:
    """Position of (phase, rank) in the order the wavefronts are served."""
    return int(rep.load[:phase].max(axis=1, initial=0).sum()) + rank

"""Global-memory coalescing: the 32-byte sectors and 128-byte lines a warp instruction
touches, against the fewest it could touch for the bytes it moves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SECTOR_BYTES = 32
LINE_BYTES = 128
WARP_SIZE = 32


@dataclass(frozen=True, slots=True, eq=False)
class SectorReport:
    width_bytes: int
    addr: np.ndarray  # (32,) byte addresses
    active: np.ndarray  # (32,) bool
    sectors: np.ndarray  # sorted distinct sector indices (address // 32)
    lane_sector: np.ndarray  # (32,) sector of each lane's first byte, -1 inactive
    requests: int  # warp-level requests (one per instruction with an active lane)

    @property
    def n_sectors(self) -> int:
        return int(self.sectors.size)

    @property
    def n_lines(self) -> int:
        return int(np.unique(self.sectors // (LINE_BYTES // SECTOR_BYTES)).size)

    @property
    def bytes_used(self) -> int:
        return int(np.unique(self._bytes()).size)

    @property
    def ideal_sectors(self) -> int:
        return -(-self.bytes_used // SECTOR_BYTES)

    @property
    def efficiency(self) -> float:
        """Bytes used over bytes moved (1.0: fully coalesced)."""
        moved = self.n_sectors * SECTOR_BYTES
        return self.bytes_used / moved if moved else 1.0

    def _bytes(self) -> np.ndarray:
        a = self.addr[self.active]
        return (a[:, None] + np.arange(self.width_bytes)).reshape(-1)


def analyze_global(addr: np.ndarray | list[int], width_bytes: int = 4,
                   active: np.ndarray | None = None) -> SectorReport:
    a = np.asarray(addr, dtype=np.int64).reshape(-1)
    if a.size != WARP_SIZE:
        raise ValueError(f"need {WARP_SIZE} lane addresses, got {a.size}")
    act = np.ones(WARP_SIZE, bool) if active is None else np.asarray(active, bool)
    first = a[act]
    last = first + width_bytes - 1
    # every sector a lane's bytes span (a TMA row of 128 bytes is four, not two ends)
    span = np.arange(0, width_bytes, SECTOR_BYTES)
    sectors = np.unique(np.concatenate([((first[:, None] + span) // SECTOR_BYTES).ravel(),
                                        last // SECTOR_BYTES]))
    lane_sector = np.where(act, a // SECTOR_BYTES, -1)
    return SectorReport(width_bytes, a, act, sectors, lane_sector, int(act.any()))

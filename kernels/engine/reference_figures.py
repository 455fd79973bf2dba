"""What the runner keeps of each reference's run for the levels after it: its TFLOPS and
SM clock by shape, mode and operands (a level's % of cuBLAS is within the same mode, on
the same distribution of inputs: power and clock differ with the data), and its energy
window, taken again by the next levels of its precision (paired.ReusedEnergy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ladder.registry import Level
from ..ladder.shape import percent
from ..protocol import commands
from .paired import ReusedEnergy

RefKey = tuple[str, int, int, int, str, str]  # reference, M, N, K, mode, operands


def reference_key(reference_id: str, cmd: commands.RunCommand) -> RefKey:
    """Where a reference's result serves a level's: the same shape, mode and operands."""
    return (reference_id, cmd.M, cmd.N, cmd.K, str(cmd.mode), str(cmd.operands))


@dataclass(slots=True)
class ReferenceFigures:
    # a reference's TFLOPS by (id, M, N, K, mode, operands)
    tflops: dict[RefKey, float] = field(default_factory=dict)
    # the SM clock each reference ran at (None: not known), so a ratio can say whether
    # the level ran at the same one
    clock: dict[RefKey, float | None] = field(default_factory=dict)
    # a reference's energy window by its key and the window's length
    energy: dict[tuple[RefKey, float], ReusedEnergy] = field(default_factory=dict)

    def keep(self, reference_id: str, cmd: commands.RunCommand,
             result: dict[str, Any]) -> None:
        """A reference's figures, for the levels after it at its shape, mode and operands."""
        key = reference_key(reference_id, cmd)
        self.tflops[key] = result["tflops"]
        self.clock[key] = result.get("sm_clock_mhz_avg")

    def measured(self, reference_id: str, cmd: commands.RunCommand) -> bool:
        """Whether the reference has figures at the command's shape, mode and operands."""
        return reference_key(reference_id, cmd) in self.tflops

    def energy_of(self, reference_id: str, cmd: commands.RunCommand) -> ReusedEnergy:
        """The reference's energy window at the command's shape, operands and window."""
        return self.energy.setdefault((reference_key(reference_id, cmd), cmd.energy_s),
                                      ReusedEnergy())

    def compare(self, level: Level, cmd: commands.RunCommand,
                result: dict[str, Any]) -> None:
        """A level's result run alone: its reference's figures where one was measured."""
        ref_id = level.reference
        key = reference_key(ref_id or "", cmd)
        ref = self.tflops.get(key)
        result.update({"reference": ref_id if ref else None, "reference_tflops": ref,
                       "pct_of_reference": percent(result["tflops"], ref),
                       "reference_sm_clock_mhz_avg": self.clock.get(key) if ref
                       else None})

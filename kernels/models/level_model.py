"""What every level's access model answers, and the kernel-wide totals built from it.

A model describes one thread block of a level: the C tile it owns, the A and B tiles it
stages per K step and in which shared stage, which outputs each thread computes, and the
shared and global memory instructions each warp issues per K step (lane addresses in
bytes). The numbers are pure numpy; views only draw them.

Totals follow the kernel's structure instead of enumerating it: the shared-memory
instruction stream of a K step depends only on the warp and on the stage (K step mod the
number of stages), and is the same in every block, because the levels stage full tiles
(zero-filled at the edges) and read them unconditionally. So a block's counts over one
period of stages, times the K steps of each stage, times the blocks, gives the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np

from ..ladder import registry
from .banks import HARDWARE, PHASES_ONLY, WARP_SIZE, BankReport, BankRules, analyze_shared
from .coalescing import SectorReport, analyze_global
from .swizzle import IDENTITY, Swizzle, SwizzleUnit, TileLayout

LANES = np.arange(WARP_SIZE, dtype=np.int64)


class Op(StrEnum):
    LOAD = "ld"
    STORE = "st"
    CP_ASYNC = "ldgsts"  # cp.async: global read, shared write, no register


class Space(StrEnum):
    SHARED = "shared"
    GLOBAL = "global"


@dataclass(frozen=True, slots=True)
class Tile:
    """A rectangle of a matrix in element coordinates."""

    row: int
    col: int
    rows: int
    cols: int


@dataclass(frozen=True, slots=True)
class SmemArray:
    """One shared-memory array: ``stages`` copies of ``rows`` x ``pitch`` elements, of
    which ``cols`` per row hold data (the rest is padding)."""

    name: str
    rows: int
    cols: int
    pitch: int
    elem_bytes: int
    stages: int = 1
    base_bytes: int = 0
    holds: str = "A"  # which operand; "A^T" when stored transposed
    # rows stored with their 16-byte chunks permuted: chunk c of row r at c ^ (r % 8)
    # (mma_sync's gs_swz, "Swizzle<3,4,3>" on rows of 128 bytes or more)
    xor_chunks: bool = False
    # bytes from one stage to the next; 0: stages back to back (stage_bytes). The Hopper
    # levels interleave arrays inside a stage (A then B), so A's next stage is further on
    stride_bytes: int = 0

    @property
    def stage_stride(self) -> int:
        return self.stride_bytes or self.stage_bytes

    @property
    def stage_bytes(self) -> int:
        return self.rows * self.pitch * self.elem_bytes

    @property
    def size_bytes(self) -> int:
        return self.stages * self.stage_bytes

    @property
    def row_bytes(self) -> int:
        return self.pitch * self.elem_bytes

    def address(self, stage: int, row: np.ndarray | int, col: np.ndarray | int
                ) -> np.ndarray:
        r = np.asarray(row, np.int64)
        c = np.asarray(col, np.int64)
        in_row = c * self.elem_bytes
        if self.xor_chunks:
            in_row = ((in_row // 16) ^ (r % 8)) * 16 + in_row % 16
        return self.base_bytes + stage * self.stage_stride + r * self.row_bytes + in_row

    def tile_layout(self) -> TileLayout:
        """One stage of this array as a swizzle layout: rows of ``cols`` elements padded to
        ``pitch``, and for XOR-chunked rows the CuTe swizzle that moves the chunks alike,
        Swizzle<3, 4, S> on byte offsets with S taking the row index (bit log2 of the row
        bytes) to the 16-byte chunk bits (bit 4): Swizzle<3,4,3> on 128-byte rows."""
        swizzle = IDENTITY
        if self.xor_chunks:
            if self.row_bytes & (self.row_bytes - 1):
                raise ValueError(f"{self.name}: XOR-chunked rows of {self.row_bytes} bytes are "
                                 "not a power of two; no CuTe swizzle moves them alike")
            swizzle = Swizzle(3, 4, self.row_bytes.bit_length() - 1 - 4)
        return TileLayout(self.cols, self.elem_bytes, self.pitch - self.cols, swizzle,
                          SwizzleUnit.BYTE)

    def logical(self, addr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(stage, row, col) of the element stored at byte address ``addr``."""
        off = np.asarray(addr, np.int64) - self.base_bytes
        stage, rem = off // self.stage_stride, off % self.stage_stride
        row, in_row = rem // self.row_bytes, rem % self.row_bytes
        if self.xor_chunks:
            in_row = ((in_row // 16) ^ (row % 8)) * 16 + in_row % 16
        return stage, row, in_row // self.elem_bytes


@dataclass(frozen=True, slots=True, eq=False)
class WarpAccess:
    """One warp instruction: ``addr`` are byte addresses per lane (shared: from the start
    of shared memory; global: from the start of the matrix named by ``array``)."""

    label: str
    array: str
    space: Space
    op: Op
    width_bytes: int
    addr: np.ndarray
    active: np.ndarray | None = None
    stage: int = 0

    def banks(self, rules: BankRules = HARDWARE) -> BankReport:
        if self.op is not Op.LOAD:  # the uniform-pair rule packs returned data: loads only
            rules = PHASES_ONLY
        return analyze_shared(self.addr, self.width_bytes, self.active, rules)

    def sectors(self) -> SectorReport:
        return analyze_global(self.addr, self.width_bytes, self.active)


@dataclass(frozen=True, slots=True)
class SharedCounts:
    instructions: int = 0
    wavefronts: int = 0
    conflicts: int = 0

    def __add__(self, other: SharedCounts) -> SharedCounts:
        return SharedCounts(self.instructions + other.instructions,
                            self.wavefronts + other.wavefronts,
                            self.conflicts + other.conflicts)

    def times(self, n: int) -> SharedCounts:
        return SharedCounts(self.instructions * n, self.wavefronts * n, self.conflicts * n)


NCU_METRICS = {
    "ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}
# asked for too where the profiler knows them: warp-level instruction counts, which check
# the modelled instruction stream itself, and cp.async's shared side (names less certain;
# an unknown metric reads n/a, and the ncu script retries without these on failure)
NCU_EXTRA_METRICS = {
    "ld_instructions": "smsp__inst_executed_op_shared_ld.sum",
    "st_instructions": "smsp__inst_executed_op_shared_st.sum",
    "cp_instructions": "smsp__inst_executed_op_ldgsts.sum",
    "cp_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "cp_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
}


@dataclass(frozen=True, slots=True)
class SharedTotals:
    """Shared-memory traffic of a whole kernel launch, as Nsight Compute counts it."""

    level: str
    M: int
    N: int
    K: int
    blocks: int
    k_steps: int
    ld: SharedCounts
    st: SharedCounts
    cp_async: SharedCounts  # shared writes of cp.async, reported apart from st
    vector_path: bool = True  # the kernel's VEC instantiation (K, N multiples of its width)
    caveat: str = ""  # what the model does not cover for this shape, if anything

    def metrics(self, extra: bool = False) -> dict[str, int]:
        """The model's value of each ncu metric name (and of the extra ones if asked)."""
        out = {NCU_METRICS["ld_conflicts"]: self.ld.conflicts,
               NCU_METRICS["st_conflicts"]: self.st.conflicts,
               NCU_METRICS["ld_wavefronts"]: self.ld.wavefronts,
               NCU_METRICS["st_wavefronts"]: self.st.wavefronts}
        if extra:
            x = NCU_EXTRA_METRICS
            out |= {x["ld_instructions"]: self.ld.instructions,
                    x["st_instructions"]: self.st.instructions,
                    x["cp_instructions"]: self.cp_async.instructions,
                    x["cp_wavefronts"]: self.cp_async.wavefronts,
                    x["cp_conflicts"]: self.cp_async.conflicts}
        return out

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"level": self.level, "M": self.M, "N": self.N, "K": self.K,
                               "blocks": self.blocks, "k_steps": self.k_steps,
                               "vector_path": self.vector_path, "caveat": self.caveat}
        for name, c in (("ld", self.ld), ("st", self.st), ("cp_async", self.cp_async)):
            out[name] = {"instructions": c.instructions, "wavefronts": c.wavefronts,
                         "conflicts": c.conflicts}
        return out


_BY_LEVEL: dict[str, type[LevelModel]] = {}


def model_class(level_id: str) -> type[LevelModel] | None:
    """The model class that names ``level_id`` (its ``level_id``), or None."""
    return _BY_LEVEL.get(level_id)


class LevelModel:
    """Base of the per-level models; subclasses fill in the geometry and the accesses.

    A subclass that sets ``level_id`` is that level's model: defining it is registering it
    (``__init_subclass__``), so adding a level needs no list kept by hand
    (docs/adding-a-level.md). A class without its own ``level_id`` is a shared base."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        level_id = cls.__dict__.get("level_id")
        if not level_id:
            return
        known = _BY_LEVEL.get(level_id)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise TypeError(f"two models of level {level_id!r}: {known.__module__}."
                            f"{known.__qualname__} and {cls.__module__}.{cls.__qualname__}")
        _BY_LEVEL[level_id] = cls

    level_id: str = ""
    bm: int = 32  # rows of C per block
    bn: int = 32  # cols of C per block
    bk: int = 32  # K per step (1 for levels without shared tiles: one k per "step")
    threads: int = 1024
    stages: int = 1
    elem_bytes: int = 4
    exact: bool = True  # False where the instruction stream is a guess
    sass_warp: int = 0  # the warp whose K loop the SASS check compares with the compiled one
    sass_k_steps: int = 1  # K steps in one trip of the compiled K loop (unrolled ones: more)
    notes: str = ""
    # template parameters for a model whose level is not in the registry (yet); a
    # registered level's parameters come from its registry entry only, so a retuned
    # level is modelled as it runs (tests/kernels/models/test_level_models.py checks no
    # model keeps a second copy)
    defaults: ClassVar[dict[str, int]] = {}

    # elements per vector on the kernel's fast (VEC) path; 1: no such path
    vector: int = 1

    def __init__(self, params: dict[str, int] | None = None) -> None:
        try:
            self.vector = registry.get(self.level_id).vector
        except KeyError:
            pass
        self.params: dict[str, int] = {**self.default_params(), **(params or {})}
        self.vector_path = True  # which instantiation shared_accesses describes
        self.setup(self.params)

    @classmethod
    def default_params(cls) -> dict[str, int]:
        """The level's template parameters as the registry has them (``defaults`` for a
        level the registry does not know); what ``params`` given to the model override."""
        try:
            return dict(registry.get(cls.level_id).params)
        except KeyError:
            return dict(cls.defaults)

    def uses_vector_path(self, M: int, N: int, K: int) -> bool:
        """As the host decides: VEC only where K and N are multiples of the width."""
        return self.vector > 1 and K % self.vector == 0 and N % self.vector == 0

    def caveat(self) -> str:
        """What the model does not cover on the current path ("" when it all is)."""
        return ""

    def setup(self, p: dict[str, int]) -> None:
        """Derive the geometry (bm, bn, bk, threads, stages) from the parameters."""

    # -- geometry --------------------------------------------------------------------
    @property
    def warps(self) -> int:
        return self.threads // WARP_SIZE

    def grid(self, M: int, N: int) -> tuple[int, int]:
        """(block rows, block cols) covering C."""
        return -(-M // self.bm), -(-N // self.bn)

    def block_order(self, gm: int, gn: int) -> np.ndarray:
        """(gm, gn) array: the launch index (linear blockIdx) of the block that computes
        each block tile of C. Row-major by default, column-major where blockIdx.x walks
        M (naive), and grouped where the kernel remaps blocks (the registry geometry's
        ``group_rows`` > 1 rows per group, walked column by column, as gs_block_coords
        does)."""
        try:
            level = registry.get(self.level_id)
            grid_x, swz = level.grid_x, level.launch_geometry(self.params).group_rows
        except KeyError:
            grid_x, swz = "N", 1
        order = np.empty((gm, gn), np.int64)
        for bid in range(gm * gn):
            if grid_x == "M":
                r, c = bid % gm, bid // gm
            elif swz <= 1:
                r, c = bid // gn, bid % gn
            else:
                first = bid // (swz * gn) * swz
                rows = min(gm - first, swz)
                inside = bid % (swz * gn)
                r, c = first + inside % rows, inside // rows
            order[r, c] = bid
        return order

    def k_steps(self, K: int) -> int:
        return -(-K // self.bk)

    def c_tile(self, block: tuple[int, int]) -> Tile:
        return Tile(block[0] * self.bm, block[1] * self.bn, self.bm, self.bn)

    def a_tile(self, block: tuple[int, int], k_step: int) -> Tile:
        return Tile(block[0] * self.bm, k_step * self.bk, self.bm, self.bk)

    def b_tile(self, block: tuple[int, int], k_step: int) -> Tile:
        return Tile(k_step * self.bk, block[1] * self.bn, self.bk, self.bn)

    def stage(self, k_step: int) -> int:
        return k_step % self.stages

    def thread_outputs(self, tid: int) -> np.ndarray:
        """(n, 2) array of the (row, col) of C, inside the block tile, thread ``tid``
        computes."""
        raise NotImplementedError

    def warp_mask(self, warp: int) -> np.ndarray:
        """(bm, bn) bool: the outputs the warp's 32 threads compute."""
        mask = np.zeros((self.bm, self.bn), bool)
        for lane in range(WARP_SIZE):
            rc = self.thread_outputs(warp * WARP_SIZE + lane)
            mask[rc[:, 0], rc[:, 1]] = True
        return mask

    def warp_tile(self, warp: int) -> Tile:
        """The bounding box of the warp's outputs inside the block tile."""
        rows, cols = np.nonzero(self.warp_mask(warp))
        return Tile(int(rows.min()), int(cols.min()), int(rows.max() - rows.min() + 1),
                    int(cols.max() - cols.min() + 1))

    # -- memory ----------------------------------------------------------------------
    def smem_arrays(self) -> list[SmemArray]:
        return []

    def shared_layout(self) -> TileLayout | None:
        """The layout of the level's first shared array (its padding and swizzle), where
        the swizzle explorer starts; None for a level without shared memory."""
        arrays = self.smem_arrays()
        return arrays[0].tile_layout() if arrays else None

    def shared_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """The shared stores and loads warp ``warp`` issues in K step ``k_step``."""
        return []

    def main_loop_accesses(self, warp: int, k_step: int) -> list[WarpAccess]:
        """The shared instructions of the K loop, which the totals multiply by K steps and
        the SASS check compares with the compiled loop: all of ``shared_accesses`` except
        where a level also lists once-per-tile epilogue accesses there (the Hopper levels)."""
        return self.shared_accesses(warp, k_step)

    def k_loop_copies(self) -> list[LevelModel]:
        """A model per copy of the K loop the compiled kernel holds, the hot one first:
        one, unless a level compiles a specialised copy (fp8_block_scaled's for the tiles
        whose second half lies past N)."""
        return [self]

    def global_accesses(self, warp: int, k_step: int, M: int, N: int, K: int,
                        block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """The global loads of A and B warp ``warp`` issues in K step ``k_step``."""
        raise NotImplementedError

    def store_accesses(self, warp: int, M: int, N: int,
                       block: tuple[int, int] = (0, 0)) -> list[WarpAccess]:
        """The global stores of C of warp ``warp`` (the epilogue)."""
        raise NotImplementedError

    # -- totals ----------------------------------------------------------------------
    def step_counts(self, k_step: int, rules: BankRules = HARDWARE
                    ) -> dict[Op, SharedCounts]:
        """Shared counts of one block (all warps) in one K step."""
        out = {op: SharedCounts() for op in Op}
        memo: dict[tuple[int, bytes, bytes], tuple[int, int]] = {}
        for w in range(self.warps):
            for acc in self.main_loop_accesses(w, k_step):
                act = b"" if acc.active is None else acc.active.tobytes()
                key = (acc.width_bytes, acc.addr.tobytes(), act)
                if key not in memo:
                    rep = acc.banks(rules)
                    memo[key] = (rep.wavefronts, rep.conflicts)
                wf, cf = memo[key]
                out[acc.op] = out[acc.op] + SharedCounts(1, wf, cf)
        return out

    def totals(self, M: int, N: int, K: int, rules: BankRules = HARDWARE) -> SharedTotals:
        gm, gn = self.grid(M, N)
        steps = self.k_steps(K)
        period = min(self.stages, steps)
        per_block = {op: SharedCounts() for op in Op}
        saved = self.vector_path
        self.vector_path = self.uses_vector_path(M, N, K) or self.vector == 1
        try:
            for r in range(period):
                n_r = len(range(r, steps, self.stages))
                for op, c in self.step_counts(r, rules).items():
                    per_block[op] = per_block[op] + c.times(n_r)
            vec, caveat = self.vector_path, self.caveat()
        finally:
            self.vector_path = saved
        blocks = gm * gn
        return SharedTotals(self.level_id, M, N, K, blocks, steps,
                            per_block[Op.LOAD].times(blocks),
                            per_block[Op.STORE].times(blocks),
                            per_block[Op.CP_ASYNC].times(blocks), vec, caveat)


def lanes_of(warp: int) -> np.ndarray:
    """Thread ids of a warp's lanes."""
    return warp * WARP_SIZE + LANES


def global_access(label: str, array: str, elem_index: np.ndarray, width_bytes: int,
                  elem_bytes: int, valid: np.ndarray | None = None,
                  op: Op = Op.LOAD) -> WarpAccess:
    """A global access from element indices (row-major offsets) of a matrix."""
    return WarpAccess(label, array, Space.GLOBAL, op, width_bytes,
                      np.asarray(elem_index, np.int64) * elem_bytes, valid)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)



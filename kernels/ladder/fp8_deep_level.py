"""The fp8_deep level's entry and its per-shape rules (tile width, stages, grid), kept out
of registry.py and hopper_levels.py so that the table stays readable.

The rules, each a function of (M, N, K, SMs) only:

- tile width BN (``deep_tile_width``): the tile is 256 rows by BN columns, BN from 64 to
  128 in steps of 8 (the widths the kernel has a wgmma for). The run takes as many waves
  as the busiest SM has tiles; fewest waves first, then the fullest last wave, then the
  wider tile (DeepGEMM's order of preference for its BLOCK_N). N = 2112 at M = 4096: 128
  gives 16 x 17 tiles, 3 waves on 132 SMs with 8 tiles in the last; 88 gives 16 x 24 =
  384, 3 waves with 120 in the last, so 88.
- C's staging (``deep_epc``, EPC): a warpgroup's whole 128 x BN result (EPC 0), or one
  32 x 64 box at a time through a ring of three 4 KB buffers (EPC 1) where BN % 64 == 0
  and a tile has at least 64 K blocks, so that a fourth stage fits at BN = 128.
- stages (``deep_stages``): as many as fit in the 227 KB of shared memory a block may
  have (4 for BN <= 88, 3 for 128, 4 for 128 with EPC 1), and no more than the K blocks
  of a tile.
- grid (``deep_grid``): the tiles' waves spread evenly over as few SMs as give that many
  waves (4096^3: 512 tiles, 4 waves on 132 SMs, so 128 CTAs of 4 tiles each), rounded up
  to whole clusters. SMs left idle draw no power; the waves are as many either way.
- the ring (``deep_ring``, RING): the stages run on from tile to tile where a CTA has
  more than one tile of few K blocks that do not fill whole rounds of the stages.
- clusters (``deep_cluster``, CL): 2-CTA clusters sharing the A tile by multicast where a
  tile has at least 32 K blocks and a CTA's tiles more than 128 in all, one CTA below.
- the K blocks (``deep_ksteps``, KS): K / 128 compiled in, one build per K (as DeepGEMM's
  JIT builds per shape); a build for another K is refused before launch
  (``ksteps_problem``), KS = 0 reads K at run time.
- the tile walk's groups (``deep_group_width``, GW): 8 tile columns a group where a tile
  has at most 4 K blocks on a grid of at least 16 x 128 tiles, 16 elsewhere.
- the row scales' path (``scales_by_tma``, SCT): by TMA with each stage's data where M % 4
  == 0 (a tensor map's 16-byte row pitch), else copied by the producer warp's lanes.
"""

from __future__ import annotations

from .level import MAX_PARAM, Geometry, Level, OutputFormat, Precision, Scaling

DEEP_TILE_ROWS = 256  # BM: two consumer warpgroups of two 64-row sub-tiles
DEEP_WIDTHS = tuple(range(64, 129, 8))  # BN with a wgmma.m64nBNk32 in fp8_deep_wgmma.cuh
SMEM_PER_BLOCK = 232448  # the opt-in maximum of an H100/H200 block
SCALE_STAGE_BYTES = 272 * 4  # 256 row scales of A, 2 block scales of Bt, padding


# EPC 1: C staged in boxes of 32 x 64 BF16, a ring of three a warpgroup (kernels/cuda/
# fp8_deep.cu's C_BOX and C_STAGE; the access model draws the same)
C_BOX_ROWS, C_BOX_COLS, C_BOX_RING = 32, 64, 3
C_BOX_BYTES = C_BOX_ROWS * C_BOX_COLS * 2


def deep_smem(p: dict[str, int]) -> int:
    """STAGES of A (256 x 128 bytes), Bt (BN x 128) and their scales; each consumer's C
    staging (128 x BN BF16, or with EPC 1 a ring of three 32 x 64 boxes); 1 KB of slack
    for the 1024-byte alignment."""
    c_stage = C_BOX_RING * C_BOX_BYTES if p.get("EPC", 0) else 2 * 64 * p["BN"] * 2
    return (p["STAGES"] * (p["BM"] * p["BK"] + p["BN"] * p["BK"] + SCALE_STAGE_BYTES)
            + 2 * c_stage + 1024)


def deep_tiles(M: int, N: int, bn: int) -> int:
    """The 256 x bn tiles of an M x N output."""
    return -(-M // DEEP_TILE_ROWS) * -(-N // bn)


def deep_waves(M: int, N: int, bn: int, sm_count: int) -> tuple[int, int]:
    """(waves, tiles in the last wave) of 256 x bn tiles on sm_count SMs."""
    tiles = deep_tiles(M, N, bn)
    waves = -(-tiles // sm_count)
    return waves, tiles - (waves - 1) * sm_count


def deep_tile_width(M: int, N: int, sm_count: int) -> int:
    """BN: fewest waves, then the fullest last wave, then the widest tile."""
    def key(bn: int) -> tuple[int, int, int]:
        waves, last = deep_waves(M, N, bn, sm_count)
        return (waves, -last, -bn)

    return min(DEEP_WIDTHS, key=key)


EPC_MIN_KSTEPS = 64  # EPC 1 where a tile has at least this many K blocks


def deep_epc(bn: int, K: int) -> int:
    """EPC 1 (C staged box by box, and a fourth stage in the room it leaves) where the C
    boxes are 64 columns wide (BN % 64 == 0) and a tile has many K blocks. Measured beside
    each other in one loop (EPC 1 with four stages against EPC 0 with three, 1980 MHz): on
    an H100 (stretches 23-24) +6.1% at 8192^3, +1.5-4.1% at 32 to 128 K blocks, nothing or
    worse at 24 and fewer (-3.4% at 8192 x 8192 x 3072, -18% at K = 512); on the H200
    (stretch 25, three loops of 80 rounds agreeing within 0.3%), whose memory is faster,
    +0.2% at 8192^3 and +0.7% at 4096 x 7168 x 16384 (64 and 128 K blocks), but -1.8% at
    4096^3, -1.5% at 8192 x 8192 x 4096 (32) and -0.6% at 4096 x 4096 x 7168 (56): the
    fourth stage hides less there than the epilogue's sixteen barriers a tile cost."""
    return int(bn % 64 == 0 and K // 128 >= EPC_MIN_KSTEPS)


def deep_stages(bn: int, K: int, epc: int = 0) -> int:
    """The most stages (4 at most) that fit beside the C staging, at most K / 128."""
    base = {"BM": DEEP_TILE_ROWS, "BN": bn, "BK": 128, "EPC": epc}
    for stages in (4, 3, 2):
        if deep_smem({**base, "STAGES": stages}) <= SMEM_PER_BLOCK:
            return max(1, min(stages, K // 128))
    return 1


def scales_by_tma(M: int) -> bool:
    """Whether A's row scales (K/128 rows of M floats) can come by TMA: a tensor map's row
    pitch must be a multiple of 16 bytes."""
    return M % 4 == 0


RING_MAX_KSTEPS = 4  # RING 1 where a tile has at most this many K blocks


def deep_ring(M: int, N: int, K: int, bn: int, stages: int, sm_count: int) -> int:
    """RING 1 (the ring of stages running on from tile to tile) where it pays: a CTA runs
    more than one tile, a tile's K blocks do not fill whole rounds of the stages (RING 0
    then passes stages empty and the next tile's loads wait for the last K block), and a
    tile has few K blocks, so that the wait is a large part of it. Measured beside each
    other in one loop (H200, 1980 MHz, stretch 21): +12% at 4096 x 32768 x 512 (4 K
    blocks, 3 stages) and +4.4% at 4096 x 7168 x 512; -0.7 to -4.8% at K = 1024 (8 K
    blocks: three shapes) and -0.1 to -2.3% at DeepGEMM's seven other shapes (12 to 128 K
    blocks), where the K loop compiled once per offset of the ring costs more than it
    saves."""
    ksteps = K // 128
    tiles = deep_tiles(M, N, bn)
    ctas = deep_grid(tiles, sm_count, {"CL": 1})
    return int(tiles > ctas and ksteps % stages != 0 and ksteps <= RING_MAX_KSTEPS)


CL_MIN_KSTEPS = 32  # 2-CTA clusters where a tile has at least this many K blocks
CL_MIN_CTA_KSTEPS = 129  # and a CTA's tiles at least this many in all


def deep_cluster(M: int, N: int, K: int, bn: int, sm_count: int) -> int:
    """CL 2 (neighbouring tiles of a tile row on a 2-CTA cluster, the A tile multicast to
    both: a third fewer bytes from L2 a stage, so less power and a higher clock under the
    cap) where a tile has many K blocks and a CTA many tiles' worth; CL 1 where the
    stage's coupling (a stage refilled only once both CTAs freed it) costs more than that
    saves. Measured beside each other in one loop with the release by two lanes (H100,
    1980 MHz, stretch 29): +3.7% at 4096 x 2112 x 7168 and +4.5% at 4096 x 4096 x 7168
    (56 K blocks), +1.4% at 8192^3 and 4096 x 7168 x 16384 (64 and 128), +0.4% at 8192 x
    8192 x 4096 (32); -0.8% at 8192 x 8192 x 3072 and -2.5% at 4096 x 4096 x 3072 (24),
    -3.5..-4.5% at 4096 x 7168 x 2048 (16), -1.9% at 4096 x 24576 x 1536 (12), -3.4% at
    K = 512 (4). Where a CTA's tiles hold 128 K blocks or fewer in all (4096^3: 4 tiles of
    32), the clusters gained nothing on H100s (-1.0..0% at four shapes, stretch 31) and
    cost 1.5% at 4096^3 on the H200 (stretch 30, two loops); above that they gained up to
    6.1% (8192 x 8192 x 4096: 16 tiles of 32)."""
    ksteps = K // 128
    waves, _ = deep_waves(M, N, bn, sm_count)
    return 2 if ksteps >= CL_MIN_KSTEPS and waves * ksteps >= CL_MIN_CTA_KSTEPS else 1


GW_WIDE, GW_NARROW = 16, 8  # tile columns a group of the tile walk holds
GW_MAX_KSTEPS = 4  # the narrow group where a tile has at most this many K blocks,
GW_MIN_ROWS, GW_MIN_COLUMNS = 16, 128  # and the grid at least this many tile rows, columns


def deep_group_width(M: int, N: int, K: int, bn: int) -> int:
    """GW: the tile columns of a group of the tile walk (tiles in groups of GW columns, row
    by row inside a group). 8 where a tile has few K blocks (its time is mostly its
    stores of C) on a grid of many tile rows and columns, 16 elsewhere. Measured beside
    each other in one loop (H100s, 1980 MHz, stretches 37-38): GW 8 against 16 +6.9% at
    4096 x 32768 x 512 (16 x 256 tiles of 4 K blocks; GW 2-8 +5.7..10.7% on two other
    H100s), +4.7% at 4096 x 16384 x 512, +3.2% at 8192 x 32768 x 512, +3.5% at 4096 x
    32768 x 256 (2 K blocks); nothing at 4096 x 7168 x 512 (56 tile columns), 2048 x 32768
    x 512 (8 tile rows: GW 4 -0.8%) or 8192 x 16384 x 1024 (8 K blocks), -1.6% (GW 4) at
    4096 x 32768 x 1024, and 1-4% slower below 16 at 4096^3 (32 K blocks). The rule
    against GW 16 in one loop on a fourth H100 (stretch 38): +7.1%, +1.1%, +4.8% and +2.7%
    at the four shapes it narrows, every launch verified."""
    rows, columns = -(-M // DEEP_TILE_ROWS), -(-N // bn)
    few = K // 128 <= GW_MAX_KSTEPS and rows >= GW_MIN_ROWS and columns >= GW_MIN_COLUMNS
    return GW_NARROW if few else GW_WIDE


MAX_KSTEPS = MAX_PARAM  # the largest template parameter a level takes


def deep_ksteps(K: int) -> int:
    """KS: the K blocks of a tile as a compile-time constant of the build (K / 128), as
    DeepGEMM compiles its kernel per K: the last round's stages passed or filled are then
    known to the compiler, which drops the branches and the code of the rounds that never
    come (NVRTC 13.5 at 4096 x 2112 x 7168: 283 -> 181 branches, 78 -> 32 barrier
    operations). 0 (K read at run time) past MAX_KSTEPS."""
    ksteps = K // 128
    return ksteps if ksteps <= MAX_KSTEPS else 0


def ksteps_problem(M: int, N: int, K: int, p: dict[str, int]) -> str | None:
    """Why a build of fp8_deep cannot run at K: it was built for another K (KS != 0)."""
    ks = p.get("KS", 0)
    if ks and ks != K // 128:
        return (f"built with KS={ks}, the K blocks of K={ks * 128}; K={K} has {K // 128}: "
                "leave KS to the shape rule, or give KS=0 to read K at run time")
    return None


def deep_shape_params(M: int, N: int, K: int, sm_count: int) -> dict[str, int]:
    bn = deep_tile_width(M, N, sm_count)
    epc = deep_epc(bn, K)
    stages = deep_stages(bn, K, epc)
    return {"BN": bn, "STAGES": stages, "SCT": int(scales_by_tma(M)),
            "RING": deep_ring(M, N, K, bn, stages, sm_count), "EPC": epc,
            "CL": deep_cluster(M, N, K, bn, sm_count), "KS": deep_ksteps(K),
            "GW": deep_group_width(M, N, K, bn)}


def deep_grid(tiles: int, sm_count: int, p: dict[str, int]) -> int:
    """CTAs: the waves of min(tiles, SMs) CTAs, spread over as few as give as many waves,
    in whole clusters of CL."""
    cl = p.get("CL", 1)
    cap = max(cl, sm_count // cl * cl)
    waves = -(-tiles // cap)
    ctas = -(-tiles // waves)
    return min(cap, -(-ctas // cl) * cl)


def deep_geometry(p: dict[str, int]) -> Geometry:
    """A producer warpgroup and two consumer warpgroups per 256 x BN tile; GW tile
    columns walked together, row by row."""
    return Geometry((384, 1), (p["BM"], p["BN"]), p["BK"], p["GW"])


FP8_DEEP = Level(
    id="fp8_deep", title="FP8 E4M3 block-scaled, DeepGEMM's schedule",
    precision=Precision.FP8, reference="cublaslt_fp8", scaling=Scaling.BLOCKS,
    adds="fp8_block_scaled's inputs and promotion on DeepGEMM's schedule: 256-row tiles "
         "whose width BN (64-128) is picked per shape so the waves come out whole; each "
         "consumer warpgroup runs two 64-row sub-tiles, each one wgmma.m64nBNk32 group, one "
         "wait and one promotion per 128 of K for the whole tile width; each tile's K "
         "blocks start at stage 0 so every stage index is a compile-time constant, or, "
         "where a CTA's tiles have at most 4 K blocks that do not fill whole rounds of "
         "the stages (RING 1), the ring of stages runs on from tile to tile, the K loop "
         "compiled once per offset of the ring; the "
         "row scales of A carried into each stage by TMA with its data (by the producer's "
         "lanes where M % 4 != 0) and the Bt scales by two lanes' cp.async, all completing "
         "on the stage's barrier; the consumers' shared addresses held in registers across "
         "the K loop; C staged per warpgroup and stored by TMA without waiting (where a tile "
         "has 32 K blocks or more, one 32 x 64 box at a time through a ring of three, "
         "which leaves room for a fourth stage: EPC 1); the grid "
         "shrunk to the fewest SMs that give the same waves; where a tile has 32 K blocks or "
         "more and a CTA's tiles more than 128 in all, 2-CTA clusters on neighbouring "
         "tiles, the first CTA multicasting the shared A tile to both (CL 2; each consumer "
         "warp frees a stage on both CTAs at once, lanes 0 and 1 in one instruction); and "
         "the K blocks compiled in (KS = K / 128, one build per K, as DeepGEMM's JIT builds "
         "per shape), so a tile's last round has one form and no branches.",
    follows="DeepGEMM (deepseek-ai, daec8fd): fp8_gemm.cuh's schedule and its block-size "
            "heuristics; PTX ISA: multicast::cluster, mapa, cp.async.mbarrier.arrive",
    source="fp8_deep.cu", kernel="fp8gemm_deep",
    params={"BM": DEEP_TILE_ROWS, "BN": 128, "BK": 128, "STAGES": 3, "CL": 1, "GW": GW_WIDE,
            "WREL": 2, "SCT": 1, "RING": 0, "EPC": 0, "KS": 0},
    shape_params=deep_shape_params, params_rule=ksteps_problem, grid_rule=deep_grid,
    host="fp8_deep",
    geometry=deep_geometry, arch="sm_90a", b_layout="nk", persistent=True,
    trace_observer=True,
    k_multiple=128, k_reason="one FP32 scale per 128 of K", edge_variant=False,
    output_format=OutputFormat.BF16, dyn_smem=deep_smem,
    notes="Measured beside DeepGEMM in one timing loop (benchmarks/fp8_side_by_side.py, H200, "
          "burst, 1980 MHz, 2026-12-05, stretch 25): 1325 against 1365 TFLOPS at 4096^3, "
          "1455 against 1468 at 8192^3, 0.97-1.06x DeepGEMM at its eight shapes (1.00 or "
          "more at three; 1.063 at K = 512, where a tile has 4 K blocks and the ring running "
          "on from tile to tile, RING 1, gained 13%: 0.93 before), ahead of fp8_block_scaled "
          "at every one. "
          "What it took: every consumer warp arriving on a stage's barrier (WREL 2: "
          "+0.8-2.2%), and, beside DeepGEMM with its multicast off (which gains it 0-2.5%), "
          "the row scales by TMA, the consumers' addresses held (the compiler had recomputed "
          "them from %tid before each K block's first wgmma, so a warpgroup's warps reached "
          "it apart) and the scales' form a template parameter (SCT; as a runtime flag the "
          "two forms cost registers): 0.94 -> 0.99 of DeepGEMM at 4096^3 and 8192^3. "
          "With 2-CTA clusters from 32 K blocks and a stage freed on both CTAs by two lanes "
          "in one instruction (H200, 2026-12-06, three loops): 1.002 of DeepGEMM at 8192^3, "
          "0.996 at 4096 x 7168 x 16384, 0.98-0.99 at 4096 x 2112 x 7168 and 4096 x 4096 "
          "x 7168, 0.97-0.98 at 4096^3, where one CTA a cluster ran 1.5% faster on the "
          "H200 while H100s had favoured the clusters. "
          "With the K blocks compiled in for each shape (KS: the loop's bounds known to the "
          "compiler, fewer branches and barrier operations) and clusters only where a CTA "
          "has more than 128 K blocks' work (H200, 2026-12-06, one loop of 30 rounds): "
          "0.987-1.097 of DeepGEMM at its eight shapes, 1.006 at 8192^3, 0.990 at 4096^3, "
          "1.00 or more at four.")


"""An attempt on fp8_deep (issue 42): 2 x 2 clusters that share A along a tile row and Bt
along a tile column by TMA multicast, a copy of the level's kernel source written to
DIR/quad/, to time beside the level with
``fp8_side_by_side.py --variant 'fp8_deep Q={"CL": 4}' --variant-source 'fp8_deep Q=DIR/quad'``.

A K block then brings 24 KB a CTA from L2 at 256 x 128 tiles, against the 2-CTA form's 32
KB (A shared) and one CTA's 48 KB. What the copy changes, and nothing else:

- CL = 4 is taken (``__cluster_dims__`` already follows CL); the CTA of rank 2 r + c takes
  tile (2 qm + r, 2 qn + c) of quad q, the quads walked in the level's grouped order with
  GW / 2 quad columns a group; every CTA of a quad has a tile (those past the edge load
  zeros and store nothing), so no CTA waits for a peer that has stopped;
- the producer of column 0 loads A into its tile row's two CTAs, the producer of row 0
  loads Bt into its tile column's two;
- a stage is refilled once the CTA, its row peer and its column peer freed it: each
  releasing warp's lanes 0, 1 and 2 arrive on the three CTAs' "empty" barriers.

Measured (docs/perf-notes.md, "2 x 2 clusters"): four-CTA clusters fit 30 at a time on
the 132-SM part (120 SMs), so the level's grid rule (whole clusters over 128-132 SMs)
must be capped at 120 SMs for CL 4, or two clusters run after the rest.

    python3 benchmarks/attempts/fp8_deep_quad.py DIR

The copy is made from the level's file as it is (``kernels/cuda/fp8_deep.cu``); a change
there that moves the text it replaces makes this script stop with the text it missed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fp8_deep_noscale import LEVEL_SOURCE, _once  # a sibling: on the path as a script

QUAD_TILE = '''\
// CL 4: tile t = 4 q + rank of a 2 x 2 block of tiles (quad q in the grouped order of
// ceil(tm / 2) x ceil(tn / 2) quads, GW / 2 quad columns a group); rank = 2 row + col.
template <int CL>
__device__ __forceinline__ void gs_dq_tile(int t, int tm, int tn, int GW, int& bm, int& bn) {
    if constexpr (CL == 4) {
        int qm, qn;
        gs_dp_tile(t >> 2, (tm + 1) / 2, (tn + 1) / 2, (GW + 1) / 2, qm, qn);
        bm = 2 * qm + ((t >> 1) & 1);
        bn = 2 * qn + (t & 1);
    } else {
        gs_dp_tile(t, tm, tn, GW, bm, bn);
    }
}

// The persistent schedule:'''

QUAD_SCHEDULE = '''\
        if constexpr (CL == 1) {
            t = round++ * gridDim.x + blockIdx.x;
            peer = false;
        } else if constexpr (CL == 4) {  // `tiles`: the quads; each CTA of one has a tile
            const int q = round++ * gs_dp_sreg_clusters() + gs_dp_sreg_cluster_id();
            t = 4 * q + gs_dp_sreg_cluster_rank();
            peer = true;
            return q < tiles;
        } else {'''

QUAD_LOADS = '''\
                        if constexpr (CL == 4) {
                            // column 0 loads A for its tile row, row 0 Bt for its column
                            if ((rank & 1) == 0) {
                                const unsigned short rowmask = 0x3u << (rank & 2);
                                gs_dp_tma_load_multicast(a_dst, &tmA, &full[s], ks * BK,
                                                         bm * BM, rowmask);
                                gs_dp_tma_load_multicast(a_dst + HALF_A, &tmA, &full[s],
                                                         ks * BK, bm * BM + 128, rowmask);
                            }
                            if (rank < 2)
                                gs_dp_tma_load_multicast(b_base + s * B_BYTES, &tmB, &full[s],
                                                         ks * BK, bn * BN,
                                                         (unsigned short)(0x5u << (rank & 1)));
                        } else if (multicast) {  // rank 0 loads the whole A tile into both CTAs'''

QUAD_RELEASE = '''\
                if constexpr (CL == 4) {
                    // lanes 0, 1 and 2 of each releasing warp: on its own CTA's barrier, its
                    // row peer's (rank ^ 1, which writes A here) and its column peer's
                    // (rank ^ 2, Bt)
                    if (q_rel3) gs_dp_arrive_remote(&empty[s], rank ^ (t128 & 3));
                } else if constexpr (CL == 2) {
                    // lanes 0 and 1'''

B_LOAD = ("                        "
          "gs_tma_load_2d(b_base + s * B_BYTES, &tmB, &full[s], ks * BK, bn * BN);\n")
REL2 = ("        const bool q_rel2 = WREL == 2 ? t128 % 32 < 2 : t128 < 2;  "
        "// CL 2: lanes 0 and 1 release\n")

# (text of the level, its replacement), each found exactly once, in this order
CHANGES = (
    ("                gs_dp_tile(t, tm, tn, GW, bm, bn);\n                bool multicast",
     "                gs_dq_tile<CL>(t, tm, tn, GW, bm, bn);\n                bool multicast"),
    ("            gs_dp_tile(t, tm, tn, GW, bm, bn);\n            GS_TRACE_C(TILE_BEGIN",
     "            gs_dq_tile<CL>(t, tm, tn, GW, bm, bn);\n            GS_TRACE_C(TILE_BEGIN"),
    ("// The persistent schedule:", QUAD_TILE),
    ('''\
        if constexpr (CL == 1) {
            t = round++ * gridDim.x + blockIdx.x;
            peer = false;
        } else {''', QUAD_SCHEDULE),
    ('static_assert(CL == 1 || CL == 2, "clusters of one or two CTAs");',
     'static_assert(CL == 1 || CL == 2 || CL == 4, '
     '"clusters of one, two or 2 x 2 CTAs");'),
    ("const unsigned rank = CL == 2 ? gs_dp_sreg_cluster_rank() : 0;",
     "const unsigned rank = CL >= 2 ? gs_dp_sreg_cluster_rank() : 0;"),
    ("gs_mbar_init(&empty[s], (WREL == 2 ? 8 : 2) * CL);",
     "gs_mbar_init(&empty[s], (WREL == 2 ? 8 : 2) * (CL == 4 ? 3 : CL));"),
    ("    if constexpr (CL == 2)\n        gs_dp_cluster_sync();  // the peer's barriers exist",
     "    if constexpr (CL >= 2)\n        gs_dp_cluster_sync();  // the peer's barriers exist"),
    ("GsDpSchedule<CL> sched{tm * tn};",
     "GsDpSchedule<CL> sched{CL == 4 ? ((tm + 1) / 2) * ((tn + 1) / 2) : tm * tn};"),
    ("                        if (multicast) {  // rank 0 loads the whole A tile into both CTAs",
     QUAD_LOADS),
    (B_LOAD + "                    }\n",
     "                        if constexpr (CL != 4)\n    " + B_LOAD + "                    }\n"),
    ("                if constexpr (CL == 2) {\n                    // lanes 0 and 1",
     QUAD_RELEASE),
    (REL2, REL2 + "        const bool q_rel3 = WREL == 2 ? t128 % 32 < 3 : t128 < 3;  "
     "// CL 4: lanes 0, 1 and 2\n"),
    ("if constexpr (CL == 2) gs_dp_cluster_sync();  // no CTA leaves",
     "if constexpr (CL >= 2) gs_dp_cluster_sync();  // no CTA leaves"),
)


def quad(source: str) -> str:
    for old, new in CHANGES:
        _once(source, old)
        source = source.replace(old, new)
    return source


def write(folder: Path, source: str | None = None) -> Path:
    """The copy, ``folder/quad/fp8_deep.cu``."""
    text = quad(LEVEL_SOURCE.read_text(encoding="utf-8") if source is None else source)
    out = folder / "quad" / LEVEL_SOURCE.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    print(f"quad: {write(ap.parse_args().folder)}")


if __name__ == "__main__":
    main()

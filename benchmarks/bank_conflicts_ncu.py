"""Shared-memory bank conflicts and wavefronts: the access model against Nsight Compute.

For every SIMT level (default) at M = N = K = 1024, runs the level once under

    ncu --clock-control none --metrics <the four metrics> --csv --page raw
        -k regex:<kernel> -c 1 python3 -m gemmscope.kernels.engine.launch LEVEL M N K
        --one-block-per-sm

(launched with enough unused shared memory that blocks do not share an SM: co-resident
blocks contend for the banks, which l1tex counts as conflicts no block's pattern has;
``--as-launched`` profiles the runner's launch instead, to see that residue)
and prints model vs measured with the difference in percent (plus the plain 4-phase
model's value, without the uniform-pair rule for 128-bit reads), and writes JSON. Unless
--core-only, it also asks for the shared ld/st and cp.async instruction counts (and
cp.async's shared wavefronts and conflicts), which check the modelled instruction
stream; if ncu rejects those names it retries with the four core metrics.

    python3 benchmarks/bank_conflicts_ncu.py [--size 1024] [--levels a,b] [--ncu ncu]
                                             [--json out/bank_conflicts_ncu.json]
                                             [--as-launched]
    python3 benchmarks/bank_conflicts_ncu.py --from-dir out   # CSVs of ncu_levels.sh
    python3 benchmarks/bank_conflicts_ncu.py --smoke  # CI: a stand-in ncu, made-up counters

Needs a GPU, CuPy and ncu (profiling counters allowed for the user). Imports no Qt.
The ncu command, the run and the CSV are gemmscope.kernels.profile.ncu's (which
`gemmscope record --ncu` uses too); this script is the table around them.
cp.async's shared writes are not STS: the model reports them apart (``cp_async`` in the
JSON) and compares only ld/st.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import _smoke
from _args import level_ids, square_size

from gemmscope.kernels.models import SIMT_LEVELS, model_for, totals
from gemmscope.kernels.models.banks import PHASES_ONLY
from gemmscope.kernels.models.level_model import NCU_EXTRA_METRICS, NCU_METRICS
from gemmscope.kernels.models.ncu_compare import compare, format_table
from gemmscope.kernels.profile.ncu import find_ncu, from_csv_file, ncu_command, profile

__all__ = ["main", "ncu_command"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=square_size, default=1024, help="M = N = K (default 1024)")
    ap.add_argument("--levels", type=level_ids(SIMT_LEVELS), default=",".join(SIMT_LEVELS),
                    help="comma-separated level ids (default: every SIMT level)")
    ap.add_argument("--ncu", default="ncu", help="the ncu executable")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per level")
    ap.add_argument("--as-launched", action="store_true",
                    help="profile the runner's launch (blocks share SMs) instead of one "
                         "block per SM")
    ap.add_argument("--json", default="out/bank_conflicts_ncu.json", help="where to write")
    ap.add_argument("--core-only", action="store_true",
                    help="ask only for the four bank-conflict and wavefront metrics")
    ap.add_argument("--from-dir", default=None,
                    help="do not run ncu: read DIR/ncu_<level>.csv, as written by "
                         "benchmarks/ncu_levels.sh")
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if args.smoke:  # the whole path, ncu's command line to the table, at a small size
        folder = Path(tempfile.mkdtemp())
        args.ncu = _smoke.stand_in_ncu(folder, [*NCU_METRICS.values(),
                                                *NCU_EXTRA_METRICS.values()])
        args.size, args.levels, args.from_dir = 256, ["smem_tiled", "smem_padded"], None
        args.json = str(folder / "bank_conflicts_ncu.json")
    if args.from_dir is None and find_ncu(args.ncu) is None:
        print(f"ncu not found ({args.ncu!r}); pass --ncu /path/to/ncu", file=sys.stderr)
        return 2
    M = N = K = args.size
    rows = []
    report: dict[str, Any] = {"M": M, "N": N, "K": K,
                              "launch": "as_launched" if args.as_launched else "one_block_per_sm",
                              "metrics": list(NCU_METRICS.values()),
                              "extra_metrics": list(NCU_EXTRA_METRICS.values()),
                              "levels": {}}
    for level_id in args.levels:
        model = totals(level_id, M, N, K)
        phases_only = model_for(level_id).totals(M, N, K, PHASES_ONLY)
        if args.from_dir is not None:
            prof = from_csv_file(Path(args.from_dir) / f"ncu_{level_id}.csv", level_id,
                                 M, N, K)
        else:
            prof = profile(args.ncu, level_id, M, N, K, args.timeout, not args.core_only,
                           not args.as_launched)
        cmp_rows = compare(model, prof.row, phases_only)
        rows += cmp_rows
        report["levels"][level_id] = {**prof.as_dict(), "model": model.as_dict(),
                                      "model_phases_only": phases_only.as_dict(),
                                      "comparison": [r.as_dict() for r in cmp_rows]}
        if prof.row is None:
            print(f"{level_id}: {prof.error}\n{prof.stderr_tail}", file=sys.stderr)
    print(format_table(rows))
    for level_id, entry in report["levels"].items():
        if entry["model"]["caveat"]:
            print(f"{level_id}: {entry['model']['caveat']}")
        cp = entry["model"]["cp_async"]
        if cp["instructions"]:
            print(f"{level_id}: cp.async shared writes (model only, not in st): "
                  f"{cp['wavefronts']:,} wavefronts, {cp['conflicts']:,} conflicts")
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where the bank conflicts that no instruction explains come from (GPU machine, ncu).

    python3 benchmarks/ncu_residue.py [--size 1024] [--levels a,b] [--json out.json]
    python3 benchmarks/ncu_residue.py --smoke  # CI: a stand-in ncu, made-up counters

For each SIMT level, profiles one launch at M = N = K = SIZE under ncu three times: as
built; with every global load compiled to bypass L1 (ptxas -dlcm=cg through
GEMMSCOPE_NVRTC_OPTIONS); and as built but launched with one block per SM (unused dynamic
shared memory keeps a second block off; ``python -m gemmscope.kernels.engine.launch ...
--one-block-per-sm``, the launch the ncu comparison uses). For loads and stores it
prints l1tex's bank conflicts and wavefronts, the wavefronts attributed to shared-memory
instructions in the SASS, and the access model's conflicts. The l1tex counts minus the
SASS-attributed ones are the residue: the L1-bypass build tests whether it comes from L1
fills of global loads, the one-block launch whether it comes from co-resident blocks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _smoke
from _args import level_ids, square_size

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import SIMT_LEVELS, totals
from gemmscope.kernels.models.ncu_compare import parse_raw_csv
from gemmscope.kernels.profile.ncu import launch_command

METRICS = {
    f"{op}_{what}": name.format(op=op)
    for op in ("ld", "st")
    for what, name in (
        ("conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"),
        ("wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
        ("sass_wavefronts", "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
        ("instructions", "smsp__inst_executed_op_shared_{op}.sum"))
}
# label -> (extra NVRTC options, launch with one block per SM)
BUILDS = {"as built": ("", False), "L1 bypass (-dlcm=cg)": ("-Xptxas=-dlcm=cg", False),
          "1 block per SM": ("", True)}


def profile(ncu: str, level_id: str, size: int, build: tuple[str, bool]) -> dict[str, float]:
    kernel = registry.get(level_id).kernel
    nvrtc_options, one_block_per_sm = build
    target = ["-c", "1", *launch_command(level_id, size, size, size, one_block_per_sm)]
    cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(METRICS.values()), "--csv",
           "--page", "raw", "-k", f"regex:{kernel}", *target]
    env = {**os.environ, "GEMMSCOPE_NVRTC_OPTIONS": nvrtc_options}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    rows = parse_raw_csv(proc.stdout)
    if not rows:
        raise RuntimeError(f"{level_id}: no ncu row\n{proc.stderr[-1500:]}")
    return {key: rows[-1].values.get(name) for key, name in METRICS.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=square_size, default=1024)
    ap.add_argument("--levels", type=level_ids(SIMT_LEVELS), default="")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--json")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.smoke:  # the whole path, ncu's command lines to the table, at a small size
        args.ncu = _smoke.stand_in_ncu(Path(tempfile.mkdtemp()), METRICS.values())
        args.size, args.levels = 256, ["smem_padded"]
    levels = args.levels or [
        lid for lid in SIMT_LEVELS if lid not in ("naive", "coalesced")]  # no shared memory
    out: dict[str, dict] = {}
    for lid in levels:
        model = totals(lid, args.size, args.size, args.size)
        out[lid] = {"model": {"ld_conflicts": model.ld.conflicts,
                              "st_conflicts": model.st.conflicts,
                              "ld_wavefronts": model.ld.wavefronts,
                              "st_wavefronts": model.st.wavefronts}}
        for label, build in BUILDS.items():
            try:
                out[lid][label] = profile(args.ncu, lid, args.size, build)
            except Exception as exc:  # report and go on with the next build
                out[lid][label] = {"error": str(exc)[-500:]}
        print(f"# {lid} done", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    print(f"\n{'level':<14} {'op':<3} {'model':>10} {'build':<21} {'l1tex confl':>12} "
          f"{'l1tex wavef':>12} {'SASS wavef':>12} {'residue':>9}")
    for lid, res in out.items():
        for op in ("ld", "st"):
            for label in BUILDS:
                r = res[label]
                if "error" in r:
                    print(f"{lid:<14} {op:<3} {'':>10} {label:<21} error: {r['error'][:60]}")
                    continue
                wf, sass = r.get(f"{op}_wavefronts"), r.get(f"{op}_sass_wavefronts")
                resid = wf - sass if wf is not None and sass is not None else None
                print(f"{lid:<14} {op:<3} {res['model'][f'{op}_conflicts']:>10,} {label:<21} "
                      f"{r.get(f'{op}_conflicts') or 0:>12,.0f} {wf or 0:>12,.0f} "
                      f"{sass or 0:>12,.0f} {resid if resid is not None else float('nan'):>9,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

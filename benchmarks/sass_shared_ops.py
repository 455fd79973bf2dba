"""Model vs compiled code: shared-memory instructions per warp per K step, by kind, counted
in the K loop of each level's SASS.

    python3 benchmarks/sass_shared_ops.py [--src kernels/cuda] [--levels a,b]
    python3 benchmarks/sass_shared_ops.py --smoke  # CI: smem_padded alone

No GPU needed: NVRTC (the nvrtc extra) and nvdisasm (pip install nvidia-cuda-nvdisasm).
Every kind (LDS*, LDSM, STS*, LDGSTS) must match exactly.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _smoke
from _args import level_ids

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import MODELS, model_for
from gemmscope.kernels.toolchain.sass_check import compare_level, tools_missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(registry.cuda_dir()), help="folder of the .cu files")
    ap.add_argument("--levels", type=level_ids(MODELS), default=",".join(MODELS))
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    if args.smoke:
        args.levels = ["smem_padded"]
    missing = tools_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    bad = 0
    for level_id in args.levels:
        cmp = compare_level(level_id, model_for(level_id), Path(args.src))
        verdict = "ok" if not cmp.mismatches else f"MISMATCH {cmp.mismatches}"
        bad += bool(cmp.mismatches)
        print(f"{level_id:14s} sass {cmp.sass}\n{'':14s} model {cmp.model}   {verdict}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Print the models' shared-memory totals for a shape (no GPU):

    python -m gemmscope.kernels.models [M N K] [--levels a,b] [--phases-only]
"""

from __future__ import annotations

import sys

from ..protocol.commands import MAX_DIM
from ..protocol.option_bounds import OneLineParser, bounded
from . import MODELS, model_for
from .banks import HARDWARE, PHASES_ONLY


def parser() -> OneLineParser:
    ap = OneLineParser(prog="python -m gemmscope.kernels.models")
    ap.add_argument("shape", nargs="*", type=bounded(int, 1, MAX_DIM),
                    default=[1024, 1024, 1024])
    ap.add_argument("--levels", default=",".join(MODELS))
    ap.add_argument("--phases-only", action="store_true",
                    help="128-bit accesses always in 4 phases (no uniform-pair rule)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if len(args.shape) != 3:
        print("python -m gemmscope.kernels.models: give M N K", file=sys.stderr)
        return 2
    M, N, K = args.shape
    rules = PHASES_ONLY if args.phases_only else HARDWARE
    print(f"{'level':<14} {'ld instr':>12} {'ld wavefr':>12} {'ld confl':>12} "
          f"{'st wavefr':>11} {'st confl':>10} {'cp.async wf':>12} {'cp confl':>10}")
    for level_id in [s for s in args.levels.split(",") if s]:
        t = model_for(level_id).totals(M, N, K, rules)
        print(f"{level_id:<14} {t.ld.instructions:>12,} {t.ld.wavefronts:>12,} "
              f"{t.ld.conflicts:>12,} {t.st.wavefronts:>11,} {t.st.conflicts:>10,} "
              f"{t.cp_async.wavefronts:>12,} {t.cp_async.conflicts:>10,}"
              + (f"  ({t.caveat})" if t.caveat else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

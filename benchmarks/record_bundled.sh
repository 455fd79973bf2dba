#!/usr/bin/env bash
# Make resources/sessions/h200-ladder.jsonl on a GPU machine, in two parts that each fit
# one device call (10 minutes):
#   burst:     every level and cuBLAS reference at 4096^3, then square sizes 256..8192,
#              NVML sampled at 50 Hz, then ncu on each SIMT level at 1024^3 (one block
#              per SM) for the banks view's predicted-vs-measured;
#   sustained: the same session continued (--append): every level and reference launched
#              back to back at 4096^3 and 8192^3, 2 trials of 2 s after 2 s cool-downs
#              (shorter than the defaults, 3 x 3 s after 5 s, to fit the call; the method
#              is the same: docs/energy.md).
#   bash benchmarks/record_bundled.sh [burst|sustained|all] [OUT_FILE] [COMMIT]
# COMMIT goes into the session header when the tree has no .git (the lent GPU machine).
set -euo pipefail
part=${1:-all}
out=${2:-resources/sessions/h200-ladder.jsonl}
[ -n "${3:-}" ] && export GEMMSCOPE_COMMIT=$3
if [ "$part" = burst ] || [ "$part" = all ]; then
  python3 -m gemmscope.kernels record -o "$out" --force --all -s 4096 --sweep \
    --telemetry-hz 50 --ncu
fi
if [ "$part" = sustained ] || [ "$part" = all ]; then
  python3 -m gemmscope.kernels record -o "$out" --append --all --sustained -s 4096 -s 8192 \
    --window-s 2 --trials 2 --cooldown-s 2 --telemetry-hz 50
fi

#!/usr/bin/env bash
# Make resources/sessions/h200-ladder.jsonl on a GPU machine, in three parts that each fit
# one device call (10 minutes; the timed runs and the per-line counters together took
# 546-562 s, too close to fit one as the ladder grows):
#   burst:     every level and cuBLAS reference at 4096^3, then square sizes 256..8192,
#              NVML sampled at 50 Hz, then ncu on each SIMT level at 1024^3 (one block
#              per SM) for the banks view's predicted-vs-measured;
#   source:    the same session continued (--append --profile-only: no timed runs):
#              ncu's source page of every level at 1024^3 (one launch each, as launched)
#              for the Code view's per-line heat map and the banks view's links
#              (source_counters events);
#   sustained: the same session continued (--append): every level and reference launched
#              back to back at 4096^3 and 8192^3, 2 trials of 1.5 s after 1 s cool-downs
#              (shorter than the defaults, 3 x 3 s after 5 s, to fit the call, NVML at 25 Hz
#              to keep the file small; the method is the same: docs/energy.md).
#   bash benchmarks/record_bundled.sh [burst|source|sustained|all] [OUT_FILE] [COMMIT]
# COMMIT goes into the session header when the tree has no .git (the lent GPU machine).
# The source-counters step is bounded by --ncu-source-budget (175 s for all levels; a
# level reached after it is recorded as not profiled, with that reason); each event
# carries its run's `seconds`. Exit code 1 when a level got no counters: the file is
# written all the same, and that level's event says why.
set -euo pipefail
part=${1:-all}
out=${2:-resources/sessions/h200-ladder.jsonl}
[ -n "${3:-}" ] && export GEMMSCOPE_COMMIT=$3
if [ "$part" = burst ] || [ "$part" = all ]; then
  python3 -m gemmscope.kernels record -o "$out" --force --all -s 4096 --sweep \
    --telemetry-hz 50 --ncu
fi
if [ "$part" = source ] || [ "$part" = all ]; then
  python3 -m gemmscope.kernels record -o "$out" --append --profile-only --all \
    --telemetry-hz 50 --ncu-source --ncu-source-size 1024 --ncu-source-budget 175
fi
if [ "$part" = sustained ] || [ "$part" = all ]; then
  python3 -m gemmscope.kernels record -o "$out" --append --all --sustained -s 4096 -s 8192 \
    --window-s 1.5 --trials 2 --cooldown-s 1 --telemetry-hz 25
fi

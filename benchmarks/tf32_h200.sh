#!/usr/bin/env bash
# The TF32 level on the H200 in one call (issue 42, the TF32 row), meant to take under
# three minutes on a fresh machine:
#
#   timeout -s KILL 178 benchmarks/tf32_h200.sh [VARIANTS]
#
# 1. benchmarks/tf32_accuracy.py: the level, cuBLAS TF32 (Bt and NN) and cuBLAS FP32
#    against float64 at K = 1024, 4096, 16384, and the TFLOAT32-map experiment (it also
#    builds the level first, so the runner below finds it in CuPy's cache);
# 2. benchmarks/tf32_variants.py: the level at odd and aligned shapes and one refused K,
#    then VARIANTS (default base,st3,gm8,kpipe0,sk2,bn192) paired with cuBLAS TF32 on Bt
#    at 4096^3 and 8192^3 (2 s a loop), cuBLAS TF32 NN alone, and the level paired with
#    that NN call.
# gemmscope is imported from this checkout (a folder of links on PYTHONPATH, no pip
# install); msgspec comes from the checkout's .whl/ where the machine lacks it
# (docs/gpu-run-plan.md). With $OUT set, the logs and JSON rows go there.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
# shellcheck source=benchmarks/_checkout_env.sh
. benchmarks/_checkout_env.sh
start=$(date +%s)
timeout -s KILL 45 python3 benchmarks/tf32_accuracy.py --json "$out/tf32_accuracy.jsonl" \
  2>&1 | tee "$out/tf32_accuracy.log"
accuracy=${PIPESTATUS[0]}
timeout -s KILL 125 python3 benchmarks/tf32_variants.py --pair-budget-s 2 \
  --variants "${1:-base,st3,gm8,kpipe0,sk2,bn192}" --json "$out/tf32_variants.jsonl" \
  2>&1 | tee "$out/tf32_variants.log"
variants=${PIPESTATUS[0]}
echo "tf32_h200: accuracy exit $accuracy, variants exit $variants," \
  "$(( $(date +%s) - start )) s"
[ "$accuracy" = 0 ] && [ "$variants" = 0 ]

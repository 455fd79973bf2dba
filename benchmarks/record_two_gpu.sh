#!/usr/bin/env bash
# Make resources/sessions/h200x2-ladder.jsonl(.gz) on a machine with two GPUs: one runner per
# GPU (--devices 0,1), each running every level and cuBLAS reference at 4096^3, so the
# app shows the same level on both GPUs side by side; NVML sampled at 50 Hz on each.
# Needs no Dask.
#   bash benchmarks/record_two_gpu.sh [OUT_FILE] [COMMIT] [EXTRA RECORD OPTIONS...]
# COMMIT goes into the session header when the tree has no .git (the lent GPU machine).
# E.g. `... h200x2.jsonl "" --split --sweep` splits a sweep across both GPUs instead.
set -euo pipefail
out=${1:-resources/sessions/h200x2-ladder.jsonl}
[ -n "${2:-}" ] && export GEMMSCOPE_COMMIT=$2
shift $(( $# < 2 ? $# : 2 ))
python3 -m gemmscope.kernels record -o "$out" --force --devices 0,1 --all -s 4096 \
    --telemetry-hz 50 "$@"
python3 -m gemmscope.kernels report "$out" | head -n 3
gzip -9 -n -c "$out" > "$out.gz.tmp" && mv "$out.gz.tmp" "$out.gz"  # the file in the package

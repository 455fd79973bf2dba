#!/usr/bin/env bash
# Make resources/sessions/h200-ladder.jsonl.gz on a GPU machine, in parts that each fit one
# device call (10 minutes): burst makes the file, the others append to it (burst first:
# a replay from the start reaches the 4096^3 ladder first), and `pack` last compresses it
# (gzip -9 -n: the app and every command read .jsonl.gz):
#   fp8:       the FP8 levels and references (cuBLASLt, DeepGEMM where deep_gemm imports)
#              at DeepGEMM's six dense shapes at M = 4096 (issue 31 item 5, issue 34), and
#              the measured ceilings (--ceilings: bandwidth, FFMA and tensor-core probes)
#              for the Roofline tab;
#   burst:     every level and reference at 4096^3, then square sizes 256..8192, with the
#              two example kernels of resources/kernels beside them, NVML sampled at
#              50 Hz, then ncu on each SIMT level at 1024^3 (one block per SM) for the
#              banks view's predicted-vs-measured;
#   source:    no timed runs (--profile-only): ncu's source page of every level at 1024^3
#              (one launch each, as launched) for the Code view's per-line heat map and
#              the banks view's links (source_counters events);
#   sustained: every level and reference launched back to back at the sizes of
#              $SUSTAINED_SIZES (default 4096 8192), 2 trials of 1.5 s after 1 s
#              cool-downs (shorter than the defaults, 3 x 3 s after 5 s, to fit the
#              call; NVML at 25 Hz to keep the file small; the method is the same:
#              docs/energy.md). `SUSTAINED_SIZES=4096 ... sustained` and then
#              `SUSTAINED_SIZES=8192 ... sustained` split it over two calls.
#   pack:      OUT_FILE compressed to OUT_FILE.gz (the file in the package).
#   bash benchmarks/record_bundled.sh [burst|fp8|source|sustained|pack|all] [OUT_FILE] [COMMIT]
# burst makes the file (--force); the others append (FORCE=1 makes fp8 make it instead).
# COMMIT goes into the session header when the tree has no .git (the lent GPU machine).
# The source-counters step is bounded by --ncu-source-budget (175 s for all levels; a
# level reached after it is recorded as not profiled, with that reason); each event
# carries its run's `seconds`. Exit code 1 when a level got no counters: the file is
# written all the same, and that level's event says why. DeepGEMM is recorded where the
# runner can import deep_gemm (PYTHONPATH; ../shared/anchors/README.md), else left out.
set -euo pipefail
part=${1:-all}
out=${2:-resources/sessions/h200-ladder.jsonl}
[ -n "${3:-}" ] && export GEMMSCOPE_COMMIT=$3
kernels=(--kernel resources/kernels/regblock_float4.toml
         --kernel resources/kernels/triton_matmul.toml)
fp8=fp8_block_scaled,fp8_stream_k,fp8_deep,deepgemm_fp8,cublaslt_fp8_blocks,cublaslt_fp8
if [ "$part" = burst ] || [ "$part" = all ]; then
  python3 -m gemmscope.kernels record -o "$out" --force --all "${kernels[@]}" \
    -s 4096 --sweep --telemetry-hz 50 --ncu
fi
if [ "$part" = fp8 ] || [ "$part" = all ]; then
  make=(--append); [ "${FORCE:-0}" = 1 ] && make=(--force)
  python3 -m gemmscope.kernels record -o "$out" "${make[@]}" -l "$fp8" \
    -s 4096x2112x7168 -s 4096x24576x1536 -s 4096x32768x512 -s 4096x7168x16384 \
    -s 4096x4096x7168 -s 4096x7168x2048 --telemetry-hz 50 --ceilings
fi
if [ "$part" = source ] || [ "$part" = all ]; then
  python3 -m gemmscope.kernels record -o "$out" --append --profile-only --all \
    --telemetry-hz 50 --ncu-source --ncu-source-size 1024 --ncu-source-budget 175
fi
if [ "$part" = sustained ] || [ "$part" = all ]; then
  sizes=()
  for n in ${SUSTAINED_SIZES:-4096 8192}; do sizes+=(-s "$n"); done
  python3 -m gemmscope.kernels record -o "$out" --append --all "${kernels[@]}" --sustained \
    "${sizes[@]}" --window-s 1.5 --trials 2 --cooldown-s 1 --telemetry-hz 25
fi
if [ "$part" = pack ] || [ "$part" = all ]; then
  gzip -9 -n -c "$out" > "$out.gz.tmp" && mv "$out.gz.tmp" "$out.gz"
fi

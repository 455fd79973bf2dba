#!/usr/bin/env bash
# Issue 42, round 3 on the H200 in one call (docs/perf-notes.md, "Issue 42: attempts
# prepared, round 3 (offline)"):
#
#   OUT=DIR timeout -s KILL 500 benchmarks/attempts/round3.sh [attempts|ncu|all]
#
# attempts (about 280 s): kernel_attempts.py builds, checks (odd shapes, then again after
#   a burst of 20 launches) and times the round's variants paired with cuBLAS FP16 at
#   4096^3 and 8192^3 (the BF16 tile widths with cuBLAS BF16 at 3000x5000x4096, the
#   shapes each names), the controls beside them; log and JSON lines in $OUT/att/.
# ncu (about 150 s): Nsight Compute's warp states, scheduler, source counters (PC
#   sampling: the stall reason per SASS instruction) and speed of light, one launch each
#   of mma_tma at 4096^3 (the second launch) and of the mma.sync ceiling probe's "ldsm"
#   case (8 warps of 64x64, fragments by ldmatrix, nothing copied: mma_ceiling.py's fifth
#   case, launches 8-9 with --repeats 1); text in $OUT/ncu_*.txt, reports in
#   $OUT/ncu_*.ncu-rep (read later: ncu --import F --page source --csv).
# all (default): both, attempts first (ncu's builds then come from CuPy's cache).
# gemmscope is imported from this checkout (a folder of links on PYTHONPATH); msgspec
# from the checkout's .whl/ where the machine lacks it (carry .whl).
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
what=${1:-all}
# shellcheck source=benchmarks/_checkout_env.sh
. benchmarks/_checkout_env.sh
start=$(date +%s)
names=wgmma_tma_x,wtx_bn232,wtx_epi0,wtx_bn240,wtx_bn192
names=$names,wmma_fb3_4w,wmma_lean_4w,wmma,mma_tma,mma_tma_wait2,mma_tma_wrel,mma_tma_wait2_wrel
names=$names,wmma_fb3,mma_tma_wait1,mma_tma_frag2,wmma_fb2
rc=0
if [ "$what" = attempts ] || [ "$what" = all ]; then
  timeout -s KILL 285 python3 benchmarks/kernel_attempts.py --out "$out/att" --only "$names" \
    --budget 260 --variant-limit-s 40 2>&1 | tail -n 50
  rc=${PIPESTATUS[0]}
  echo "round3: attempts exit $rc, $(( $(date +%s) - start )) s"
fi
if [ "$what" = ncu ] || [ "$what" = all ]; then
  sections="--section SpeedOfLight --section WarpStateStats --section SchedulerStats"
  sections="$sections --section SourceCounters --section ComputeWorkloadAnalysis"
  # shellcheck disable=SC2086
  timeout -s KILL 100 ncu --clock-control none -k regex:hgemm_mma_tma -s 1 -c 1 $sections \
    --import-source no -f -o "$out/ncu_mma_tma_4096" \
    python3 -m gemmscope.kernels.engine.launch mma_tma 4096 4096 4096 --launches 2 \
    > "$out/ncu_mma_tma_4096.txt" 2>&1
  echo "round3: ncu mma_tma exit $?, $(( $(date +%s) - start )) s"
  # shellcheck disable=SC2086
  timeout -s KILL 80 ncu --clock-control none -k regex:hmma_ceiling -s 8 -c 1 $sections \
    --import-source no -f -o "$out/ncu_ceiling_ldsm" \
    python3 benchmarks/mma_ceiling.py --out "$out/ceiling" --repeats 1 --iters 2000 \
    > "$out/ncu_ceiling_ldsm.txt" 2>&1
  echo "round3: ncu ceiling exit $?, $(( $(date +%s) - start )) s"
  grep -h -E "Stall|stall|Issued Warp|Eligible|No Eligible|Active Warps|Duration" \
    "$out"/ncu_*.txt | head -n 60
fi
exit "$rc"

#!/usr/bin/env bash
# One tier of the GPU tests on the GPU machine (docs/gpu-run-plan.md):
#
#   benchmarks/gpu_tier.sh smoke        # -m "gpu and smoke": every level twice, each feature
#   benchmarks/gpu_tier.sh shard K      # shard K of 4 (tests/support/gpu_tiers.py)
#
# The run is bounded: SIGTERM at LIMIT_S (smoke 240 s, a shard 450 s), which the tests'
# conftest answers by killing every process the run started; SIGKILL 10 s later to all
# that is left (timeout -k). Prints every test's duration (--durations=0); with $OUT set,
# writes $OUT/gpu-<tier>.log and the junit file $OUT/gpu-<tier>.xml. The exit status is
# pytest's (0: all passed), or 124/137 where the limit ended it.
set -u
usage() { echo "usage: $0 smoke | shard K (K = 1..4)" >&2; exit 2; }
case "${1:-}" in
  smoke) name=smoke; limit=${LIMIT_S:-240}; select=(-m "gpu and smoke") ;;
  shard) [[ "${2:-}" =~ ^[1-4]$ ]] || usage
         name="shard$2"; limit=${LIMIT_S:-450}; select=(-m gpu --gpu-shard "$2") ;;
  *) usage ;;
esac
cd "$(dirname "$0")/.."
report=()
log=/dev/null
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  report=(--junitxml "$OUT/gpu-$name.xml")
  log="$OUT/gpu-$name.log"
fi
# one process, no xdist (one GPU: the tests time the GPU and must not share it)
start=$(date +%s)
timeout -k 10 -s TERM "$limit" python3 -m pytest -q -p no:cacheprovider -p no:xdist \
  "${select[@]}" --durations=0 -rs "${report[@]}" tests/gpu 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
echo "gpu tier $name: exit $code in $(( $(date +%s) - start )) s (limit $limit s)" | tee -a "$log"
exit "$code"

#!/usr/bin/env bash
# Issue 46 on the H200, in one bounded call (about 3 minutes; a KILL at 230 s):
#   1. the trace builds' GPU tests (tests/gpu/test_trace_gpu.py): each traced level
#      compiled and correct at 4096^3, every event recorded, a too small buffer said and
#      never overrun, the model's tiles per block and SM, stream-K's fix-ups where the
#      model puts them;
#   2. their cost at 4096^3 against the plain builds (benchmarks/trace_overhead.py);
#   3. the traces recorded with the project's own command into a copy of the bundled
#      recording: $OUT/h200-ladder.jsonl.gz, to be committed as
#      resources/sessions/h200-ladder.jsonl.gz.
#
#   OUT=out benchmarks/trace_h200.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
start=$(date +%s)
timeout -k 5 -s TERM 110 python3 -m pytest -q -p no:cacheprovider -p no:xdist -m gpu -rs \
  --durations=0 tests/gpu/test_trace_gpu.py -k "not record_trace" 2>&1 | tee "$OUT/trace-tests.log"
tests=${PIPESTATUS[0]}
timeout -k 5 -s TERM 50 python3 benchmarks/trace_overhead.py --size 4096 --pairs 30 \
  --out "$OUT/trace-overhead.jsonl" 2>&1 | tee "$OUT/trace-overhead.log"
bench=${PIPESTATUS[0]}
gunzip -c resources/sessions/h200-ladder.jsonl.gz > "$OUT/h200-ladder.jsonl"
timeout -k 5 -s TERM 60 python3 -m gemmscope.kernels record --append --profile-only \
  --trace all --trace-size 4096 --trace-pairs 30 -o "$OUT/h200-ladder.jsonl" 2>&1 \
  | tee "$OUT/trace-record.log"
record=${PIPESTATUS[0]}
gzip -9 -n -f "$OUT/h200-ladder.jsonl"
echo "trace_h200: tests $tests, overhead $bench, record $record in $(( $(date +%s) - start )) s"
[ "$tests" = 0 ] && [ "$bench" = 0 ] && [ "$record" = 0 ]

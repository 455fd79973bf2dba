#!/usr/bin/env bash
# Bring the bundled recording (resources/sessions/h200-ladder.jsonl.gz) up to date with the
# levels whose code changed, in one call of the lent H200, and take back only the lines the
# update appends (the file is ~30 MB, over what a device call returns).
#
# On the GPU machine, from the repository root (the call's $OUT is where results go back):
#   COMMIT=<hash> bash benchmarks/update_bundled.sh device ["PYTEST -k EXPRESSION"]
#     1. refuses (exit 3) on anything but an H200: the bundled recording is the H200's;
#     2. with a -k expression, the GPU tests it selects (tests/gpu), TESTS_S seconds at most
#        (default 150); no update where one fails (exit 4);
#     3. `record --update` of a copy in /tmp (made once: a second call on the same machine
#        continues where the first stopped) for at most MAX_GPU_S seconds of the file's own
#        timings (default 290), killed after KILL_S (default MAX_GPU_S + 60: the update
#        writes when its runs finish, so a kill loses them all);
#     4. the lines it appended, gzipped, to $OUT/new_lines.jsonl.gz, and its dry run after
#        (what is left).
#   COMMIT names the measured commit in the header where the tree has no .git.
# Here, with the call's files:
#   bash benchmarks/update_bundled.sh merge FILES_AT/new_lines.jsonl.gz
#     appends them to the bundled recording and prints its dry run (nothing changed, where
#     the update finished) and the README's tables (benchmarks/readme_table.py).
set -uo pipefail
step=${1:-}
bundled=${BUNDLED:-resources/sessions/h200-ladder.jsonl.gz}  # BUNDLED: another file to update
case "$step" in
device)
  : "${OUT:?the OUT folder of the device call}"
  name=$(nvidia-smi --query-gpu=name,uuid,clocks.sm,power.draw --format=csv,noheader)
  echo "GPU: $name"
  case "$name" in *H200*) ;; *) echo "not an H200: the bundled recording is not updated"; exit 3 ;; esac
  if [ -f benchmarks/_checkout_env.sh ] && ! python3 -c "import gemmscope" 2>/dev/null; then
    source benchmarks/_checkout_env.sh
  fi
  export GEMMSCOPE_COMMIT=${COMMIT:-${GEMMSCOPE_COMMIT:-}}
  if [ -n "${2:-}" ]; then
    PYTHONPATH="$PWD/tests/support${PYTHONPATH:+:$PYTHONPATH}" timeout -s KILL "${TESTS_S:-150}" \
      python3 -m pytest -q -p no:cacheprovider -x tests/gpu -k "$2" > "$OUT/tests.log" 2>&1
    rc=$?
    tail -6 "$OUT/tests.log"
    [ $rc = 0 ] || { echo "GPU tests failed (rc $rc): no update"; exit 4; }
  fi
  copy=/tmp/gemmscope-update.jsonl.gz
  if [ ! -f "$copy" ]; then
    cp "$bundled" "$copy"
    gunzip -c "$copy" | wc -l > "$copy.lines"
  fi
  max=${MAX_GPU_S:-290}
  timeout -s KILL "${KILL_S:-$((max + 60))}" python3 -m gemmscope.kernels record \
    --update "$copy" --max-gpu-s "$max" > "$OUT/record.log" 2>&1
  echo "record --update rc $?"
  tail -20 "$OUT/record.log"
  gunzip -c "$copy" | tail -n +"$(( $(cat "$copy.lines") + 1 ))" | gzip -9 -n \
    > "$OUT/new_lines.jsonl.gz"
  echo "new lines: $(gunzip -c "$OUT/new_lines.jsonl.gz" | wc -l)"
  python3 -m gemmscope.kernels record --update "$copy" --dry-run 2>&1 | tail -4
  ;;
merge)
  new=${2:?the new_lines.jsonl.gz a device call returned}
  gunzip -t "$bundled" && gunzip -t "$new" || { echo "not readable: nothing changed" >&2; exit 1; }
  before=$(gunzip -c "$bundled" | wc -l)
  added=$(gunzip -c "$new" | wc -l)
  joined=$(mktemp)
  { gunzip -c "$bundled" && gunzip -c "$new"; } | gzip -9 -n > "$joined" &&
    [ "$(gunzip -c "$joined" | wc -l)" = $((before + added)) ] ||
    { rm -f "$joined"; echo "the joined file came out wrong: nothing changed" >&2; exit 1; }
  chmod 644 "$joined" && mv "$joined" "$bundled"
  echo "$bundled: $before lines and $added new"
  python3 -m gemmscope.kernels record --update "$bundled" --dry-run 2>&1 | tail -6
  python3 benchmarks/readme_table.py
  ;;
*)
  echo "usage: bash benchmarks/update_bundled.sh device [\"-k EXPRESSION\"] | merge NEW_LINES" >&2
  exit 2
  ;;
esac

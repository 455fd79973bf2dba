#!/usr/bin/env bash
# Issue 40 item 1, measured: after an edit to one level's .cu, how long `record --update`
# on the bundled recording takes (the goal: at most 90 s of GPU time; a full re-record is
# about 25 minutes). Run from the repository root on the GPU machine:
#   bash benchmarks/update_timing.sh [LEVEL]          (default LEVEL: wgmma_tma)
# Nothing in the tree is changed: the tree is copied to a scratch folder (SCRATCH, default
# a new temporary one), the copy's kernels/cuda/<LEVEL's .cu> gets a comment appended (a new
# code key, the same machine code), and the copy of the bundled recording is updated by the
# copy's code. Steps, each timed (wall seconds: GPU time plus the runner's start and the
# CPU's build events, so an upper bound of the GPU time):
#   1. settle: `record --update` once before the edit, for what is stale already (a level
#      whose recorded key was made under the old rule, with include folders: wmma, once;
#      a level edited since the recording). SETTLE=0 leaves it out: then step 3 re-measures
#      those too, as the first update of the bundled recording after this change would.
#   2. the edit, then `record --update --dry-run` (no GPU: what would run, the estimate);
#   3. `record --update`, timed: the number to hold against 90 s.
# DRY_ONLY=1: steps 2's dry run only (a machine with no GPU; what CI can run).
set -euo pipefail
level=${1:-wgmma_tma}
root=$(pwd)
scratch=${SCRATCH:-$(mktemp -d)}
mkdir -p "$scratch/tree" "$scratch/.py"
# the tree as it is (work tree, untracked files too), without .git and build outputs
tar -C "$root" --exclude=.git --exclude=.py --exclude=__pycache__ -cf - . \
  | tar -C "$scratch/tree" -xf -
ln -sfn "$scratch/tree" "$scratch/.py/gemmscope"  # the copy is the gemmscope package
export PYTHONPATH="$scratch/.py${PYTHONPATH:+:$PYTHONPATH}"
rec="$scratch/h200-ladder.jsonl.gz"
cp "$root/resources/sessions/h200-ladder.jsonl.gz" "$rec"
gs() { python3 -m gemmscope.kernels "$@"; }

src=$(python3 -c "from gemmscope.kernels.ladder import registry as r; \
print(r.source_file(r.get('$level')))")
case "$src" in "$scratch"/*) ;; *) echo "not the scratch copy's source: $src" >&2; exit 2;; esac

if [ "${DRY_ONLY:-0}" != 1 ] && [ "${SETTLE:-1}" = 1 ]; then
  echo "== 1. settle: what is stale before the edit"
  gs record --update "$rec" --dry-run
  start=$(date +%s.%N)
  gs record --update "$rec" > "$scratch/settle.txt"
  echo "settle took $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
fi

echo "== 2. edit $src, then the dry run"
printf '\n// update_timing.sh: an edit that changes the code key, not the code\n' >> "$src"
gs record --update "$rec" --dry-run
[ "${DRY_ONLY:-0}" = 1 ] && exit 0

echo "== 3. record --update, timed"
start=$(date +%s.%N)
gs record --update "$rec"
took=$(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')")
echo "record --update after an edit of $level: $took s (goal: at most 90 s of GPU time)"
gs report "$rec" | head -1
echo "(the updated recording: $rec)"

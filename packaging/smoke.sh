#!/usr/bin/env bash
# CI's packaging check (after pytest): build the sdist, the wheel and the desktop bundle
# (packaging/build.sh), then, offscreen:
#   - the wheel, installed in a fresh venv, renders the bundled recording
#     (gemmscope replay <it> --screenshot);
#   - the wheel renders a scene of the bundled talk (gemmscope talk ladder --screenshot);
#   - the tarball, unpacked and installed by its install.sh into a scratch prefix, renders the
#     bundled recording with no Python on PATH, to a PNG of the same size that draws the same,
#     and a scene of the bundled talk;
#   - the installed menu entry validates; the bundle's doctor says "replay only" (exit 1), and
#     "live" (exit 0) with a stand-in runner started outside the bundle, which the bundle's
#     live mode then drives.
# Any failure exits non-zero. Prints the time of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen
APP_ID=io.github.gemmscope.gemmscope
VENV=$PWD/build/packaging-venv
SMOKE=$PWD/build/smoke
took() { printf '== %-44s %4ss\n' "$1" "$((SECONDS - t))"; t=$SECONDS; }
t=$SECONDS

packaging/build.sh
took "build.sh (sdist, wheel, bundle, tarball)"

rm -rf "$SMOKE" && mkdir -p "$SMOKE/unpacked"
recording=$("$VENV/bin/python" -c 'from importlib.resources import files
print(files("gemmscope.resources") / "sessions" / "h200-ladder.jsonl.gz")')
(cd "$SMOKE" && "$VENV/bin/gemmscope" replay "$recording" --screenshot wheel.png \
    --settings wheel.ini >wheel.out)
took "wheel: replay --screenshot"
# the talks are package data: the wheel finds the bundled one by name
(cd "$SMOKE" && "$VENV/bin/gemmscope" talk ladder --screenshot talk.png --scene 2 \
    --settings wheel.ini >talk.out)
took "wheel: talk ladder --screenshot"

tar -C "$SMOKE/unpacked" -xzf dist/gemmscope-*-linux-*.tar.gz
PREFIX="$SMOKE/prefix" "$SMOKE/unpacked/gemmscope/install.sh" >/dev/null
app="$SMOKE/prefix/opt/gemmscope/gemmscope"
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$SMOKE/prefix/share/applications/$APP_ID.desktop"
fi
grep -qx "Exec=$app" "$SMOKE/prefix/share/applications/$APP_ID.desktop"
# no Python on PATH: the bundle carries its own
(cd "$SMOKE" && env -i HOME="$SMOKE" QT_QPA_PLATFORM=offscreen PATH=/nonexistent \
    "$app" --screenshot bundle.png --settings bundle.ini >bundle.out 2>bundle.err) \
    || { cat "$SMOKE/bundle.err" >&2; exit 1; }
grep -q "this desktop bundle carries no CuPy" "$SMOKE/bundle.out"
(cd "$SMOKE" && env -i HOME="$SMOKE" QT_QPA_PLATFORM=offscreen PATH=/nonexistent \
    "$app" talk ladder --screenshot bundle-talk.png --scene 2 --settings bundle.ini \
    >bundle-talk.out 2>bundle-talk.err) || { cat "$SMOKE/bundle-talk.err" >&2; exit 1; }
took "bundle: installed, --screenshot without Python"

"$VENV/bin/python" - "$SMOKE/wheel.png" "$SMOKE/bundle.png" <<'PY'
import sys

from PySide6.QtGui import QImage

wheel, bundle = (QImage(p) for p in sys.argv[1:3])
assert not wheel.isNull() and not bundle.isNull(), "a screenshot is missing"
assert wheel.size() == bundle.size(), f"sizes differ: {wheel.size()} vs {bundle.size()}"
w, h = wheel.width(), wheel.height()
points = [(x, y) for y in range(0, h, 3) for x in range(0, w, 3)]
colours = {bundle.pixel(x, y) for x, y in points}
same = sum(wheel.pixel(x, y) == bundle.pixel(x, y) for x, y in points) / len(points)
assert len(colours) > 20, "the bundle's screenshot is blank"
assert same > 0.9, f"only {same:.0%} of the pixels agree"  # the status lines differ
print(f"screenshots: {w}x{h} both, {same:.1%} of sampled pixels equal")
PY
took "screenshots compared"

set +e
env -i HOME="$SMOKE" QT_QPA_PLATFORM=offscreen PATH=/usr/bin:/bin "$app" doctor \
    --settings "$SMOKE/bundle.ini" >"$SMOKE/doctor.out"
code=$?
set -e
[ "$code" = 1 ] || { cat "$SMOKE/doctor.out"; echo "bundle doctor: exit $code, not 1" >&2; exit 1; }
runner="$VENV/bin/python $PWD/tests/support/fake_runner.py"
env -i HOME="$SMOKE" QT_QPA_PLATFORM=offscreen PATH=/usr/bin:/bin "$app" doctor \
    --runner "$runner" --settings "$SMOKE/bundle.ini" >"$SMOKE/doctor-live.out" \
    || { cat "$SMOKE/doctor-live.out"; exit 1; }
(cd "$SMOKE" && env -i HOME="$SMOKE" QT_QPA_PLATFORM=offscreen PATH=/usr/bin:/bin "$app" \
    --runner "$runner" --screenshot live.png --settings bundle.ini >live.out 2>live.err) \
    || { cat "$SMOKE/live.err" >&2; exit 1; }
grep -q "status: live — runner" "$SMOKE/live.out"
took "bundle: doctor (exit 1, then 0) and live"
du -sh dist/gemmscope dist/gemmscope-*-linux-*.tar.gz | sed 's/^/size: /'

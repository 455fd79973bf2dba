#!/usr/bin/env bash
# Build everything a user installs, into dist/:
#   gemmscope-VERSION.tar.gz, gemmscope-VERSION-py3-none-any.whl   (python -m build, twine check)
#   gemmscope/                      the desktop bundle (PyInstaller, one folder, no Python needed)
#   gemmscope-VERSION-linux-ARCH.tar.gz   that folder with its .desktop entry, icon, metainfo
#                                   and install.sh
# The bundle is made from the wheel, installed with [app] in a fresh venv (build/packaging-venv),
# so it holds what a pip install holds. Needs python3 >= 3.11 with venv, and a package index.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=build/packaging-venv
APP_ID=io.github.gemmscope.gemmscope
export PIP_DISABLE_PIP_VERSION_CHECK=1
step() { printf '== %s (%ss)\n' "$1" "$SECONDS"; }

step "fresh venv with build, twine and PyInstaller"
rm -rf "$VENV" build/pyinstaller dist
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q 'build>=1.2' 'twine>=6.1' 'pyinstaller>=6.10' 2> >(grep -v "is ignored" >&2)

step "sdist and wheel"
"$VENV/bin/python" -m build --outdir dist . >build/python-build.log 2>&1 \
    || { cat build/python-build.log >&2; exit 1; }
"$VENV/bin/twine" check --strict dist/*
wheel=$(ls dist/gemmscope-*-py3-none-any.whl)
version=$(basename "$wheel" | cut -d- -f2)

step "the wheel with [app], installed in the venv"
"$VENV/bin/pip" install -q "$wheel[app]" 2> >(grep -v "is ignored" >&2)

step "bundle (PyInstaller)"
"$VENV/bin/pyinstaller" --noconfirm --log-level WARN --distpath dist \
    --workpath build/pyinstaller packaging/gemmscope.spec 2>build/pyinstaller.log \
    || { cat build/pyinstaller.log >&2; exit 1; }
# libraries of the X11 plugin this build machine lacks: the target system must have them
missing=$(grep -o "could not resolve '[^']*'" build/pyinstaller.log | sort -u | cut -d"'" -f2 \
          | tr '\n' ' ' || true)
[ -z "$missing" ] || echo "note: not bundled (absent on this build machine): $missing"

bundle=dist/gemmscope
install -Dm644 "packaging/$APP_ID.desktop" "$bundle/share/applications/$APP_ID.desktop"
install -Dm644 resources/gemmscope.svg "$bundle/share/icons/hicolor/scalable/apps/$APP_ID.svg"
install -Dm644 "packaging/$APP_ID.metainfo.xml" "$bundle/share/metainfo/$APP_ID.metainfo.xml"
install -m755 packaging/install.sh "$bundle/install.sh"

step "tarball"
tarball="dist/gemmscope-$version-linux-$(uname -m).tar.gz"
tar -C dist -czf "$tarball" gemmscope
step "done"
du -sh "$bundle" "$tarball" "$wheel" dist/gemmscope-"$version".tar.gz

#!/bin/sh
# Install this gemmscope bundle for the current user: the program folder under
# ~/.local/opt/gemmscope, and a menu entry, icon and AppStream metainfo under ~/.local/share.
#   ./install.sh               install (PREFIX=/usr/local ./install.sh as root: for everyone)
#   ./install.sh --uninstall   remove what it installed
# Nothing is linked into bin/: a pip-installed `gemmscope` (the runner, for live mode) keeps
# its name. Start the app from the menu, or run PREFIX/opt/gemmscope/gemmscope.
set -eu
APP_ID=io.github.gemmscope.gemmscope
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PREFIX:-$HOME/.local}
dest=$prefix/opt/gemmscope
desktop=$prefix/share/applications/$APP_ID.desktop
icon=$prefix/share/icons/hicolor/scalable/apps/$APP_ID.svg
metainfo=$prefix/share/metainfo/$APP_ID.metainfo.xml

refresh() {
    command -v update-desktop-database >/dev/null 2>&1 \
        && update-desktop-database -q "$prefix/share/applications" || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 \
        && gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" || true
}

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$dest"
    rm -f "$desktop" "$icon" "$metainfo"
    refresh
    echo "removed gemmscope from $prefix"
    exit 0
fi

if [ "$here" != "$dest" ]; then
    rm -rf "$dest"
    mkdir -p "$dest"
    cp -a "$here/." "$dest/"
fi
mkdir -p "$(dirname "$desktop")" "$(dirname "$icon")" "$(dirname "$metainfo")"
sed "s|^Exec=gemmscope|Exec=$dest/gemmscope|" "$here/share/applications/$APP_ID.desktop" >"$desktop"
cp "$here/share/icons/hicolor/scalable/apps/$APP_ID.svg" "$icon"
cp "$here/share/metainfo/$APP_ID.metainfo.xml" "$metainfo"
refresh
echo "installed: $dest/gemmscope (menu: gemmscope)"
echo "check this machine: $dest/gemmscope doctor"

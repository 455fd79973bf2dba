"""Finding the Qt platform plugin without importing Qt, and naming the packages for the
libraries ``ldd`` could not find (app/core/qt_platform.py)."""

from __future__ import annotations

import types

import places
import pytest

from gemmscope.app.core import qt_platform
from gemmscope.app.core.machine_facts import gather_start
from gemmscope.app.core.qt_platform import (
    SYSTEM_PACKAGES,
    install_advice,
    missing_libraries,
    packages_for,
    platform_names,
    plugin_libs,
    pyside6_folder,
)

REPO = places.REPO

# ldd on PySide6 6.12's libqxcb.so on a fresh Debian 12 (trimmed): a library missing for
# the plugin's own Qt library shows up again under each library that needs it
LDD_QXCB = """\
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlinux-vdso.so.1 (0x00007ffd3b5e9000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x1)
\tlibGL.so.1 => /lib/x86_64-linux-gnu/libGL.so.1 (0x00007f997078b000)
\tlibxkbcommon-x11.so.0 => not found
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-util.so.1 => /lib/x86_64-linux-gnu/libxcb-util.so.1 (0x00007f9970729000)
\tlibxcb-keysyms.so.1 => not found
\tlibEGL.so.1 => not found
\tlibfontconfig.so.1 => not found
\tlibdbus-1.so.3 => not found
\tlibfoo-unknown.so.7 => not found
\t/lib64/ld-linux-x86-64.so.2 (0x00007f99708eb000)
"""


def test_ldd_output_gives_each_missing_library_once_in_order():
    assert missing_libraries(LDD_QXCB) == (
        "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxkbcommon-x11.so.0",
        "libxcb-cursor.so.0", "libEGL.so.1", "libfontconfig.so.1", "libdbus-1.so.3",
        "libfoo-unknown.so.7")
    assert missing_libraries("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n") == ()


def test_missing_libraries_map_to_debian_and_fedora_packages():
    debian, fedora, unknown = packages_for(missing_libraries(LDD_QXCB))
    assert debian == ["libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0",
                      "libxcb-cursor0", "libegl1", "libfontconfig1", "libdbus-1-3"]
    assert fedora == ["xcb-util-wm", "xcb-util-keysyms", "libxkbcommon-x11", "xcb-util-cursor",
                      "libglvnd-egl", "fontconfig", "dbus-libs"]
    assert unknown == ["libfoo-unknown.so.7"]
    advice = install_advice(missing_libraries(LDD_QXCB)).splitlines()
    assert advice[0].startswith("Debian/Ubuntu: sudo apt install libxcb-icccm4 ")
    assert advice[1].startswith("Fedora: sudo dnf install xcb-util-wm ")
    assert "dnf provides '*/libfoo-unknown.so.7'" in advice[2]


def test_fedora_names_each_package_once():
    _debian, fedora, _ = packages_for(["libxcb-shm.so.0", "libxcb-randr.so.0", "libxcb.so.1"])
    assert fedora == ["libxcb"]


def test_every_library_qts_platform_plugins_load_here_has_package_names():
    """What this machine's PySide6 plugins link against (beyond Qt and the C runtime) is in
    the table, so the doctor never has to say "unknown" for them."""
    folder = pyside6_folder()
    if folder is None:
        pytest.skip("PySide6 not installed")
    base = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libgcc_s.so.1", "libstdc++.so.6",
            "libdl.so.2", "libpthread.so.0", "librt.so.1"}
    for platform in ("xcb", "offscreen"):
        libs = plugin_libs(folder / "Qt" / "plugins" / "platforms", platform)
        if not libs.checked:
            pytest.skip("no ldd")
        assert libs.path is not None
        out = qt_platform.run_ldd(libs.path) or ""
        names = {line.split()[0] for line in out.splitlines() if "=>" in line}
        system = {n for n in names if not n.startswith(("libQt6", "libicu", "ld-linux"))}
        assert system - base - set(SYSTEM_PACKAGES) == set()


@pytest.mark.parametrize(("env", "names"), [
    ({}, []),
    ({"DISPLAY": ":0"}, ["xcb"]),
    ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, ["wayland", "xcb"]),
    ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, ["offscreen"]),
    ({"QT_QPA_PLATFORM": "wayland;xcb"}, ["wayland", "xcb"]),
    ({"QT_QPA_PLATFORM": "vnc:size=800x600"}, ["vnc"]),
])
def test_the_platforms_qt_will_try(env, names):
    assert platform_names(env) == names


def test_plugins_are_found_through_find_spec_without_importing_qt(tmp_path):
    platforms = tmp_path / "PySide6" / "Qt" / "plugins" / "platforms"
    platforms.mkdir(parents=True)
    (platforms / "libqxcb.so").write_bytes(b"")
    (platforms / "libqoffscreen.so").write_bytes(b"")
    spec = types.SimpleNamespace(submodule_search_locations=[str(tmp_path / "PySide6")])

    def find_spec(name):
        return spec if name in ("PySide6", "pyqtgraph") else None

    def fake_ldd(path):
        return LDD_QXCB if path.name == "libqxcb.so" else "\tlibc.so.6 => /lib/libc.so.6 (0x1)\n"

    facts = gather_start({"QT_QPA_PLATFORM": "offscreen"}, find_spec, fake_ldd)
    assert [(p.platform, p.path.name, len(p.missing)) for p in facts.plugins] == [
        ("offscreen", "libqoffscreen.so", 0), ("xcb", "libqxcb.so", 8)]
    wayland = plugin_libs(platforms, "wayland", fake_ldd)
    assert wayland.path is None  # this PySide6 has none
    assert gather_start({}, lambda name: None, fake_ldd).qt_version is None


def test_no_ldd_means_unchecked_not_missing(tmp_path):
    (tmp_path / "libqxcb.so").write_bytes(b"")
    libs = plugin_libs(tmp_path, "xcb", lambda path: None)
    assert (libs.checked, libs.missing) == (False, ())


def test_a_command_that_only_makes_pictures_runs_offscreen_without_a_display():
    from gemmscope.app.core.qt_platform import headless_platform

    none: dict[str, str] = {}
    x11 = {"DISPLAY": ":0"}
    assert headless_platform(["replay", "f.jsonl", "--export", "a.png"], none) == "offscreen"
    assert headless_platform(["--screenshot=a.png"], none) == "offscreen"
    assert headless_platform(["replay", "f.jsonl", "--export", "a.png"], x11) is None
    assert headless_platform(["gallery", "out"], x11) == "offscreen"  # never on the desktop
    assert headless_platform(["replay", "f.jsonl"], none) is None  # a window: Qt says why
    assert headless_platform(["gallery", "out"], {"QT_QPA_PLATFORM": "xcb"}) is None

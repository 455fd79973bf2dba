"""Which Qt platform plugin the app will use, and which system libraries it lacks.

Answered without importing Qt: PySide6's folder comes from ``importlib.util.find_spec``,
the plugin's libraries from ``ldd``. A wheel of PySide6 carries Qt itself but relies on
the system for X11/xcb, EGL/GL, fontconfig and D-Bus; a fresh desktop often lacks a few
xcb utility libraries, and then Qt aborts with a message that names only the first.
``SYSTEM_PACKAGES`` maps each shared library the platform plugins load to the package that
ships it on Debian/Ubuntu and on Fedora, so the doctor can name all of them at once.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

# soname -> (Debian/Ubuntu package, Fedora package)
SYSTEM_PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libXau.so.6": ("libxau6", "libXau"),
    "libXdmcp.so.6": ("libxdmcp6", "libXdmcp"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libpng16.so.16": ("libpng16-16", "libpng"),
    "libz.so.1": ("zlib1g", "zlib"),
    "libzstd.so.1": ("libzstd1", "libzstd"),
    "libexpat.so.1": ("libexpat1", "expat"),
    "libbrotlidec.so.1": ("libbrotli1", "libbrotli"),
    "libpcre2-8.so.0": ("libpcre2-8-0", "pcre2"),
    # pulled in by the libraries above (present wherever those are, listed for completeness)
    "libbrotlicommon.so.1": ("libbrotli1", "libbrotli"),
    "libbsd.so.0": ("libbsd0", "libbsd"),
    "libcap.so.2": ("libcap2", "libcap"),
    "libgcrypt.so.20": ("libgcrypt20", "libgcrypt"),
    "libgpg-error.so.0": ("libgpg-error0", "libgpg-error"),
    "liblz4.so.1": ("liblz4-1", "lz4-libs"),
    "liblzma.so.5": ("liblzma5", "xz-libs"),
    "libmd.so.0": ("libmd0", "libmd"),
    "libsystemd.so.0": ("libsystemd0", "systemd-libs"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl"),
}

# QT_QPA_PLATFORM values that need no window system: a picture is drawn in memory
# (offscreen, minimal) or served (vnc); --screenshot works with any of them
HEADLESS = frozenset({"offscreen", "minimal", "minimalegl", "vnc"})
# values that draw straight on the console's framebuffer or KMS, no X11 or Wayland
CONSOLE = frozenset({"eglfs", "linuxfb", "vkkhrdisplay"})
# the plugin file of a platform, where its name is not libq<platform>.so
PLUGIN_FILES = {"wayland": ("libqwayland.so", "libqwayland-generic.so", "libqwayland-egl.so")}

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class PluginLibs:
    """One platform plugin and the shared libraries ``ldd`` could not find for it."""

    platform: str
    path: Path | None  # None: no such plugin in this PySide6
    missing: tuple[str, ...] = ()
    checked: bool = True  # False: ldd was not available, so nothing is known


def missing_libraries(ldd_output: str) -> tuple[str, ...]:
    """The sonames ``ldd`` printed as "not found", each once, in order."""
    return tuple(dict.fromkeys(_NOT_FOUND.findall(ldd_output)))


def packages_for(sonames: tuple[str, ...] | list[str]) -> tuple[list[str], list[str], list[str]]:
    """(Debian/Ubuntu packages, Fedora packages, sonames no package is known for)."""
    debian: dict[str, None] = {}
    fedora: dict[str, None] = {}
    unknown = []
    for so in sonames:
        if so in SYSTEM_PACKAGES:
            deb, fed = SYSTEM_PACKAGES[so]
            debian[deb] = fedora[fed] = None
        else:
            unknown.append(so)
    return list(debian), list(fedora), unknown


def install_advice(sonames: tuple[str, ...] | list[str]) -> str:
    """The commands that install the libraries, for both families of distributions."""
    debian, fedora, unknown = packages_for(sonames)
    lines = []
    if debian:
        lines.append("Debian/Ubuntu: sudo apt install " + " ".join(debian))
        lines.append("Fedora: sudo dnf install " + " ".join(fedora))
    for so in unknown:
        lines.append(f"{so}: apt-file search {so} (Debian/Ubuntu) or "
                     f"dnf provides '*/{so}' (Fedora) names its package")
    return "\n".join(lines)


def platform_names(env: Mapping[str, str]) -> list[str]:
    """The platforms Qt will try, in order (``QT_QPA_PLATFORM``, else from the session).

    An empty list: Qt has nothing it can connect to (it would try xcb and abort)."""
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return [p.split(":", 1)[0].strip() for p in chosen.split(";") if p.strip()]
    names = []
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland":
        names.append("wayland")
    if env.get("DISPLAY"):
        names.append("xcb")
    return names


def pyside6_folder(find_spec: Callable[[str], object] = importlib.util.find_spec) -> Path | None:
    """PySide6's package folder, found without importing it (None: not installed)."""
    spec = find_spec("PySide6")
    if spec is None:
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    frozen_root = getattr(sys, "_MEIPASS", None)  # a PyInstaller bundle keeps it there
    if frozen_root:
        locations.append(str(Path(frozen_root) / "PySide6"))
    for loc in locations:
        if Path(loc, "Qt").is_dir():
            return Path(loc)
    return Path(locations[0]) if locations else None


def platforms_folder(env: Mapping[str, str], pyside6: Path | None) -> Path | None:
    """Where Qt looks for platform plugins ($QT_QPA_PLATFORM_PLUGIN_PATH first)."""
    if env.get("QT_QPA_PLATFORM_PLUGIN_PATH"):
        return Path(env["QT_QPA_PLATFORM_PLUGIN_PATH"])
    return None if pyside6 is None else pyside6 / "Qt" / "plugins" / "platforms"


def plugin_file(folder: Path | None, platform: str) -> Path | None:
    if folder is None:
        return None
    for name in PLUGIN_FILES.get(platform, (f"libq{platform}.so",)):
        if (folder / name).is_file():
            return folder / name
    return None


def run_ldd(path: Path) -> str | None:
    """``ldd PATH``'s output, or None where there is no ldd (or it failed to run); in a
    bundle, with the bundle's library folder searched first, as its loader does."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    env = dict(os.environ)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:  # a PyInstaller bundle loads its own copies of libraries first
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (bundle, env.get("LD_LIBRARY_PATH")) if p)
    try:
        out = subprocess.run([ldd, str(path)], capture_output=True, text=True, timeout=20,
                             env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout + out.stderr


def plugin_libs(folder: Path | None, platform: str,
                ldd: Callable[[Path], str | None] = run_ldd) -> PluginLibs:
    path = plugin_file(folder, platform)
    if path is None:
        return PluginLibs(platform, None)
    output = ldd(path)
    if output is None:
        return PluginLibs(platform, path, checked=False)
    return PluginLibs(platform, path, missing_libraries(output))


# the command-line flags that make a picture and exit: they need no screen
PICTURE_FLAGS = ("--screenshot", "--export", "--check")


def makes_pictures_only(argv: list[str]) -> bool:
    """Whether the command line renders files and exits (a gallery, a screenshot, an
    export, a talk's caption check): no window is shown to anyone."""
    if argv[:1] == ["gallery"]:
        return True
    return any(a == flag or a.startswith(flag + "=") for a in argv for flag in PICTURE_FLAGS)


def headless_platform(argv: list[str], env: Mapping[str, str]) -> str | None:
    """The platform to ask Qt for, or None for Qt's own choice: a command that only makes
    pictures runs on the offscreen platform where there is no display (a CI runner, ssh
    without -X); the gallery always does (its pictures must not depend on the desktop,
    nor flash windows on it). A platform the user set is kept."""
    if env.get("QT_QPA_PLATFORM") or not makes_pictures_only(argv):
        return None
    if argv[:1] == ["gallery"] or not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        return "offscreen"
    return None

"""The app's identity on a Linux desktop: its id and its icon. No Qt.

The id names the .desktop entry, the AppStream metainfo and the installed icon
(packaging/), and the GUI passes it to ``QGuiApplication.setDesktopFileName`` so a Wayland
compositor matches the window to its entry. The icon ships inside the package
(``gemmscope.resources``), so the pip-installed app and the desktop bundle show the same.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

APP_ID = "io.github.gemmscope.gemmscope"
ICON_FILE = "gemmscope.svg"


def icon_path() -> Path:
    """The SVG icon's path on disk (the package is installed unzipped, wheel or bundle)."""
    return Path(str(resources.files("gemmscope.resources") / ICON_FILE))

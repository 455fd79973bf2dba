"""packaging/: the .desktop entry and the AppStream metainfo pass their validators (where
installed; CI installs them), agree with each other and with the app's id and icon, and
the README's system packages are the ones the doctor would name."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import places
import pytest

from gemmscope.app.core.desktop_entry import APP_ID, ICON_FILE, icon_path
from gemmscope.app.core.qt_platform import SYSTEM_PACKAGES

REPO = places.REPO
PACKAGING = REPO / "packaging"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"


def validator(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (CI installs it)")
    return exe


def test_desktop_entry_passes_desktop_file_validate():
    out = subprocess.run([validator("desktop-file-validate"), str(DESKTOP)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "", out.stdout + out.stderr


def test_metainfo_passes_appstreamcli_validate():
    out = subprocess.run([validator("appstreamcli"), "validate", "--no-net", "--pedantic",
                          str(METAINFO)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    # infos are fine (an older appstream does not know <developer>); no warnings or errors
    assert not re.search(r"^[EW]: ", out.stdout, re.MULTILINE), out.stdout


def test_entry_metainfo_and_icon_share_the_apps_id():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment, method-assign]
    entry.read(DESKTOP, encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Icon"] == APP_ID and desktop["Exec"] == "gemmscope"
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.find("launchable").text == DESKTOP.name
    assert root.find("provides/binary").text == "gemmscope"
    version = re.search(r'^version = "(.+)"', (REPO / "pyproject.toml").read_text(), re.M)[1]
    assert root.find("releases/release").get("version") == version


def test_the_icon_is_package_data_and_the_bundle_installs_it():
    assert icon_path().read_bytes() == (REPO / "resources" / ICON_FILE).read_bytes()
    assert ET.parse(icon_path()).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    build = (PACKAGING / "build.sh").read_text()
    assert f"resources/{ICON_FILE}" in build and "scalable/apps/$APP_ID.svg" in build
    assert f"APP_ID={APP_ID}" in build and f"APP_ID={APP_ID}" in (
        PACKAGING / "install.sh").read_text()


def test_readme_names_the_packages_the_doctor_knows_for_both_distributions():
    readme = (REPO / "README.md").read_text()
    apt = re.search(r"sudo apt install ([^\n`]+)", readme)
    dnf = re.search(r"sudo dnf install ([^\n`]+)", readme)
    assert apt and dnf
    debian = {deb for deb, _ in SYSTEM_PACKAGES.values()}
    fedora = {fed for _, fed in SYSTEM_PACKAGES.values()}
    assert set(apt[1].split()) <= debian and set(dnf[1].split()) <= fedora
    # the three the issue was about, on both sides
    for so in ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"):
        deb, fed = SYSTEM_PACKAGES[so]
        assert deb in apt[1].split() and fed in dnf[1].split()


def test_every_resource_file_is_package_data():
    # a file under resources/ that no package-data pattern names is missing from the
    # wheel and the bundle (as the talks were): the talk would open in a checkout only
    import fnmatch
    import tomllib

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["gemmscope.resources"]
    root = REPO / "resources"
    data = [p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert "talks/ladder.toml" in data
    missing = [f for f in data if not any(fnmatch.fnmatch(f, pat) and
                                          f.count("/") == pat.count("/") for pat in patterns)]
    assert missing == []

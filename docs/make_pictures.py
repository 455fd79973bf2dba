"""Every picture of the docs, made by one command from the bundled recording, and a check
that the committed pictures are still what the code renders (CI runs it:
tests/test_doc_pictures.py).

    python3 docs/make_pictures.py            render them all again, into docs/
    python3 docs/make_pictures.py --check    render into a scratch folder and compare with
                                             the committed ones; exit 1 if any is stale
    python3 docs/make_pictures.py --check --keep DIR
                                             ... and leave the renders in DIR and, for
                                             each stale picture, DIR/diffs/NAME.diff.png
                                             (the pixels that differ in red)

The pictures (each made by the app's own command, the one the docs quote):

- ``docs/screenshot.png``, the README's:
  ``gemmscope replay resources/sessions/h200-ladder.jsonl.gz --screenshot PATH``
  (1400x900, the first level selected);
- ``docs/gallery/`` (every tab on stage at 1280x720, every scene of the example talk, and
  ``index.md``):
  ``gemmscope gallery OUT --sizes 1280x720 --themes presentation --small``;
- ``docs/pictures.json``: what they were made with (Qt, pyqtgraph, Pillow, the fonts), for
  the check's message when a picture differs.

Kept here, beside the pictures, not in ``benchmarks/`` (which measures) nor in the app (a
user never needs it): it is how the docs are kept true.

A render is the same on every run and machine with the same packages: the offscreen
platform, device pixel ratio 1 and 96 dpi; a fresh home and settings (no one's preferences),
the C locale and UTC; animations off and the whole recording read before the first picture
(the app's picture commands do this); and the fonts chosen through a fontconfig file of our
own: DejaVu Sans and DejaVu Sans Mono (Debian's ``fonts-dejavu-core``), greyscale
antialiasing, slight hinting, whatever the machine's own font settings. Where those fonts
are missing the script refuses (exit 3) rather than render other fonts.

The check's tolerance (``Tolerance``; measured, tests/test_doc_pictures.py): a pixel
differs where one of its channels moved by more than 96 of 255. The gallery's PNGs are in
256 colours, and a render whose antialiased edges moved by a few levels can get another
palette, which moves a rare colour by up to ~90 levels; text, bars and panel edges differ
by far more. A picture is stale where its size differs, or more than 16 pixels differ in
some 32x32 window (a changed digit of a 9 pt label: 70; of a bar's value label in the
smaller type a 22-bar ladder takes, 5 to 4: 24; edges moved by 6 levels, through the
palette: 10 at most), or over 0.1% of its pixels differ (a panel moved: 0.5% to 9%), or
the mean absolute difference over every channel is over 2 of 255 (a colour changed
everywhere; that noise: 1.3 at most). Pictures rendered but not committed, or committed
but no longer rendered, and a changed index.md are stale too. The tests show that a second
render and that noise pass, and that a changed number in the recording and a moved panel
fail.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
from PIL import Image

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
RECORDING = REPO / "resources" / "sessions" / "h200-ladder.jsonl.gz"
SCREENSHOT = "screenshot.png"  # docs/screenshot.png
GALLERY = "gallery"  # docs/gallery/
MANIFEST = "pictures.json"  # docs/pictures.json
COMMAND = "python3 docs/make_pictures.py"
FONTS = {"sans": "DejaVu Sans", "mono": "DejaVu Sans Mono"}
RENDER_TIMEOUT_S = 300

# fontconfig: the system's configuration, then our choices on top (later rules win)
FONTS_CONF = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <alias binding="strong"><family>sans-serif</family>
    <prefer><family>{sans}</family></prefer></alias>
  <alias binding="strong"><family>Sans Serif</family>
    <prefer><family>{sans}</family></prefer></alias>
  <alias binding="strong"><family>monospace</family>
    <prefer><family>{mono}</family></prefer></alias>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintslight</const></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
    <edit name="lcdfilter" mode="assign"><const>lcddefault</const></edit>
    <edit name="embeddedbitmap" mode="assign"><bool>false</bool></edit>
  </match>
</fontconfig>
"""

# what the app's Qt resolves the default and fixed fonts to, in the render's environment
FONT_PROBE = """
import json
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QGuiApplication
app = QGuiApplication([])
fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
screen = app.primaryScreen()
print(json.dumps({"sans": QFontInfo(QFont()).family(), "mono": QFontInfo(fixed).family(),
                  "dpi": screen.logicalDotsPerInch(), "ratio": screen.devicePixelRatio()}))
"""


class PicturesError(RuntimeError):
    """The pictures cannot be made here (fonts, a command that failed)."""


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How far a render may be from the committed picture (see the module's docstring)."""

    noise_levels: int = 96  # a pixel differs where a channel moved by more (of 255)
    mean_levels: float = 2.0  # mean absolute difference over every channel, of 255
    share: float = 0.001  # of the pixels, that may differ
    window_px: int = 32  # the side of a window
    window_count: int = 16  # differing pixels one window may hold


TOLERANCE = Tolerance()


@dataclass(frozen=True, slots=True)
class Difference:
    """How one rendered picture differs from the committed one."""

    name: str  # relative to docs/
    problem: str = ""  # set where the two cannot be compared (missing, size)
    mean_levels: float = 0.0
    share: float = 0.0
    worst_window: int = 0  # the most differing pixels in one window
    worst_at: tuple[int, int] = (0, 0)  # that window's top-left corner (x, y)

    def stale(self, tolerance: Tolerance = TOLERANCE) -> bool:
        return bool(self.problem) or self.mean_levels > tolerance.mean_levels \
            or self.share > tolerance.share or self.worst_window > tolerance.window_count

    def text(self) -> str:
        if self.problem:
            return f"{self.name}: {self.problem}"
        x, y = self.worst_at
        return (f"{self.name}: mean difference {self.mean_levels:.3f}/255, "
                f"{self.share:.4%} of pixels differ, {self.worst_window} in the window at "
                f"({x}, {y})")


def pixels(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def changed_pixels(a: np.ndarray, b: np.ndarray, tolerance: Tolerance = TOLERANCE) -> np.ndarray:
    """True where a pixel of ``b`` differs from ``a`` by more than the noise."""
    return np.abs(a - b).max(axis=2) > tolerance.noise_levels


def compare_arrays(name: str, a: np.ndarray, b: np.ndarray,
                   tolerance: Tolerance = TOLERANCE) -> Difference:
    """``a`` (committed) against ``b`` (rendered), both RGB arrays (height, width, 3)."""
    if a.shape != b.shape:
        return Difference(name, f"{a.shape[1]}x{a.shape[0]} committed, "
                                f"{b.shape[1]}x{b.shape[0]} rendered")
    differs = changed_pixels(a, b, tolerance)
    # differing pixels in every side x side window (a summed-area table): a changed glyph
    # is counted whole wherever it falls, not split between fixed tiles
    side = min(tolerance.window_px, *differs.shape)
    table = np.zeros((differs.shape[0] + 1, differs.shape[1] + 1), dtype=np.int32)
    table[1:, 1:] = differs.cumsum(axis=0, dtype=np.int32).cumsum(axis=1)
    counts = (table[side:, side:] - table[:-side, side:] - table[side:, :-side]
              + table[:-side, :-side])
    row, col = np.unravel_index(int(counts.argmax()), counts.shape)
    return Difference(name, mean_levels=float(np.abs(a - b).mean()),
                      share=float(differs.mean()), worst_window=int(counts.max()),
                      worst_at=(int(col), int(row)))


def compare(name: str, committed: Path, rendered: Path,
            tolerance: Tolerance = TOLERANCE) -> Difference:
    return compare_arrays(name, pixels(committed), pixels(rendered), tolerance)


def render_env(scratch: Path) -> dict[str, str]:
    """The environment every picture is rendered in: the offscreen platform at ratio 1, a
    fresh home, the C locale, UTC, and our fontconfig file (written into ``scratch``)."""
    drop = ("DISPLAY", "WAYLAND_DISPLAY", "FONTCONFIG_PATH", "FREETYPE_PROPERTIES")
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not k.startswith(("QT_", "LC_"))}
    home = scratch / "home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    conf = scratch / "fonts.conf"
    conf.write_text(FONTS_CONF.format(**FONTS), encoding="utf-8")
    env.update(QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR="1",
               QT_ENABLE_HIGHDPI_SCALING="0", QT_FONT_DPI="96",
               HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_CACHE_HOME=str(scratch / "cache"), XDG_RUNTIME_DIR=str(scratch),
               FONTCONFIG_FILE=str(conf), LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC",
               GEMMSCOPE_NO_GPU="1", PYTHONHASHSEED="0")
    os.chmod(scratch, 0o700)  # (Qt wants its runtime folder private)
    return env


def run(args: list[str], env: dict[str, str], what: str) -> None:
    proc = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=RENDER_TIMEOUT_S, cwd=REPO)
    if proc.returncode != 0:
        raise PicturesError(f"{what} failed (exit {proc.returncode}): "
                            f"{proc.stderr.strip()[-2000:]}")


def made_with(env: dict[str, str]) -> dict[str, object]:
    """The fonts Qt resolves in ``env`` and the packages that draw; refuses other fonts."""
    proc = subprocess.run([sys.executable, "-c", FONT_PROBE], env=env, capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0:
        raise PicturesError(f"Qt could not start: {proc.stderr.strip()[-2000:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    wrong = {k: found[k] for k in FONTS if found[k] != FONTS[k]}
    if wrong:
        raise PicturesError(
            f"the pictures are drawn in {FONTS['sans']} and {FONTS['mono']}; here Qt "
            f"resolves {wrong}: install them (Debian, Ubuntu: apt-get install "
            "fonts-dejavu-core)")
    versions = {}
    for package in ("PySide6-Essentials", "pyqtgraph", "Pillow", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "none"
    return {"fonts": {k: found[k] for k in FONTS}, "dpi": found["dpi"],
            "device_pixel_ratio": found["ratio"], "packages": versions}


def render_screenshot(out: Path, env: dict[str, str], recording: Path = RECORDING) -> Path:
    """The README's screenshot of ``recording``, as ``out``."""
    settings = Path(env["HOME"]) / "screenshot-prefs.ini"
    run(["-m", "gemmscope.app.main", "replay", str(recording), "--screenshot", str(out),
         "--settings", str(settings)], env, "the screenshot")
    return out


def render_gallery(out: Path, env: dict[str, str], recording: Path = RECORDING) -> Path:
    """The gallery (docs/gallery/) into ``out``."""
    run(["-m", "gemmscope.app.main", "gallery", str(out), "--sizes", "1280x720",
         "--themes", "presentation", "--small", "--recording", str(recording)],
        env, "the gallery")
    return out


def render_all(out: Path, scratch: Path) -> dict[str, object]:
    """Every picture into ``out`` (laid out as docs/ is); what they were made with."""
    env = render_env(scratch)
    found = made_with(env)
    out.mkdir(parents=True, exist_ok=True)
    render_screenshot(out / SCREENSHOT, env)
    render_gallery(out / GALLERY, env)
    (out / MANIFEST).write_text(json.dumps(found, indent=2, sort_keys=True) + "\n",
                                encoding="utf-8")
    return found


def pictures_in(folder: Path) -> set[str]:
    """The pictures (names relative to docs/) that ``folder``, laid out as docs/, holds."""
    names = {SCREENSHOT} if (folder / SCREENSHOT).is_file() else set()
    return names | {f"{GALLERY}/{p.name}" for p in (folder / GALLERY).glob("*.png")}


def compare_folders(docs: Path, rendered: Path,
                    tolerance: Tolerance = TOLERANCE) -> list[Difference]:
    """Every picture of ``docs`` against ``rendered`` (laid out alike); the stale ones."""
    found, ours = pictures_in(docs), pictures_in(rendered)
    stale = [Difference(name, "rendered, not committed") for name in sorted(ours - found)]
    stale += [Difference(name, "committed, no longer rendered")
              for name in sorted(found - ours)]
    for name in sorted(found & ours):
        difference = compare(name, docs / name, rendered / name, tolerance)
        if difference.stale(tolerance):
            stale.append(difference)
    index = f"{GALLERY}/index.md"
    committed_index = docs / index
    if not committed_index.is_file() or committed_index.read_text(encoding="utf-8") != \
            (rendered / index).read_text(encoding="utf-8"):
        stale.append(Difference(index, "the gallery's index differs"))
    return stale


def diff_picture(committed: Path, rendered: Path, out: Path) -> None:
    """The committed picture dimmed, the pixels that differ in red."""
    a, b = pixels(committed), pixels(rendered)
    if a.shape != b.shape:
        return
    picture = (a * 0.35 + 160).astype(np.uint8)
    picture[changed_pixels(a, b)] = (230, 0, 0)
    Image.fromarray(picture, "RGB").save(out)


def check(keep: Path | None = None, docs: Path = DOCS) -> tuple[list[Difference], dict]:
    """Render into a scratch folder and compare with ``docs``: the stale pictures, and
    what this render was made with. ``keep``: copy the renders and diffs there."""
    with tempfile.TemporaryDirectory(prefix="gemmscope-pictures-") as tmp:
        rendered = Path(tmp) / "docs"
        found = render_all(rendered, Path(tmp) / "scratch")
        stale = compare_folders(docs, rendered)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copytree(rendered, keep, dirs_exist_ok=True)
            for difference in stale:
                if not difference.problem:
                    out = keep / "diffs" / f"{difference.name[:-4]}.diff.png"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    diff_picture(docs / difference.name, rendered / difference.name, out)
    return stale, found


def make(docs: Path = DOCS) -> list[str]:
    """Render every picture again into ``docs`` (the gallery's folder made afresh, so a
    picture no longer rendered goes); the names written."""
    with tempfile.TemporaryDirectory(prefix="gemmscope-pictures-") as tmp:
        rendered = Path(tmp) / "docs"
        render_all(rendered, Path(tmp) / "scratch")
        shutil.rmtree(docs / GALLERY, ignore_errors=True)
        shutil.copytree(rendered / GALLERY, docs / GALLERY)
        shutil.copyfile(rendered / SCREENSHOT, docs / SCREENSHOT)
        shutil.copyfile(rendered / MANIFEST, docs / MANIFEST)
        return sorted(pictures_in(rendered))


def manifest_lines(docs: Path, found: dict) -> list[str]:
    try:
        committed = json.loads((docs / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        committed = {}
    if committed == found:
        return [f"made with the same fonts and packages as here: {json.dumps(found)}"]
    return [f"the committed pictures were made with {json.dumps(committed)}",
            f"this render: {json.dumps(found)}"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog=COMMAND, description="Render the README's screenshot and docs/gallery/ from "
                                  "the bundled recording; --check compares instead.")
    p.add_argument("--check", action="store_true",
                   help="render into a scratch folder and compare with the committed "
                        "pictures; exit 1 where any is stale")
    p.add_argument("--keep", type=Path, metavar="DIR",
                   help="with --check: leave the renders and the stale pictures' diffs here")
    args = p.parse_args(argv)
    if args.keep and not args.check:
        p.error("--keep goes with --check")
    try:
        if not args.check:
            names = make()
            print(f"{len(names)} pictures written in {DOCS} (and {MANIFEST})")
            return 0
        stale, found = check(args.keep)
    except (PicturesError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"{COMMAND}: {exc}", file=sys.stderr)
        return 3
    t = TOLERANCE
    print(f"tolerance: a pixel differs past {t.noise_levels}/255 in a channel; stale past "
          f"mean {t.mean_levels}/255, {t.share:.1%} of pixels, or {t.window_count} pixels "
          f"in a {t.window_px}x{t.window_px} window")
    if not stale:
        print("every picture is what the code renders")
        return 0
    for difference in stale:
        print(f"stale: {difference.text()}")
    for line in manifest_lines(DOCS, found):
        print(line)
    print(f"render them again: {COMMAND}"
          + (f" (renders and diffs in {args.keep})" if args.keep else ""))
    return 1


if __name__ == "__main__":
    sys.exit(main())

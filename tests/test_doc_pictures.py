"""The README's screenshot and docs/gallery/ are what the code renders (docs/make_pictures.py,
within its stated tolerance), so a picture cannot go stale; and that tolerance is the right
one: a second render and antialiasing noise pass, a changed number in the recording and a
moved panel fail.

One render of every picture (``make_pictures.py --check --keep``, ~15 s of CPU) serves the
module; the other tests render the screenshot alone (~2 s each).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import places
import pytest
from PIL import Image

pytestmark = pytest.mark.xdist_group("doc_pictures")  # one render for the module

SCRIPT = places.REPO / "docs" / "make_pictures.py"
DOCS = places.REPO / "docs"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_pictures", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pictures() -> ModuleType:
    return load_script()


@pytest.fixture(scope="module")
def check(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """``make_pictures.py --check --keep DIR`` as CI runs it: its answer and its renders."""
    keep = tmp_path_factory.mktemp("pictures")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check", "--keep", str(keep)],
                          capture_output=True, text=True, timeout=600, env=env)
    if proc.returncode == 3 and "fonts-dejavu-core" in proc.stderr:
        pytest.skip(f"the pictures' fonts are not here: {proc.stderr.strip()}")
    return proc, keep


@pytest.fixture(scope="module")
def render_env(pictures, tmp_path_factory) -> dict[str, str]:
    return pictures.render_env(tmp_path_factory.mktemp("scratch"))


def test_the_committed_pictures_are_what_the_code_renders(check):
    proc, keep = check
    assert proc.returncode == 0, (
        f"{proc.stdout}{proc.stderr}\nLook at the renders and diffs kept in {keep}; if "
        "the change is meant, render the pictures again: python3 docs/make_pictures.py")
    assert "every picture is what the code renders" in proc.stdout
    assert (keep / "screenshot.png").is_file()
    assert len(list((keep / "gallery").glob("*.png"))) >= 20


def test_every_committed_picture_is_rendered_and_listed(check, pictures):
    _proc, keep = check
    assert pictures.pictures_in(DOCS) == pictures.pictures_in(keep)
    index = (DOCS / "gallery" / "index.md").read_text(encoding="utf-8")
    assert all(Path(name).name in index for name in pictures.pictures_in(DOCS)
               if name.startswith("gallery/"))
    readme = (places.REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/screenshot.png" in readme and "docs/make_pictures.py" in readme


def test_a_second_render_passes(check, pictures, render_env, tmp_path):
    _proc, keep = check
    again = pictures.render_screenshot(tmp_path / "screenshot.png", render_env)
    difference = pictures.compare("screenshot.png", keep / "screenshot.png", again)
    assert not difference.stale(), difference.text()


def one_level_slower(recording: Path, out: Path) -> str:
    """A copy of ``recording`` at ``out`` where register_2d's 4096^3 results show 0.1
    TFLOPS less (one digit of its label and table cell); the old and new labels."""
    lines, label = [], None
    with gzip.open(recording, "rt", encoding="utf-8") as f:
        for line in f:
            if "register_2d" not in line:  # (most of 110 MB: not parsed)
                lines.append(line)
                continue
            event = json.loads(line)
            if event.get("type") == "result" and event.get("level") == "register_2d" \
                    and (event.get("M"), event.get("N"), event.get("K")) == (4096,) * 3:
                old = event["tflops"]
                new = round(old, 1) - 0.1
                event["median_ms"] *= old / new
                event["tflops"] = new
                label = f"{old:.1f} -> {new:.1f}"
                line = json.dumps(event) + "\n"
            lines.append(line)
    assert label is not None, "the recording has no register_2d result at 4096^3"
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=1) as f:  # (read once)
        f.writelines(lines)
    return label


def test_a_changed_number_in_the_recording_fails(check, pictures, render_env, tmp_path):
    _proc, keep = check
    changed = tmp_path / pictures.RECORDING.name  # the same name: the status bar says it
    label = one_level_slower(pictures.RECORDING, changed)
    picture = pictures.render_screenshot(tmp_path / "screenshot.png", render_env, changed)
    difference = pictures.compare("screenshot.png", keep / "screenshot.png", picture)
    assert difference.stale(), f"{label}: {difference.text()}"
    # only the window test sees it: one label and a table cell, not a panel
    assert difference.share <= pictures.TOLERANCE.share
    assert difference.mean_levels <= pictures.TOLERANCE.mean_levels


def moved(image: Image.Image, box: tuple[int, int, int, int], down_px: int) -> Image.Image:
    """``image`` with the region ``box`` drawn ``down_px`` lower, as a panel moved."""
    out = image.copy()
    out.paste(image.crop(box), (box[0], box[1] + down_px))
    return out


@pytest.mark.parametrize("name", ["screenshot.png", "gallery/talk-1280x720-scene-04.png"])
def test_a_panel_moved_by_three_pixels_fails(check, pictures, name):
    _proc, keep = check
    with Image.open(keep / name) as image:
        rgb = image.convert("RGB")
    width, height = rgb.size
    panel = moved(rgb, (0, 0, width // 3, height - 3), 3)  # the left third, 3 px lower
    difference = pictures.compare_arrays(name, np.asarray(rgb, dtype=np.int16),
                                         np.asarray(panel, dtype=np.int16))
    assert difference.stale(), difference.text()


def edge_noise(rgb: np.ndarray, levels: int, seed: int) -> np.ndarray:
    """``rgb`` with every pixel beside a colour change moved by up to ``levels`` in each
    channel: antialiasing that differs a little (flat fills are drawn exactly)."""
    step_x = np.abs(np.diff(rgb, axis=1)).max(axis=2) > 0
    step_y = np.abs(np.diff(rgb, axis=0)).max(axis=2) > 0
    edge = np.zeros(rgb.shape[:2], dtype=bool)
    edge[:, 1:] |= step_x
    edge[:, :-1] |= step_x
    edge[1:] |= step_y
    edge[:-1] |= step_y
    noisy = rgb.astype(np.int16)
    rng = np.random.default_rng(seed)
    noisy[edge] += rng.integers(-levels, levels + 1, (int(edge.sum()), 3), dtype=np.int16)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def test_antialiasing_noise_passes_even_through_the_palette(check, pictures):
    """Every picture with its edges moved by 3 levels (and, for the gallery's 256-colour
    PNGs, quantized again as the gallery does, which may pick another palette)."""
    _proc, keep = check
    stale = []
    for seed, name in enumerate(sorted(pictures.pictures_in(keep))):
        with Image.open(keep / name) as image:
            palette = image.mode == "P"
            committed = np.asarray(image.convert("RGB"))
        noisy = Image.fromarray(edge_noise(committed, 3, seed), "RGB")
        if palette:
            noisy = noisy.quantize(256, dither=Image.Dither.NONE).convert("RGB")
        difference = pictures.compare_arrays(name, committed.astype(np.int16),
                                             np.asarray(noisy, dtype=np.int16))
        if difference.stale():
            stale.append(difference.text())
    assert stale == []


def test_pictures_missing_added_or_resized_are_stale(check, pictures, tmp_path):
    _proc, keep = check
    docs = tmp_path / "docs"
    gallery = docs / "gallery"
    gallery.mkdir(parents=True)
    (docs / "screenshot.png").write_bytes((keep / "screenshot.png").read_bytes())
    (gallery / "index.md").write_text("# another index\n", encoding="utf-8")
    Image.new("RGB", (1280, 720)).save(gallery / "old-picture.png")
    with Image.open(keep / "screenshot.png") as image:
        image.resize((1400, 899)).save(tmp_path / "small.png")
    stale = {d.name: d.problem for d in pictures.compare_folders(docs, keep)}
    assert stale["gallery/old-picture.png"] == "committed, no longer rendered"
    assert stale["gallery/index.md"] == "the gallery's index differs"
    rendered_only = {n for n in pictures.pictures_in(keep) if n.startswith("gallery/")}
    assert rendered_only and all(stale[n] == "rendered, not committed" for n in rendered_only)
    assert "screenshot.png" not in stale
    resized = pictures.compare("screenshot.png", keep / "screenshot.png",
                               tmp_path / "small.png")
    assert resized.stale() and "1400x899 rendered" in resized.problem


def test_pictures_are_refused_in_fonts_other_than_the_chosen(pictures, tmp_path,
                                                             monkeypatch):
    monkeypatch.setattr(pictures, "FONTS", {"sans": "No Such Font Sans",
                                            "mono": "No Such Font Mono"})
    with pytest.raises(pictures.PicturesError, match="fonts-dejavu-core"):
        pictures.made_with(pictures.render_env(tmp_path / "scratch"))

"""The gallery (`gemmscope gallery OUT`): every tab in normal and presentation mode at
1280x720, 1366x768 and 1920x1080 and every scene of the example talk at 1280x720, from the
bundled recording; and, on those very windows as each picture is taken, the stage's
measurable rules:

- on stage at 1280x720 the view on screen has at least 75% of the window;
- on stage no text is under 18 px (tests/support/layout_check.py walks widgets, plots and the
  canvases' painted texts);
- nowhere is a text cut without an ellipsis and a tooltip, nor a widget out of the window;
- on stage no panel is open but the talk's caption (info events open none);
- the Code tab on stage shows at least 20 whole lines of source and of SASS; the pictures draw
  every label (none cut, none left out); Telemetry shows clocks, power and temperature;
- a talk's caption fits its band; an export from a gallery window is the size asked;
- every PNG is exactly the window's size.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from layout_check import layout_problems, small_texts, view_share
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QDockWidget

from gemmscope.app.gallery import SIZES, TALK_SIZE, Shot, render_gallery
from gemmscope.app.theme import STAGE_TEXT_PX
from gemmscope.app.views.code_panels import TextPanel
from gemmscope.app.views.registry import VIEWS
from gemmscope.app.widgets.caption_bar import CaptionBar
from gemmscope.app.window.main_window import bundled_session

PICTURES = ("tiling", "banks", "swizzle", "coalescing")
MIN_CODE_LINES = 20
MIN_STAGE_SHARE = 0.75
# one worker takes the module, so that its module fixture (the costly part) runs once
pytestmark = pytest.mark.xdist_group("gallery")


@pytest.fixture(scope="module")
def recording() -> Path:
    path = bundled_session()
    if path is None:
        pytest.skip("the bundled recording is not in this build")
    return path


def visible_lines(panel: TextPanel) -> int:
    """The lines a person reads whole in ``panel`` (its viewport over the line height
    counted a line whose last pixel row was hidden)."""
    block, offset = panel.firstVisibleBlock(), panel.contentOffset()
    bottom, whole = panel.viewport().height(), 0
    while block.isValid() and panel.blockBoundingGeometry(block).translated(
            offset).bottom() <= bottom + 0.5:
        whole += 1
        block = block.next()
    return whole


def stage_findings(shot: Shot, window) -> list[str]:
    """What breaks the stage's rules in ``window`` as ``shot`` was taken."""
    found = []
    if shot.size == (1280, 720) and not shot.scene \
            and view_share(window) < MIN_STAGE_SHARE:
        found.append(f"the view has {view_share(window):.0%} of the window")
    found += small_texts(window, STAGE_TEXT_PX)
    docks = [d.objectName() for d in window.findChildren(QDockWidget)
             if d.isVisible() and d.objectName() != "dock_talk"]
    found += [f"panel open on stage: {name}" for name in docks]
    if any(t.isVisible() for t in window.findChildren(type(window.replay_toolbar))):
        found.append("a toolbar is open on stage")
    view = window.views[shot.tab]
    if shot.scene:  # a talk's caption band takes its share: the pictures (the
        # warp-specialized pipeline's too) still cut no label and leave none out
        canvas = getattr(view, "canvas", None)
        if shot.tab in PICTURES and canvas is not None:
            if canvas.cut_texts or canvas.left_out:
                found.append(f"scene {shot.scene} {shot.tab}: labels cut "
                             f"{canvas.cut_texts[:3]}, left out {canvas.left_out[:3]}")
        return found
    if shot.tab == "code":
        panels = [p for p in view.findChildren(TextPanel) if p.isVisible()]
        # each panel side by side: the source (or diff) and the SASS
        lines = min((visible_lines(p) for p in panels), default=0)
        if lines < MIN_CODE_LINES:
            found.append(f"code: {lines} whole lines of source or SASS")
    if shot.tab in PICTURES:
        canvas = view.canvas
        if canvas.cut_texts or canvas.left_out:
            found.append(f"{shot.tab}: labels cut {canvas.cut_texts[:3]}, left out "
                         f"{canvas.left_out[:3]}")
    if shot.tab == "telemetry":
        hidden = [n for n in ("clocks", "power", "temperature") if not view.plots[n].isVisible()]
        if hidden:
            found.append(f"telemetry hides {hidden}")
    return found


@pytest.fixture(scope="module")
def gallery(recording, tmp_path_factory, qapp):
    """The whole gallery, rendered once; the findings of each shot, by name."""
    out = tmp_path_factory.mktemp("gallery")
    findings: dict[str, list[str]] = {}
    captions: dict[str, list[str]] = {}  # a talk's caption cut, by scene
    sizes: dict[str, tuple[int, int]] = {}

    def inspect(shot: Shot, window) -> None:
        found = [f"layout: {p}" for p in layout_problems(window)
                 if not (shot.scene and "talk_caption" in p)]
        if shot.scene:
            captions[shot.name] = [p for p in layout_problems(window) if "talk_caption" in p]
            gallery_fits[shot.scene] = window.findChildren(CaptionBar)[0].fits
        if shot.theme == "presentation":
            found += stage_findings(shot, window)
        if window.size().toTuple() != shot.size:
            found.append(f"the window is {window.size().toTuple()}")
        if shot.name == "presentation-1280x720-charts":  # an export from a stage window
            for name, size in (("bars", (1280, 720)), ("tiling", (640, 360))):
                path = window.export_named(out / f"export-{name}.png", name, size=size)
                image = QImage(str(path))
                if (image.width(), image.height()) != size:
                    found.append(f"export of {name}: {image.width()}x{image.height()}")
        findings[shot.name] = found
        sizes[shot.name] = shot.size

    shots = render_gallery(out, recording, inspect=inspect)
    gallery_captions.update(captions)
    return out, shots, findings, sizes


gallery_captions: dict[str, list[str]] = {}
gallery_fits: dict[int, bool] = {}  # each scene's caption bar: does it say it fits?


def test_the_gallery_renders_every_tab_and_every_scene(gallery):
    out, shots, _findings, sizes = gallery
    tabs = [s for s in shots if not s.scene]
    assert len(tabs) == 2 * len(SIZES) * len(VIEWS)
    assert {(s.theme, s.size, s.tab) for s in tabs} == {
        (theme, size, spec.name) for theme in ("normal", "presentation") for size in SIZES
        for spec in VIEWS}
    scenes = [s for s in shots if s.scene]
    assert scenes and all(s.size == TALK_SIZE for s in scenes)
    for shot in shots:
        image = QImage(str(shot.path))
        assert (image.width(), image.height()) == sizes[shot.name], shot.name
    index = (out / "index.md").read_text()
    assert all(shot.path.name in index for shot in shots)


@pytest.mark.parametrize("theme", ["normal", "presentation", "talk"])
def test_every_picture_keeps_the_stage_rules(gallery, theme):
    _out, shots, findings, _sizes = gallery
    chosen = [s for s in shots if (s.scene > 0) == (theme == "talk")
              and (theme == "talk" or s.theme == theme)]
    assert chosen
    broken = {s.name: findings[s.name] for s in chosen if findings[s.name]}
    assert broken == {}


def test_every_talk_caption_fits_its_band(gallery):
    assert gallery_captions and {k: v for k, v in gallery_captions.items() if v} == {}


def test_talk_check_names_the_scenes_whose_caption_the_gallery_finds_cut(gallery, capsys):
    """`talk --check`, the caption bar and the layout check agree scene by scene: check
    had measured every scene with the first scene's number beside it, and the bar with
    the font's metrics, and both passed a caption that scene 15 cut by a pixel."""
    from gemmscope.app import gui_main

    cut = {int(name.rsplit("-", 1)[1]) for name, found in gallery_captions.items() if found}
    unfit = {scene for scene, fits in gallery_fits.items() if not fits}
    gui_main.main(["talk", "ladder", "--check"])
    said = capsys.readouterr()
    listed = {int(n) for n in re.findall(r"scene (\d+): ", said.out + said.err)}
    assert gallery_fits and cut == unfit == listed


def test_the_gallery_command_runs_with_no_display(tmp_path):
    """(with --small, as docs/gallery/ is made: PNGs in at most 256 colours; one theme: the
    test above renders both themes in this process)"""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "gallery", str(out),
                           "--sizes", "1024x640", "--themes", "presentation", "--no-talk",
                           "--small"],
                          capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    pictures = sorted(out.glob("*.png"))
    assert len(pictures) == len(VIEWS) and all("presentation" in p.name for p in pictures)
    assert all(QImage(str(p)).size().toTuple() == (1024, 640) for p in pictures)
    assert not [p for p in tmp_path.rglob("*.ini")]  # no preferences left behind
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "gallery", str(out),
                           "--sizes", "big"], capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 2 and "WIDTHxHEIGHT" in proc.stderr


def test_a_bad_recordings_text_reaches_the_terminal_escaped(tmp_path, capsys):
    """A recording is from outside: what its bad line says is one line on stderr, its
    control characters written as escapes (a terminal would obey a raw ESC)."""
    from gemmscope.app.gallery import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text(r'{"type": "\u001b[31mred\u202e"}' + "\n", encoding="utf-8")  # JSON escapes
    code = main([str(tmp_path / "out"), "--recording", str(bad), "--no-talk",
                 "--sizes", "1280x720", "--themes", "normal"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("gemmscope gallery: cannot read")
    assert "\x1b" not in err and "\u202e" not in err and err.count("\n") == 1
    assert "\\x1b" in err  # said, as an escape


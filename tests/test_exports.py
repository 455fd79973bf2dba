"""Exports equal the screen: the SVG draws what the PNG does (read back through QtSvg), a
PNG at 2x is the same picture, no hover box in a file, animations as GIF and WebP, and the
command-line export of every suffix without touching the user's preferences."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from gemmscope.app.window.exports import ExportError


@pytest.fixture
def shown(qtbot, make_window, synthetic_file):
    window = make_window()
    window.resize(1400, 900)
    window.open_recording(synthetic_file)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentWidget(window.views["charts"])
    window.flush_views()
    return window


def pixels(image: QImage) -> np.ndarray:
    """An image as an (h, w) array of 0xRRGGBB."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    raw = np.frombuffer(bytes(image.constBits()), np.uint32)
    return raw.reshape(image.height(), image.bytesPerLine() // 4)[:, :image.width()] & 0xFFFFFF


def box(px: np.ndarray, colour: QColor) -> tuple[int, int, int, int] | None:
    """Bounding box (x0, y0, x1, y1) of the pixels of exactly ``colour``."""
    ys, xs = np.nonzero(px == (colour.rgb() & 0xFFFFFF))
    return (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())) if xs.size else None


def svg_as_image(path: Path, width: int, height: int) -> QImage:
    renderer = QSvgRenderer(str(path))
    assert renderer.isValid()
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return image


def bar_colours(bars) -> list[QColor]:
    # the bars' own fills (one shade per level); the references use other colours
    return [b.color() for b in bars.bars.opts["brushes"]]


def test_svg_draws_the_bars_where_the_png_does(shown, tmp_path):
    bars = shown.charts()["bars"]
    png = QImage(str(shown.export_named(tmp_path / "bars.png", "bars")))
    svg = svg_as_image(shown.export_named(tmp_path / "bars.svg", "bars"), png.width(),
                       png.height())
    a, b = pixels(png), pixels(svg)
    compared = 0
    for colour in bar_colours(bars):
        in_png, in_svg = box(a, colour), box(b, colour)
        assert in_png is not None, colour.name()
        assert in_svg is not None, colour.name()
        # the same bar at the same place and height (a 72/96 dpi mix-up puts it at 0.75x)
        assert np.allclose(in_png, in_svg, atol=2), (colour.name(), in_png, in_svg)
        compared += 1
    assert compared == len(bars.rows)


def test_png_at_2x_is_the_same_picture_with_twice_the_pixels(shown, tmp_path):
    bars = shown.charts()["bars"]
    one = QImage(str(shown.export_named(tmp_path / "one.png", "bars")))
    two = QImage(str(shown.export_named(tmp_path / "two.png", "bars", scale=2)))
    assert (one.width(), one.height()) == (bars.width(), bars.height())
    assert (two.width(), two.height()) == (2 * one.width(), 2 * one.height())
    a, b = pixels(one), pixels(two)
    for colour in bar_colours(bars):
        x0, y0, x1, y1 = box(a, colour)
        X0, Y0, X1, Y1 = box(b, colour)
        assert np.allclose([X0, Y0, X1, Y1], [2 * x0, 2 * y0, 2 * x1 + 1, 2 * y1 + 1], atol=3)


def test_no_hover_box_in_an_export_and_it_hides_when_the_mouse_leaves(shown, tmp_path):
    bars = shown.charts()["bars"]
    clean = pixels(QImage(str(shown.export_named(tmp_path / "clean.png", "bars"))))
    bars.hover.show_at(3, 1.0)
    assert bars.hover.label.isVisible()
    hovered = pixels(QImage(str(shown.export_named(tmp_path / "hovered.png", "bars"))))
    assert not bars.hover.label.isVisible()
    np.testing.assert_array_equal(hovered, clean)
    bars.hover.show_at(3, 1.0)
    QApplication.sendEvent(bars.viewport(), QEvent(QEvent.Type.Leave))
    assert not bars.hover.label.isVisible() and bars.hover.text == ""


def test_which_chart_is_exported_is_named_not_taken_from_the_mouse(shown, tmp_path):
    sweep = shown.charts()["sweep"]
    sweep.hover.show_at(3.3, 10.0)  # the mouse was last over the sweep
    image = QImage(str(shown.export_named(tmp_path / "bars.png", "bars")))
    bars = shown.charts()["bars"]
    assert (image.width(), image.height()) == (bars.width(), bars.height())
    assert box(pixels(image), bar_colours(bars)[0]) is not None


def test_animation_exports_as_gif_and_webp_with_one_frame_per_step(shown, tmp_path):
    shown.select_level("register_2d")
    canvas = shown.views["tiling"].canvas
    steps = canvas.n_steps()
    assert steps > 1
    frames = min(steps, 6)
    before = canvas.step
    for suffix in ("gif", "webp"):
        path = shown.export_named(tmp_path / f"tiling.{suffix}", "tiling", frames=frames)
        with Image.open(path) as im:
            assert im.n_frames == frames  # each step draws a different picture
            im.seek(frames - 1)
            im.load()
            assert im.size == (canvas.width(), canvas.height())
    assert canvas.step == before  # the view is left as it was


def test_exports_refuse_what_they_cannot_make(shown, tmp_path):
    with pytest.raises(ExportError, match="animation view"):
        shown.export_named(tmp_path / "bars.gif", "bars")
    with pytest.raises(ExportError, match="format"):
        shown.export_named(tmp_path / "bars.jpeg", "bars")
    with pytest.raises(ExportError, match="scale"):
        shown.export_named(tmp_path / "bars.png", "bars", scale=0)
    assert not list(tmp_path.glob("bars*"))  # nothing half written


def test_mp4_without_an_encoder_says_what_to_install(shown, tmp_path):
    pytest.importorskip("PIL")
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        with pytest.raises(ExportError, match="imageio-ffmpeg"):
            shown.export_named(tmp_path / "tiling.mp4", "tiling", frames=2)
    else:
        path = shown.export_named(tmp_path / "tiling.mp4", "tiling", frames=2)
        assert path.stat().st_size > 0


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(home),
               XDG_CONFIG_HOME=str(home / ".config"))
    return subprocess.run([sys.executable, "-m", "gemmscope.app.main", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_cli_exports_each_suffix_and_never_writes_preferences(tmp_path, synthetic_file):
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "out"
    for name, chart in (("bars.png", "bars"), ("sweep.svg", "sweep"), ("results.csv", None),
                        ("ladder.md", None), ("tiling.gif", "tiling")):
        extra = ["--chart", chart] if chart else []
        proc = run_cli("replay", str(synthetic_file), "--export", str(out / name), *extra,
                       "--frames", "3", home=home)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().endswith(name)
    assert QImage(str(out / "bars.png")).width() > 100
    assert QSvgRenderer(str(out / "sweep.svg")).isValid()
    assert (out / "results.csv").read_text().startswith("level,")
    assert "| wmma |" in (out / "ladder.md").read_text()
    with Image.open(out / "tiling.gif") as im:
        assert im.n_frames >= 2
    assert not [p for p in home.rglob("*") if p.is_file()]  # no preferences written


def test_cli_export_at_scale_2_and_its_refusals(tmp_path, synthetic_file):
    home = tmp_path / "home"
    one, two = tmp_path / "one.png", tmp_path / "two.png"
    for path, scale in ((one, "1"), (two, "2")):
        proc = run_cli("replay", str(synthetic_file), "--export", str(path), "--chart",
                       "sweep", "--scale", scale, home=home)
        assert proc.returncode == 0, proc.stderr
    assert QImage(str(two)).width() == 2 * QImage(str(one)).width()
    proc = run_cli("replay", str(synthetic_file), "--export", str(tmp_path / "x.gif"),
                   "--chart", "bars", home=home)
    assert proc.returncode == 2 and "animation view" in proc.stderr
    proc = run_cli("--help", home=home)
    assert "--export" in proc.stdout and "tiling" in proc.stdout and "repeats" in proc.stdout


def test_file_menu_names_each_chart_and_offers_png_at_2x(shown, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from gemmscope.app.window import menus
    from gemmscope.app.window.exports import ANIMATION_TARGETS, CHART_TARGETS

    file_menu = next(a.menu() for a in shown.menuBar().actions() if a.text() == "&File")
    submenus = {a.text(): a.menu() for a in file_menu.actions() if a.menu() is not None}
    charts = [a.text() for a in submenus["Export &chart"].actions()]
    assert charts == [f"{t.title}…" for t in CHART_TARGETS]
    animations = [a.text() for a in submenus["Export &animation"].actions()]
    assert animations == [f"{t.title}…" for t in ANIMATION_TARGETS]
    slide = next(f for f, scale in menus.PICTURE_FILTERS if scale == 2.0)
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(tmp_path / "sweep"), slide)))
    submenus["Export &chart"].actions()[2].trigger()  # Size sweep…
    sweep = shown.charts()["sweep"]
    image = QImage(str(tmp_path / "sweep.png"))  # the filter's suffix was added
    assert (image.width(), image.height()) == (2 * sweep.width(), 2 * sweep.height())
    assert "saved" in shown.statusBar().currentMessage()

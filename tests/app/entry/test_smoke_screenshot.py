"""The whole app in a subprocess: `gemmscope replay FILE --screenshot out.png`, then the image."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage

from gemmscope.app.theme import PRECISION_COLORS


def run_app(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "gemmscope.app.main", *args,
         "--settings", str(tmp_path / "prefs.ini")],
        capture_output=True, text=True, timeout=60, env=env)


def colour_count(image: QImage, colour: str, step: int = 2) -> int:
    want = QColor(colour).rgb()
    return sum(1 for y in range(0, image.height(), step) for x in range(0, image.width(), step)
               if image.pixel(x, y) == want)


def hue_count(image: QImage, colour: str, step: int = 2) -> int:
    """Pixels of ``colour``'s hue (any shade of it: each level has its own)."""
    hue = QColor(colour).hslHue()

    def same_hue(pixel: int) -> bool:
        c = QColor.fromRgb(pixel)
        return c.hslSaturation() > 90 and abs(c.hslHue() - hue) <= 3

    return sum(1 for y in range(0, image.height(), step) for x in range(0, image.width(), step)
               if same_hue(image.pixel(x, y)))


def test_screenshot_of_the_window(tmp_path, synthetic_file):
    out = tmp_path / "window.png"
    proc = run_app("replay", str(synthetic_file), "--screenshot", str(out), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1400, 900)
    colours = {image.pixel(x, y) for y in range(0, 900, 7) for x in range(0, 1400, 7)}
    assert len(colours) > 20  # not blank
    assert hue_count(image, PRECISION_COLORS["fp32"]) > 300  # the FP32 bars, in shades
    assert hue_count(image, PRECISION_COLORS["fp16"]) > 300  # the FP16 (wmma) bar


def test_screenshot_of_a_named_view(tmp_path, synthetic_file):
    out = tmp_path / "bars.png"
    proc = run_app("replay", str(synthetic_file), "--screenshot", str(out), "--view", "bars",
                   tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert 0 < image.width() < 1400 and image.height() > 100
    # the wmma bar (FP16, 300 TFLOPS) is the tallest: orange (a shade of the FP16 hue)
    # spans most of the height
    hue = QColor(PRECISION_COLORS["fp16"]).hslHue()

    def orange(x: int, y: int) -> bool:
        c = QColor(image.pixel(x, y))
        return abs(c.hslHue() - hue) <= 2 and c.hslSaturation() > 150

    rows = [y for y in range(image.height())
            if any(orange(x, y) for x in range(0, image.width(), 2))]
    assert rows and (rows[-1] - rows[0]) > image.height() * 0.5


def test_unknown_view_and_bad_file_exit_with_a_reason(tmp_path, synthetic_file):
    proc = run_app("replay", str(synthetic_file), "--screenshot", str(tmp_path / "x.png"),
                   "--view", "nope", tmp_path=tmp_path)
    assert proc.returncode == 2 and "no view called 'nope'" in proc.stderr
    assert "bars" in proc.stderr
    missing = tmp_path / "missing.jsonl"
    proc = run_app("replay", str(missing), "--screenshot", str(tmp_path / "y.png"),
                   tmp_path=tmp_path)
    assert proc.returncode == 2 and "cannot open" in proc.stderr


def test_no_gpu_start_says_why_and_still_draws(tmp_path):
    out = tmp_path / "start.png"
    proc = run_app("--screenshot", str(out), tmp_path=tmp_path)  # GEMMSCOPE_NO_GPU=1 (conftest)
    assert proc.returncode == 0, proc.stderr
    assert QImage(str(out)).width() == 1400
    status = proc.stdout.splitlines()[-1]
    assert status.startswith("status: replay — ")
    assert "GEMMSCOPE_NO_GPU" in status  # the reason is shown


def test_screenshot_of_the_telemetry_view(tmp_path, synthetic_file):
    """The telemetry tab drawn and the app closed cleanly (exit 0: no crash at teardown)."""
    from gemmscope.app.plots.telemetry_strips import REASON_COLORS

    out = tmp_path / "telemetry.png"
    proc = run_app("replay", str(synthetic_file), "--screenshot", str(out), "--view",
                   "telemetry", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert image.width() > 400 and image.height() > 400
    # the SwPowerCap bars of the reason strip, and the throttled runs' orange bands
    # (#ff7f0e at alpha 0x55 over white)
    assert colour_count(image, REASON_COLORS["SwPowerCap"], step=1) > 100
    assert colour_count(image, "#ffd4af", step=1) > 1000


def colour_rows(image: QImage, colour: QColor, rows: range) -> int:
    want = colour.rgb()
    return sum(1 for y in rows for x in range(0, image.width(), 2) if image.pixel(x, y) == want)


@pytest.mark.parametrize("view", ["tiling", "banks", "swizzle", "coalescing"])
def test_screenshot_of_each_animated_view(tmp_path, view):
    """`gemmscope --view NAME --level ID --screenshot FILE` on the bundled recording (no
    GPU here): the view's own picture, drawn whole (animations off), then a clean exit."""
    from gemmscope.app.theme import ANIMATION

    out = tmp_path / f"{view}.png"
    proc = run_app("--view", view, "--level", "register_2d", "--screenshot", str(out),
                   tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert 400 < image.width() < 1400 and 300 < image.height() < 900  # the view, not the window
    # the canvas's background covers a sixteenth of the picture at least (every 2nd pixel)
    assert colour_count(image, ANIMATION.background) > image.width() * image.height() / 16 / 4
    if view == "tiling":  # the selected block of C
        assert colour_count(image, ANIMATION.c_block) > 200
    elif view == "banks":
        # register_2d's first instruction (a 32-bit store, one wavefront): each lane's word
        # in its bank, drawn at full colour above the lane row, as bright as the lane row
        lane = ANIMATION.lane(5)
        top = colour_rows(image, lane, range(0, image.height() // 2))
        bottom = colour_rows(image, lane, range(image.height() // 2, image.height()))
        assert bottom > 50 and top > 0.8 * bottom
    elif view == "swizzle":  # every bank has its colour in the before/after grids
        for bank in (0, 7, 31):
            assert colour_count(image, ANIMATION.bank(bank).name()) > 50
    else:  # coalescing: below the lane headers (top sixth), the lane's sector cell in
        # full colour (dimmed while a step animates)
        rows = range(int(image.height() * 0.22), image.height())
        assert colour_rows(image, ANIMATION.lane(5), rows) > 50


def test_screenshot_of_an_unknown_level_says_which_exist(tmp_path):
    proc = run_app("--view", "banks", "--level", "nope", "--screenshot",
                   str(tmp_path / "x.png"), tmp_path=tmp_path)
    assert proc.returncode == 2 and "no level called 'nope'" in proc.stderr
    assert "register_2d" in proc.stderr

"""The app's icon: an SVG in gemmscope.resources (so the wheel and the bundle carry it),
set as the window icon, with the desktop id Wayland matches the .desktop entry by."""

from __future__ import annotations

from PySide6.QtGui import QColor, QIcon

from gemmscope.app.core.desktop_entry import APP_ID, icon_path


def test_the_window_icon_is_the_packaged_svg(qapp, tmp_path, synthetic_file):
    from gemmscope.app.gui_main import main as gui_main

    assert icon_path().is_file() and icon_path().parent.name == "resources"
    rc = gui_main(["replay", str(synthetic_file), "--screenshot", str(tmp_path / "w.png"),
                   "--settings", str(tmp_path / "p.ini")])
    assert rc == 0
    assert qapp.desktopFileName() == APP_ID
    image = qapp.windowIcon().pixmap(128, 128).toImage()
    assert not image.isNull()
    # the lit output tile (green) and the lit row of A (the FP32 blue) are drawn
    colours = {image.pixelColor(x, y).name() for y in range(0, 128, 2) for x in range(0, 128, 2)}
    assert QColor("#5fd38d").name() in colours and QColor("#1f77b4").name() in colours
    assert not QIcon(str(icon_path())).isNull()

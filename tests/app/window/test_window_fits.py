"""The window fits the screens a talk meets: every tab at 1280x720 and 1920x1080, in normal
and presentation mode, with the bundled recording replayed to the end, has no widget that
sticks out of the window or its parent and no text cut without a tooltip
(tests/support/layout_check.py says what counts); switching tabs never resizes the window; F11
twice gives the window back its geometry; a screenshot is exactly the size asked for."""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import pytest
from layout_check import contrast, layout_problems, low_contrast
from PySide6.QtCore import QByteArray
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from gemmscope.app.views.registry import VIEWS
from gemmscope.app.window.main_window import bundled_session

SIZES = ((1280, 720), (1366, 768), (1920, 1080))
LEVELS = ("register_2d", "fp8_block_scaled")  # a SIMT level; a warp-specialized one
MIN_SIZE = (1024, 640)


@pytest.fixture(scope="module")
def recording():
    path = bundled_session()
    if path is None:
        pytest.skip("the bundled recording is not in this build")
    return path


def shown_at(qtbot, make_window, recording, size, presentation=False, level=None):
    window = make_window()
    assert window.open_recording(recording)
    window.set_animated(False)
    window.play_instant()
    if presentation:
        window.set_presentation(True, full_screen=False)
    if level is not None:
        assert window.select_level(level)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.resize(*size)  # again: what does not fit hid once shown
    return window


def settle(window, shown_only: bool = False) -> None:
    """Events handled and the views brought up to date (``shown_only``: the view on
    screen alone, where the others are not looked at)."""
    for _ in range(3):
        QApplication.processEvents()
    if shown_only:
        window.flush_shown()
    else:
        window.flush_views()
    QApplication.processEvents()


def problems_in_every_tab(window, size) -> list[str]:
    found = []
    for spec in VIEWS:
        window.named_widget(spec.name)
        settle(window)
        if window.size().toTuple() != size:
            found.append(f"{spec.name}: the window is {window.size().toTuple()}, not {size}")
        found += [f"{spec.name}: {p}" for p in layout_problems(window)]
    return found


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("level", LEVELS)
def test_every_tab_fits_in_normal_mode(qtbot, make_window, recording, size, level):
    window = shown_at(qtbot, make_window, recording, size, level=level)
    assert problems_in_every_tab(window, size) == []


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("level", LEVELS)
def test_every_tab_fits_in_presentation_mode(qtbot, make_window, recording, size, level):
    window = shown_at(qtbot, make_window, recording, size, presentation=True, level=level)
    assert problems_in_every_tab(window, size) == []


def test_presentation_mode_has_no_dark_on_dark_text(qtbot, make_window, recording):
    from gemmscope.app.theme import ANIMATION, PRESENTATION

    window = shown_at(qtbot, make_window, recording, (1280, 720), presentation=True)
    found = []
    for spec in VIEWS:
        window.named_widget(spec.name)
        settle(window)
        found += [f"{spec.name}: {p}" for p in low_contrast(window)]
    assert found == []
    assert window.palette().color(window.backgroundRole()).name() == PRESENTATION.background
    # the animations' own colours: text, asides and verdicts on their background
    for name in ("text", "muted_text", "ok", "conflict"):
        assert contrast(ANIMATION.color(name), ANIMATION.color("background")) >= 4.5, name


def test_the_window_can_be_as_small_as_a_small_laptop(qtbot, make_window, recording):
    window = shown_at(qtbot, make_window, recording, MIN_SIZE)
    for spec in VIEWS:
        window.named_widget(spec.name)
        settle(window)
        hint = window.minimumSizeHint()
        assert hint.width() <= MIN_SIZE[0] and hint.height() <= MIN_SIZE[1], spec.name
        assert window.size().toTuple() == MIN_SIZE, spec.name


@pytest.mark.parametrize("presentation", [False, True], ids=["normal", "presentation"])
def test_switching_tabs_never_changes_the_window_size(qtbot, make_window, recording,
                                                      presentation):
    window = shown_at(qtbot, make_window, recording, (1280, 720), presentation)
    sizes = set()
    for spec in [*VIEWS, *reversed(VIEWS)]:
        window.named_widget(spec.name)
        settle(window)
        sizes.add(window.size().toTuple())
    assert sizes == {(1280, 720)}


def test_leaving_presentation_mode_restores_the_geometry(qtbot, make_window, recording):
    window = shown_at(qtbot, make_window, recording, (1100, 700))
    window.move(40, 30)
    settle(window)
    before = window.geometry()
    ladder_width = window.ladder_dock.width()
    window.named_widget("banks")
    window.toggle_presentation()  # F11
    settle(window)
    assert window.isFullScreen() and not window.run_dock.isVisible()
    window.toggle_presentation()
    settle(window)
    assert not window.isFullScreen()
    assert window.geometry() == before
    assert window.run_dock.isVisible() and window.ladder_dock.width() == ladder_width


@pytest.mark.parametrize("full_screen", [False, True], ids=["windowed", "full_screen"])
def test_on_stage_and_back_twice_keeps_every_panels_width_and_cuts_none(
        qtbot, make_window, recording, full_screen):
    """The second time off stage the side panels came back ~100 px narrower and the Tune
    panel's content was cut at its right edge: a tab not shown (the Timeline) kept the
    minimum width its layout had in the stage's type when the panels were restored."""
    window = shown_at(qtbot, make_window, recording, (1280, 720))
    window.kernel_docks.tune("fp8_deep")
    settle(window, shown_only=True)
    docks = [window.ladder_dock, window.run_dock, window.kernel_docks.docks["fp8_deep"]]
    widths = [d.width() for d in docks]
    for _ in range(2):
        window.set_presentation(True, full_screen=full_screen)
        settle(window, shown_only=True)
        window.set_presentation(False)
        settle(window, shown_only=True)
        assert [d.width() for d in docks] == widths
        assert layout_problems(window) == []


def run_screenshot(tmp_path, *args: str, env: dict[str, str] | None = None):
    out = tmp_path / "shot.png"
    proc = subprocess.run(
        [sys.executable, "-m", "gemmscope.app.main", "--screenshot", str(out),
         "--settings", str(tmp_path / "prefs.ini"), *args],
        capture_output=True, text=True, timeout=90,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen", **(env or {})))
    assert proc.returncode == 0, proc.stderr
    return QImage(str(out)), proc


@pytest.mark.parametrize("args", [("--size", "1280x720", "--tab", "banks"),
                                  ("--size", "1366x768", "--presentation", "--tab", "tiling")],
                         ids=["normal", "presentation"])
def test_a_screenshot_is_the_size_asked_for(tmp_path, recording, args):
    image, proc = run_screenshot(tmp_path, *args)
    w, h = (int(v) for v in args[1].split("x"))
    assert (image.width(), image.height()) == (w, h)
    assert "cannot be made that small" not in proc.stderr


def test_a_hidpi_screenshot_has_every_pixel(tmp_path, recording):
    """At a device pixel ratio of 2 the picture is drawn at 2x, not scaled up: a 3840x2160
    PNG of a 1920x1080 window, whose 2x2 pixel blocks differ inside along text and lines
    (a 1x picture scaled up repeats each pixel in its block)."""
    image, _ = run_screenshot(tmp_path, "--size", "3840x2160", "--tab", "charts",
                              env={"QT_SCALE_FACTOR": "2"})
    assert (image.width(), image.height()) == (3840, 2160)
    detailed = 0
    for y in range(0, image.height() - 1, 6):
        for x in range(0, image.width() - 1, 6):
            block = {image.pixel(x, y), image.pixel(x + 1, y), image.pixel(x, y + 1),
                     image.pixel(x + 1, y + 1)}
            detailed += len(block) > 1
    assert detailed > 500


def test_a_bad_size_is_refused_with_the_form_to_use(tmp_path, recording):
    proc = subprocess.run(
        [sys.executable, "-m", "gemmscope.app.main", "--screenshot", str(tmp_path / "x.png"),
         "--size", "big", "--settings", str(tmp_path / "prefs.ini")],
        capture_output=True, text=True, timeout=90,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    assert proc.returncode == 2 and "WIDTHxHEIGHT" in proc.stderr


def test_closing_a_window_on_stage_gives_the_application_its_font_back(qtbot, make_window,
                                                                        recording):
    before = QApplication.font().pointSizeF()
    window = shown_at(qtbot, make_window, recording, (1280, 720), True)
    assert QApplication.font().pointSizeF() > before  # large type on stage
    window.close()
    assert QApplication.font().pointSizeF() == before


# ------------------------------------------------------------------ the screen it opens on
def test_fit_window_keeps_a_saved_rectangle_only_where_it_fits():
    from gemmscope.app.core.screen_fit import FRAME, Rect, fit_window, room_for_client

    laptop = Rect(0, 0, 1280, 720)
    room = room_for_client(laptop)
    first = fit_window(None, laptop)  # the first start: the default, cut to the screen
    assert room.contains(first) and first.width <= 1400 and first.height <= 900
    assert (first.width, first.height) == (room.width, room.height)
    big = Rect(1920, 0, 2560, 1440)
    assert fit_window(None, big) == Rect(1920 + FRAME[0] + (room_for_client(big).width
                                         - 1400) // 2, FRAME[1] + (room_for_client(big).height
                                         - 900) // 2, 1400, 900)
    kept = Rect(100, 80, 1000, 600)
    assert fit_window(kept, laptop) == kept  # it fits: where it was, as it was
    assert fit_window(Rect(0, 0, 1400, 900), laptop) == first  # too large: not remembered
    moved = fit_window(Rect(3000, 2000, 800, 500), laptop)  # its screen was unplugged
    assert (moved.width, moved.height) == (800, 500) and room.contains(moved)


def test_the_window_opens_inside_the_screen_and_forgets_a_size_that_does_not_fit(
        qtbot, tmp_path):
    """On the offscreen platform's 800x800 screen: the first window fits it; a window
    remembered at 1400x900 (from a larger screen) opens fitted, not off the screen."""
    from gemmscope.app.core.screen_fit import room_for_client
    from gemmscope.app.window.main_window import MainWindow
    from gemmscope.app.window.preferences import open_settings
    from gemmscope.app.window.screens import as_rect

    room = room_for_client(as_rect(QApplication.primaryScreen().availableGeometry()))
    ini = str(tmp_path / "prefs.ini")
    window = MainWindow(open_settings(ini))
    qtbot.addWidget(window)
    assert room.contains(as_rect(window.geometry()))
    window.resize(1400, 900)  # as on a desktop, then closed: its geometry is remembered
    window.close()
    again = MainWindow(open_settings(ini))
    qtbot.addWidget(again)
    assert room.contains(as_rect(again.geometry()))
    assert again.width() < 1400
    assert not any("geometry" in note for note in again.prefs.notes), again.prefs.notes


# QWidget.saveGeometry() of a 1400x900 window at (100, 60) on a 1920x1080 X screen (Qt
# 6.11, under Xvfb and openbox): the bytes a desk's monitor leaves in the preferences
DESK_GEOMETRY = ("AdnQywADAAAAAABkAAAAPAAABd0AAAPYAAAAZQAAAFAAAAXcAAAD0wAAAAAAAAAAB4AAAABl"
                 "AAAAUAAABdwAAAPT")


def _window_with_saved_geometry(qtbot, tmp_path, geometry: str):
    """A window started from preferences whose window/geometry is ``geometry`` (base64),
    and whether it lies inside the screen's room for a window."""
    from gemmscope.app.core.screen_fit import room_for_client
    from gemmscope.app.window.main_window import MainWindow
    from gemmscope.app.window.preferences import open_settings
    from gemmscope.app.window.screens import as_rect

    ini = tmp_path / "prefs.ini"
    ini.write_text(f"[window]\ngeometry={geometry}\n")
    window = MainWindow(open_settings(str(ini)))
    qtbot.addWidget(window)
    room = room_for_client(as_rect(QApplication.primaryScreen().availableGeometry()))
    return window, room.contains(as_rect(window.geometry()))


def test_a_layout_saved_on_a_larger_screen_opens_fitted_and_is_not_called_damaged(
        qtbot, tmp_path):
    """Qt refuses a saved geometry that does not fit the screen the window starts on (the
    offscreen platform's 800x800 here, a 1280x720 projector on stage): the window opens
    at the default size cut to the screen, and no note calls the preferences damaged."""
    window, inside = _window_with_saved_geometry(qtbot, tmp_path, DESK_GEOMETRY)
    assert inside
    assert not window.restoreGeometry(QByteArray(base64.b64decode(DESK_GEOMETRY)))
    assert not any("geometry" in note for note in window.prefs.notes), window.prefs.notes


def test_bytes_that_are_no_saved_geometry_are_said_and_the_default_used(qtbot, tmp_path):
    from gemmscope.app.window.screens import is_saved_geometry

    for blob in (b"\x00" * 66, b"\x01\xd9\xd0\xcb\x00\x09" + b"\x00" * 60, b"short"):
        assert not is_saved_geometry(blob)
        window, inside = _window_with_saved_geometry(qtbot, tmp_path,
                                                     base64.b64encode(blob).decode())
        assert inside
        assert any("window/geometry is not a window's geometry" in note
                   for note in window.prefs.notes), window.prefs.notes
    assert is_saved_geometry(bytes(window.saveGeometry().data()))


def test_a_talk_opens_full_screen_on_the_screen_it_starts_on(qtbot, make_window):
    from gemmscope.app.window.screens import full_screen_on_start_screen, start_screen

    window = make_window()
    full_screen_on_start_screen(window)
    qtbot.waitUntil(window.isFullScreen)
    assert window.screen() is start_screen()
    # (before full screen, and after it: the window fits that screen)
    assert start_screen().geometry().contains(window.normalGeometry())


def _styles(window) -> dict[str, object]:
    """Per tab: the size of every text shown, the width of every plotted line and the
    picture; and the panels' sizes."""
    import numpy as np
    import pyqtgraph as pg
    from layout_check import text_sizes

    out: dict[str, object] = {"docks": [(d.objectName(), d.isVisible(), d.width())
                                        for d in (window.ladder_dock, window.run_dock)]}
    for spec in VIEWS:
        view = window.named_widget(spec.name)
        settle(window)
        pens = sorted(round(item.opts["pen"].widthF(), 2) if hasattr(item.opts.get("pen"),
                                                                     "widthF") else 0
                      for plot in view.findChildren(pg.PlotWidget)
                      for item in plot.getPlotItem().items if isinstance(item, pg.PlotDataItem))
        image = window.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
        px = np.frombuffer(bytes(image.constBits()), np.uint32).reshape(image.height(), -1)
        out[spec.name] = (sorted(text_sizes(window)), pens, px.copy())
    return out


def test_leaving_presentation_mode_restores_every_style(qtbot, make_window, recording):
    """Every tab, F11 on, every tab seen on stage, F11 off: each text the size it was,
    each line as wide (3 px lines stayed), the panels and splits as wide, the picture the
    same but for a few labels a pixel off and a scroll bar (at most 3% of its pixels)."""
    import numpy as np

    window = shown_at(qtbot, make_window, recording, (1280, 720))
    before = _styles(window)
    window.set_presentation(True, full_screen=False)
    settle(window)
    for spec in VIEWS:
        window.named_widget(spec.name)
        settle(window)
    window.set_presentation(False)
    window.resize(1280, 720)
    settle(window)
    after = _styles(window)
    assert after["docks"] == before["docks"]
    for spec in VIEWS:
        texts, pens, picture = before[spec.name]
        texts_after, pens_after, picture_after = after[spec.name]
        assert texts_after == texts, spec.name
        assert pens_after == pens, spec.name
        assert picture_after.shape == picture.shape
        assert float(np.mean(picture_after != picture)) < 0.03, spec.name


@pytest.mark.parametrize("dock_px", [120, 260, 440, 700])
def test_the_ladder_shows_what_fits_whole_and_never_cuts_a_number(qtbot, make_window,
                                                                   recording, dock_px):
    """The ladder's columns fit its dock (none cut by the edge: "296." for 296.3), the
    most wanted first: level and TFLOPS, then % of cuBLAS and verified as it widens."""
    from layout_check import _cut_cells
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtGui import QHelpEvent

    from gemmscope.app.widgets.ladder_panel import COLUMNS, PRIORITY
    from gemmscope.kernels.results.rows import Column

    window = shown_at(qtbot, make_window, recording, (1920, 1080))
    window.resizeDocks([window.ladder_dock], [dock_px], Qt.Orientation.Horizontal)
    table = window.ladder.table
    if dock_px == 120:  # narrower than the panel's controls let the dock be
        table.setMaximumWidth(100)
    settle(window)
    shown = [c for i, c in enumerate(COLUMNS) if not table.isColumnHidden(i)]
    assert _cut_cells(table) == []
    assert sum(table.columnWidth(COLUMNS.index(c)) for c in shown) <= \
        table.viewport().width() + 1
    assert shown[0] == Column.LEVEL
    fitted = window.ladder.fitted  # (the baseline's column: only beside one)
    assert fitted.priority == [COLUMNS.index(c) for c in PRIORITY]  # no baseline open
    priority = [COLUMNS[i] for i in fitted.priority
                if fitted.allowed is None or i in fitted.allowed]
    wanted = [c for c in priority if c in shown]
    assert wanted == priority[:len(wanted)]  # the most wanted first
    if dock_px >= 440:
        assert {Column.TFLOPS, Column.PCT_OF_REFERENCE, Column.VERIFIED} <= set(shown)
    column = COLUMNS.index(Column.LEVEL)
    assert (window.ladder.fitted.width_of(column) > table.columnWidth(column)) == \
        (dock_px == 120)
    if dock_px == 120:
        # the level alone, cut with "…": the whole name in its tooltip
        row = max(range(table.rowCount()), key=lambda r: len(table.item(r, column).text()))
        table.scrollToItem(table.item(row, column))
        rect = table.visualRect(table.model().index(row, column))
        event = QHelpEvent(QEvent.Type.ToolTip, rect.center(),
                           table.viewport().mapToGlobal(rect.center()))
        assert window.ladder.fitted.eventFilter(table.viewport(), event)


def test_on_stage_the_pictures_cut_no_label_at_any_level(qtbot, make_window, recording):
    """Tiling, banks, swizzle and coalescing at 1280x720 in presentation mode, every level
    of the recording: no painted label cut (a stage's label too long for its box
    shortens, an aside with no room is left out: the picture says it elsewhere)."""
    window = shown_at(qtbot, make_window, recording, (1280, 720), presentation=True)
    found = []
    for name in ("tiling", "banks", "swizzle", "coalescing"):
        window.named_widget(name)
        settle(window)
        canvas = window.views[name].canvas
        for level in window.level_ids():
            window.select_level(level)
            settle(window, shown_only=True)
            canvas.repaint()
            found += [f"{name} {level}: {text!r}" for text in canvas.cut_texts]
    assert found == []

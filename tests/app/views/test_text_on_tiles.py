"""Text painted on a coloured fill (the tiling picture's "#0"-"#15" block labels, stage
labels, warpgroup boxes; the lanes of the banks and coalescing views) keeps WCAG's 4.5:1
on that fill: the colour is chosen by the fill's luminance. The rule is checked on the
theme's helper over every fill the pictures use, and on pixels read back from the
pictures (the labels were grey on the selected block's green, about 1.2:1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage

from gemmscope.app.theme import (
    ANIMATION,
    PRESENTATION,
    TEXT_CONTRAST,
    contrast_ratio,
    readable_on,
)
from gemmscope.app.views.banks import BanksView
from gemmscope.app.views.coalescing import CoalescingView
from gemmscope.app.views.tiling import TilingView

FILL_NAMES = ("c_block", "c_done", "panel", "sm_tile", "stage_empty", "stage_filling",
              "stage_ready", "stage_consuming", "producer", "consumer_0", "consumer_1",
              "conflict", "unused", "a_operand", "b_operand", "warp", "thread")


@given(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255),
       st.sampled_from(["#9aa0aa", "#e6e6e6", "#000000", "#ffffff"]))
def test_the_chosen_text_colour_keeps_the_ratio_on_any_fill(r, g, b, preferred):
    fill = QColor(r, g, b)
    text = readable_on(fill, QColor(preferred))
    assert contrast_ratio(text, fill) >= TEXT_CONTRAST
    if contrast_ratio(QColor(preferred), fill) >= TEXT_CONTRAST:
        assert text == QColor(preferred)  # the theme's colour wherever it reads


def test_a_translucent_fill_is_judged_as_it_shows_over_its_backdrop():
    fill = QColor(ANIMATION.lane(3))
    fill.setAlpha(70)
    backdrop = ANIMATION.color("background")
    text = readable_on(fill, QColor("black"), backdrop)
    assert text == QColor("white")  # black on a dim lane over near-black would not read


@pytest.mark.parametrize("name", FILL_NAMES)
def test_every_fill_of_the_pictures_gets_readable_text(name):
    fill = ANIMATION.color(name)
    for preferred in ("text", "muted_text"):
        assert contrast_ratio(readable_on(fill, ANIMATION.color(preferred)), fill) >= \
            TEXT_CONTRAST


def best_contrast(image: QImage, rect: QRectF, fill: QColor) -> float:
    """The strongest contrast to ``fill`` among the pixels of ``rect`` (a text's core
    pixels are its pen's colour; the rest is the fill or the text's soft edge)."""
    r = rect.toRect()
    return max(contrast_ratio(image.pixelColor(x, y), fill)
               for x in range(max(r.left(), 0), min(r.right(), image.width() - 1))
               for y in range(max(r.top(), 0), min(r.bottom(), image.height() - 1)))


def shown(qtbot, view, size=(1200, 800), stage=False):
    qtbot.addWidget(view)
    view.set_animated(False)
    if stage:
        view.apply_theme(PRESENTATION)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return view


@pytest.mark.parametrize("stage", [False, True], ids=["normal", "stage"])
def test_block_labels_read_on_the_selected_block_and_the_others(qtbot, stage):
    view = shown(qtbot, TilingView("register_2d"), stage=stage)
    c = view.canvas
    image = c.grab().toImage()
    for r, col in ((0, 0), (1, 2)):  # the selected block (green) and another (dark)
        rect = c.c_block_rect(r, col)
        fill = image.pixelColor(int(rect.right()) - 3, int(rect.bottom()) - 3)
        label = QRectF(rect.left() + 4, rect.top() + 2, rect.width() - 8, c.line_px())
        assert best_contrast(image, label, fill) >= TEXT_CONTRAST, (r, col, fill.name())


def test_warpgroup_boxes_read(qtbot):
    view = shown(qtbot, TilingView("wgmma_tma"), size=(1600, 1000))
    scene = view.canvas.scene
    image = view.canvas.grab().toImage()
    for rect, fill in ((scene.producer_rect(), ANIMATION.color("producer")),
                       *((scene.consumer_rect(i), ANIMATION.consumer(i)) for i in (0, 1))):
        assert best_contrast(image, rect.adjusted(4, 4, -4, -4), fill) >= TEXT_CONTRAST


@pytest.mark.parametrize("make", [BanksView, CoalescingView], ids=["banks", "coalescing"])
def test_lane_numbers_read_on_every_lanes_colour(qtbot, make):
    view = shown(qtbot, make("smem_tiled"))
    c = view.canvas
    image = c.grab().toImage()
    worst = []
    for lane in range(32):
        rect = c.lane_rect(lane)
        fill = image.pixelColor(int(rect.left()) + 1, int(rect.top()) + 1)
        if fill.name() == ANIMATION.lane(lane).name():  # an active lane in its colour
            worst.append((best_contrast(image, rect.adjusted(1, 1, -1, -1), fill), lane))
    assert worst and min(worst)[0] >= TEXT_CONTRAST, min(worst)

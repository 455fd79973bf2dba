"""A check box shows that it is one in every theme: its box is drawn unchecked too (on
stage the sheet's black background drew the unchecked box black on black: no box at all),
on stage in a colour a viewer tells from the background from the back of a room (WCAG's
3:1 for a control's outline; the normal theme keeps the platform style's own box, white in
a grey frame), and a checked box looks different from an unchecked one. Pixels read back
from the widget."""

from __future__ import annotations

import pytest
from layout_check import contrast
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QCheckBox, QStyle, QStyleOptionButton, QVBoxLayout, QWidget

from gemmscope.app.theme import NORMAL, PRESENTATION

LEAST_OUTLINE_CONTRAST = {"presentation": 3.0, "normal": 1.5}


def indicator_pixels(qtbot, theme, checked: bool) -> tuple[list[QColor], QColor]:
    """The colours inside a check box's indicator, and the colour around it."""
    host = QWidget()
    qtbot.addWidget(host)
    host.setStyleSheet(theme.stylesheet())
    box = QCheckBox("log TFLOPS axis")
    box.setChecked(checked)
    QVBoxLayout(host).addWidget(box)
    host.show()
    qtbot.waitExposed(host)
    opt = QStyleOptionButton()
    box.initStyleOption(opt)
    rect = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, opt, box)
    assert rect.width() >= 8 and rect.height() >= 8
    image: QImage = box.grab().toImage()
    inside = [image.pixelColor(x, y) for x in range(rect.left(), rect.right() + 1)
              for y in range(rect.top(), rect.bottom() + 1)]
    around = image.pixelColor(rect.right() + 2, box.height() - 1)
    return inside, around


@pytest.mark.parametrize("theme", [NORMAL, PRESENTATION], ids=lambda t: t.name)
def test_an_unchecked_box_is_drawn_in_a_colour_that_stands_out(qtbot, theme):
    least = LEAST_OUTLINE_CONTRAST[theme.name]
    inside, around = indicator_pixels(qtbot, theme, checked=False)
    best = max(contrast(c, around) for c in inside)
    assert best >= least, (theme.name, best)
    # (an outline, not a filled square: most of it is not the frame's colour)
    assert sum(contrast(c, around) >= least for c in inside) < 0.6 * len(inside)


@pytest.mark.parametrize("theme", [NORMAL, PRESENTATION], ids=lambda t: t.name)
def test_a_checked_box_looks_different_from_an_unchecked_one(qtbot, theme):
    off, around = indicator_pixels(qtbot, theme, checked=False)
    on, _ = indicator_pixels(qtbot, theme, checked=True)
    least = LEAST_OUTLINE_CONTRAST[theme.name]
    marked = sum(contrast(c, around) >= least for c in on)
    outline = sum(contrast(c, around) >= least for c in off)
    assert marked >= outline + 10, (theme.name, marked, outline)

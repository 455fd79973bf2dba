"""ElidedLabel: one line of plain text, whole where its size hint is given, cut with "…"
and a tooltip where not, and cut again for a new type."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from gemmscope.app.widgets.fitting import ElidedLabel

TEXTS = ["SASS of the main loop:", "per line:", "36148 NVML samples; clocks held back",
         "warp-stall samples: 12,747 in the kernel"]


@pytest.mark.parametrize("pt", [9.0, 10.5, 13.5, 14.0, 20.0])
def test_a_label_at_its_size_hint_shows_its_whole_text(qtbot, pt):
    """Given the width it asks for, the text is whole (a label given exactly its rounded
    advance was cut: the ellipsis is measured in fractions of a pixel)."""
    for text in TEXTS:
        label = ElidedLabel(text)
        qtbot.addWidget(label)
        font = label.font()
        font.setPointSizeF(pt)
        label.setFont(font)
        label.resize(label.sizeHint())
        label.show()
        assert QLabel.text(label) == text and label.toolTip() == ""


def test_a_new_type_cuts_the_text_again(qtbot):
    label = ElidedLabel(TEXTS[0])
    qtbot.addWidget(label)
    font = label.font()
    font.setPointSizeF(20.0)
    label.setFont(font)
    label.show()
    label.resize(label.sizeHint().width() // 2, label.sizeHint().height())
    assert QLabel.text(label).endswith("…") and label.toolTip()
    font.setPointSizeF(7.0)  # the same width, smaller type: whole again
    label.setFont(font)
    assert QLabel.text(label) == TEXTS[0] and label.toolTip() == ""

"""A panel in ``fitting.scrolling``: its content takes the panel's width where it fits, and
where a person narrows the panel below the content's least width a scroll bar reaches the
rest instead of the right edge cutting it."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QHBoxLayout, QPushButton, QWidget

from gemmscope.app.widgets.fitting import scrolling


def _content() -> QWidget:
    box = QWidget()
    row = QHBoxLayout(box)
    for text in ("Run variant", "Sweep", "Plain run's form"):
        row.addWidget(QPushButton(text))
    return box


def test_content_takes_the_panels_width_where_it_fits(qtbot):
    content = _content()
    area = scrolling(content)
    qtbot.addWidget(area)
    area.resize(content.minimumSizeHint().width() + 200, 200)
    area.show()
    QApplication.processEvents()
    assert content.width() == area.viewport().width()
    assert not area.horizontalScrollBar().isVisible()


def test_a_panel_narrower_than_its_content_scrolls_to_the_rest(qtbot):
    content = _content()
    area = scrolling(content)
    qtbot.addWidget(area)
    area.resize(content.minimumSizeHint().width() // 2, 200)
    area.show()
    QApplication.processEvents()
    assert content.width() >= content.minimumSizeHint().width() > area.viewport().width()
    bar = area.horizontalScrollBar()
    assert bar.isVisible()
    assert bar.maximum() == content.width() - area.viewport().width()

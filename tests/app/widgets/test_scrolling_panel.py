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


def _shown(qtbot, narrow: bool):
    """The content in a panel half its least width (``narrow``), or 200 px wider."""
    content = _content()
    area = scrolling(content)
    qtbot.addWidget(area)
    least = content.minimumSizeHint().width()
    area.resize(least // 2 if narrow else least + 200, 200)
    area.show()
    QApplication.processEvents()
    return area, content


def test_content_takes_the_panels_width_where_it_fits(qtbot):
    area, content = _shown(qtbot, narrow=False)
    assert content.width() == area.viewport().width()
    assert not area.horizontalScrollBar().isVisible()


def test_a_panel_narrower_than_its_content_scrolls_to_the_rest(qtbot):
    area, content = _shown(qtbot, narrow=True)
    assert content.width() >= content.minimumSizeHint().width() > area.viewport().width()
    bar = area.horizontalScrollBar()
    assert bar.isVisible()
    assert bar.maximum() == content.width() - area.viewport().width()


def test_a_panel_whose_content_fits_asks_no_room_for_a_scroll_bar(qtbot):
    """Its least size is that of a scroll area with the bar off: a bar that may show adds
    its height to the least height (QAbstractScrollArea.minimumSizeHint), which the
    panels beside it would give up."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QScrollArea

    area, _content_shown = _shown(qtbot, narrow=False)
    plain = QScrollArea()
    qtbot.addWidget(plain)
    plain.setWidgetResizable(True)
    plain.setFrameShape(area.frameShape())
    plain.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    plain.setWidget(_content())
    assert area.minimumSizeHint() == plain.minimumSizeHint()


def test_a_panel_widened_again_drops_its_scroll_bar(qtbot):
    area, content = _shown(qtbot, narrow=True)
    assert area.horizontalScrollBar().isVisible()
    area.resize(content.minimumSizeHint().width() + 200, 200)
    QApplication.processEvents()
    assert not area.horizontalScrollBar().isVisible()
    assert content.width() == area.viewport().width()

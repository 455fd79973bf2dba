"""Text from outside is shown as text in the window: a recording whose every text carries
markup (tests/support/hostile_text.py) is opened, every tab shown, a level selected; then every
label, tooltip, table item, tab tip and pyqtgraph text item (legends, titles, axis
labels) is read back the way Qt renders it, and wherever the poisoned word appears, the
markup around it must appear too, literally: Qt never interpreted it."""

from __future__ import annotations

import hostile_text
import pyqtgraph as pg
import pytest
import synthetic_session
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QAbstractButton, QGraphicsTextItem, QLabel, QTableWidget, QWidget

MARKUP, WORD = hostile_text.MARKUP, hostile_text.WORD


def rendered(text: str, rich: bool) -> str:
    """What a reader sees of ``text`` shown as rich text (or as plain)."""
    if not rich:
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def auto_rich(text: str) -> bool:
    return bool(Qt.mightBeRichText(text))


def leaks(window) -> list[str]:
    """Each place in the window where the poisoned word is seen without its markup."""
    found = leaks_in(window)
    tabs = window.tabs
    for i in range(tabs.count()):
        tip = tabs.tabToolTip(i)
        if WORD in rendered(tip, auto_rich(tip)) and MARKUP not in rendered(tip, auto_rich(tip)):
            found.append(f"tab {i} tooltip: {tip[:120]!r}")
    return found


def leaks_in(top: QWidget) -> list[str]:
    """Each place in ``top`` and its children where the word is seen without its markup."""
    found: list[str] = []

    def check(where: str, seen: str) -> None:
        if WORD in seen and MARKUP not in seen:
            found.append(f"{where}: {seen[:120]!r}")

    for w in [top, *top.findChildren(QWidget)]:
        name = f"{type(w).__name__}({w.objectName()})"
        if w.toolTip():
            check(f"{name} tooltip", rendered(w.toolTip(), auto_rich(w.toolTip())))
        if isinstance(w, QLabel):
            rich = (w.textFormat() == Qt.TextFormat.RichText
                    or (w.textFormat() == Qt.TextFormat.AutoText and auto_rich(w.text())))
            check(f"{name} text", rendered(w.text(), rich))
        if isinstance(w, QAbstractButton):
            check(f"{name} text", w.text())
        if isinstance(w, QTableWidget):
            for r in range(w.rowCount()):
                for c in range(w.columnCount()):
                    item = w.item(r, c)
                    if item is not None and item.toolTip():
                        check(f"{name}[{r},{c}] tooltip",
                              rendered(item.toolTip(), auto_rich(item.toolTip())))
        if isinstance(w, pg.GraphicsView):
            for item in w.scene().items():
                if isinstance(item, QGraphicsTextItem):  # LabelItem, TextItem, axis labels
                    check(f"{name} {type(item.parentItem()).__name__} text",
                          item.toPlainText())
    return found


@pytest.fixture
def hostile_window(make_window, tmp_path, qtbot):
    path = synthetic_session.write(tmp_path / "hostile.jsonl", hostile_text.poisoned_events())
    window = make_window()
    assert window.open_recording(path)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    return window


def test_every_tab_shows_a_recordings_markup_as_text(hostile_window):
    window = hostile_window
    level = "wmma" + hostile_text.TAIL
    found = []
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        window.select_level(level)
        window.flush_views()
        found += leaks(window)
    assert WORD in "".join(window.messages.texts())  # the poisoned text is on screen
    assert not found, "\n".join(sorted(set(found)))


def test_a_runners_reason_and_a_fields_text_are_shown_as_text(qtbot):
    from gemmscope.app.widgets.run_controls import RunControls

    controls = RunControls()
    qtbot.addWidget(controls)
    controls.fields["M"].setText(MARKUP)  # what the user typed, echoed in the reason
    controls.set_unavailable(f"the runner said {MARKUP}")
    controls.show()
    found = leaks_in(controls)
    assert WORD in controls.reason.text() and not found, found


def test_the_oracle_sees_markup_that_qt_renders(qtbot):
    """The check itself: an auto-format label and a raw tooltip are caught."""
    from PySide6.QtWidgets import QLabel

    label = QLabel(MARKUP)
    qtbot.addWidget(label)
    label.setToolTip(MARKUP)
    assert len(leaks_in(label)) == 2

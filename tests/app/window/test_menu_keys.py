"""The keyboard reaches every tab and every menu item: Ctrl+Tab and Ctrl+PageDown move to
the next view tab (Ctrl+Shift+Tab, Ctrl+PageUp back), wherever the focus is; in each menu
no two items share a mnemonic (Alt+letter picks one item, not the first of several)."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu

MNEMONIC = re.compile(r"&([^&])")


def mnemonics(menu: QMenu) -> dict[str, list[str]]:
    letters: dict[str, list[str]] = {}
    for action in menu.actions():
        for letter in MNEMONIC.findall(action.text().split("\t")[0]):
            letters.setdefault(letter.lower(), []).append(action.text())
    return letters


def every_menu(window) -> list[tuple[str, QMenu]]:
    out, todo = [], [(a.text(), a.menu()) for a in window.menuBar().actions() if a.menu()]
    while todo:
        name, menu = todo.pop()
        out.append((name, menu))
        todo += [(f"{name} ▸ {a.text()}", a.menu()) for a in menu.actions() if a.menu()]
    return out


def test_no_two_items_of_a_menu_share_a_mnemonic(make_window):
    window = make_window()
    bar = {}
    for action in window.menuBar().actions():
        for letter in MNEMONIC.findall(action.text()):
            bar.setdefault(letter.lower(), []).append(action.text())
    found = [f"menu bar: {texts}" for texts in bar.values() if len(texts) > 1]
    for name, menu in every_menu(window):
        found += [f"{name}: {texts}" for texts in mnemonics(menu).values() if len(texts) > 1]
    assert found == []


@pytest.mark.parametrize(("forward", "back"), [
    ((Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier),
     (Qt.Key.Key_Backtab, Qt.KeyboardModifier.ControlModifier
      | Qt.KeyboardModifier.ShiftModifier)),
    ((Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier),
     (Qt.Key.Key_PageUp, Qt.KeyboardModifier.ControlModifier))],
    ids=["ctrl-tab", "ctrl-pagedown"])
def test_ctrl_tab_and_ctrl_pagedown_move_between_the_view_tabs(qtbot, make_window, forward,
                                                               back):
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    window.ladder.table.setFocus()  # the focus in a panel, not on the tab bar
    QApplication.processEvents()
    tabs = window.tabs
    start = tabs.currentIndex()
    qtbot.keyClick(QApplication.focusWidget() or window, *forward)
    assert tabs.currentIndex() == (start + 1) % tabs.count()
    qtbot.keyClick(QApplication.focusWidget() or window, *back)
    qtbot.keyClick(QApplication.focusWidget() or window, *back)
    assert tabs.currentIndex() == (start - 1) % tabs.count()

"""A talk's keys (keys.TALK_KEYS) from whatever widget has the focus: an event filter on
the application while the talk is open takes the clicker's keys (PageDown/PageUp, B or
period, F5, Esc, and the arrows, Space, Backspace, Home, End) before a focused widget or a
window shortcut does; a text field keeps the keys it types."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from .keys import TALK_KEYS

TALK_COMMANDS = ("next", "previous", "first", "last", "blank", "present", "escape")
TYPED_KEYS = frozenset({Qt.Key.Key_B, Qt.Key.Key_Period, Qt.Key.Key_Space,
                        Qt.Key.Key_Backspace, Qt.Key.Key_Left, Qt.Key.Key_Right,
                        Qt.Key.Key_Home, Qt.Key.Key_End})


def _key_table() -> dict[tuple[int, int], str]:
    """(key, modifiers) -> talk command, from keys.TALK_KEYS (in its order)."""
    out: dict[tuple[int, int], str] = {}
    for spec, command in zip(TALK_KEYS, TALK_COMMANDS, strict=True):
        for text in spec.keys:
            combo = QKeySequence(text)[0]  # type: ignore[index]  # (a stub gap: it indexes)
            out[(int(combo.key()), int(combo.keyboardModifiers().value))] = command
    return out


def is_text_field(widget: QWidget | None) -> bool:
    """A field the person types text into (not a spin box's digits): it keeps its keys."""
    if widget is None:
        return False
    if isinstance(widget, QLineEdit):
        parent = widget.parentWidget()
        return widget.isEnabled() and not widget.isReadOnly() and \
            not isinstance(parent, QAbstractSpinBox)
    if isinstance(widget, QTextEdit | QPlainTextEdit):
        return not widget.isReadOnly()
    return False


class KeyedTalk(Protocol):
    """What the keys need of a talk (talk.TalkController is one): its commands, and the
    window it is shown on (a key for a dialog of the window's own is not the talk's)."""

    def command(self, what: str) -> None: ...
    def stage_widget(self) -> QWidget: ...


class TalkKeys(QObject):
    """The talk's keys from any widget: an event filter on the application (while the
    talk is open) that takes the clicker's keys before a focused widget or a window
    shortcut does; a text field keeps the keys it types."""

    def __init__(self, controller: KeyedTalk, parent: QObject | None = None) -> None:
        """``controller``: the talk (app/window/talk.py) whose ``command`` and window the
        keys use; ``parent``: the keys' owner (the talk)."""
        super().__init__(parent)
        self.controller = controller
        self.table = _key_table()

    def command_of(self, event: QKeyEvent, target: QObject | None = None) -> str | None:
        """The talk command of a key sent to ``target`` (the focused widget, or the
        window it goes through), or None where the key is not the talk's."""
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        command = self.table.get((int(event.key()), int(mods.value)))
        if command is None:
            return None
        focus = target if isinstance(target, QWidget) else QApplication.focusWidget()
        if event.key() in TYPED_KEYS and is_text_field(focus):
            return None
        window = self.controller.stage_widget()
        if focus is not None and focus.window() is not window and \
                QApplication.activeWindow() not in (None, window):
            return None  # a dialog of its own (the shortcut sheet, a file dialog)
        return command

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) or \
                not isinstance(event, QKeyEvent):
            return False
        command = self.command_of(event, obj)
        if command is None:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # no window shortcut takes it: the key press comes here
            return True
        if not event.isAutoRepeat() or command in ("next", "previous"):
            self.controller.command(command)
        return True

"""The window and the screen it starts on: opened inside the screen's available geometry
(the rule is :func:`gemmscope.app.core.screen_fit.fit_window`, on plain rectangles), and a
talk full screen on that screen."""

from __future__ import annotations

import struct

from PySide6.QtCore import QByteArray, QRect
from PySide6.QtGui import QCursor, QGuiApplication, QScreen
from PySide6.QtWidgets import QMainWindow, QWidget

from ..core.screen_fit import DEFAULT_SIZE, Rect, fit_window


def start_screen() -> QScreen | None:
    """The screen a window opens on: the one under the mouse, else the primary one."""
    return QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()


def as_rect(rect: QRect) -> Rect:
    return Rect(rect.x(), rect.y(), rect.width(), rect.height())


def as_qrect(rect: Rect) -> QRect:
    return QRect(rect.x, rect.y, rect.width, rect.height)


def place_on_screen(window: QWidget, saved: Rect | None,
                    default: tuple[int, int] = DEFAULT_SIZE) -> Rect:
    """Give ``window`` (not shown yet) the geometry :func:`fit_window` picks for the
    screen it starts on; the rectangle given."""
    screen = start_screen()
    if screen is None:  # no screen at all: the default size, as before
        window.resize(*default)
        return Rect(window.x(), window.y(), *default)
    if window.windowHandle() is not None:
        window.windowHandle().setScreen(screen)
    rect = fit_window(saved, as_rect(screen.availableGeometry()), default)
    window.setGeometry(as_qrect(rect))
    return rect


def full_screen_on_start_screen(window: QWidget) -> None:
    """Show ``window`` full screen on the screen it starts on (a talk)."""
    screen = start_screen()
    if screen is not None:
        window.setGeometry(as_qrect(fit_window(None, as_rect(screen.availableGeometry()))))
        if window.windowHandle() is None:
            window.winId()  # (makes the native window, whose screen can then be set)
        handle = window.windowHandle()
        if handle is not None:
            handle.setScreen(screen)
    window.showFullScreen()


QT_GEOMETRY_MAGIC = 0x1D9D0CB  # the first four bytes of QWidget::saveGeometry's data


def is_saved_geometry(data: bytes) -> bool:
    """Whether ``data`` begins as QWidget::saveGeometry's bytes do: its magic number and a
    format version (major) that Qt 6 reads, 1 to 3."""
    if len(data) < 6:
        return False
    magic, major = struct.unpack(">IH", data[:6])
    return magic == QT_GEOMETRY_MAGIC and 1 <= major <= 3


def restore_layout(window: QMainWindow, geometry: bytes | None, state: bytes | None,
                   notes: list[str]) -> None:
    """The window's saved size and panel layout (Qt's bytes, as the preferences keep
    them), inside the screen it starts on. Qt refuses a saved geometry that does not fit
    the screen (a window sized on a desk's monitor, opened on a 1280x720 projector): the
    default size cut to the screen, as fit_window does, and nothing said. Bytes that are
    not a saved geometry at all are said in ``notes``, and the default used."""
    saved = None
    if geometry is not None:
        if window.restoreGeometry(QByteArray(geometry)):
            saved = as_rect(window.geometry())
        elif not is_saved_geometry(geometry):
            notes.append("preferences: window/geometry is not a window's "
                         "geometry; using the default size")
    # inside the screen it starts on: the size it had where that fits, else the default
    # cut to the screen (a 1400x900 window on a 1280x720 projector hid its bottom)
    place_on_screen(window, saved, DEFAULT_SIZE)
    if state is not None and not window.restoreState(QByteArray(state)):
        notes.append("preferences: window/state is not a layout of this "
                     "window's panels; using the default layout")

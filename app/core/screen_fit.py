"""Where a window opens: inside the screen's available geometry, at the size it had where
that still fits. Plain rectangles in, a plain rectangle out (no Qt), so the rule holds
whatever the preferences store and whichever screen the window meets.

The rectangles are the window's client area (Qt's ``geometry()``); ``frame`` is what the
window manager adds around it (title bar, borders), which must fit on the screen too.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SIZE = (1400, 900)  # the first start's window, where the screen has room
# the window manager's title bar and borders, before the window is shown and they are known
FRAME = (4, 32, 4, 4)  # left, top, right, bottom
SMALLEST = (640, 400)  # never asked for smaller than this (a tiny "screen" in a test)


@dataclass(frozen=True, slots=True)
class Rect:
    x: int
    y: int
    width: int
    height: int

    @property
    def right(self) -> int:  # one past the last column
        return self.x + self.width

    @property
    def bottom(self) -> int:
        return self.y + self.height

    def contains(self, other: Rect) -> bool:
        return (self.x <= other.x and self.y <= other.y and other.right <= self.right
                and other.bottom <= self.bottom)


def room_for_client(available: Rect, frame: tuple[int, int, int, int] = FRAME) -> Rect:
    """The part of ``available`` a window's client area may take, its frame around it."""
    left, top, right, bottom = frame
    return Rect(available.x + left, available.y + top,
                max(1, available.width - left - right),
                max(1, available.height - top - bottom))


def fit_window(saved: Rect | None, available: Rect, default: tuple[int, int] = DEFAULT_SIZE,
               frame: tuple[int, int, int, int] = FRAME) -> Rect:
    """The window's client rectangle: ``saved`` where it lies wholly on the screen (with
    its frame); a saved size that fits but lies elsewhere (a screen since unplugged) moved
    onto it; otherwise ``default`` cut to the screen, centred."""
    room = room_for_client(available, frame)
    if saved is not None and saved.width > 0 and saved.height > 0:
        if room.contains(saved):
            return saved
        if saved.width <= room.width and saved.height <= room.height:
            x = min(max(saved.x, room.x), room.right - saved.width)
            y = min(max(saved.y, room.y), room.bottom - saved.height)
            return Rect(x, y, saved.width, saved.height)
    width = min(default[0], room.width)
    height = min(default[1], room.height)
    width, height = max(width, min(SMALLEST[0], room.width)), \
        max(height, min(SMALLEST[1], room.height))
    return Rect(room.x + (room.width - width) // 2, room.y + (room.height - height) // 2,
                width, height)

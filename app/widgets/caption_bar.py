"""A talk's caption under the views: large plain text and the scene's number.

The caption is set in pixels: CAPTION_SCALE times the theme's type, shrunk a pixel at a
time until the wrapped text fits its band (MAX_HEIGHT of the window's height), never
below MIN_CAPTION_PX (18 px text: readable from the back of a room). A caption that does
not fit even then is cut by its band and says so (:attr:`CaptionBar.fits`); `gemmscope
talk FILE --check` lists those scenes.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QWidget

from ..theme import NORMAL, Theme
from .plain import plain_label

# the caption's size against the theme's text: readable from the back of a room, and
# still leaving the views most of a 1280×720 projector in presentation mode
CAPTION_SCALE = 1.2
MIN_CAPTION_PX = 18  # the smallest caption text, in pixels (the font's pixel size)
MAX_HEIGHT = 0.22  # of the window: the caption band
CHECK_SIZE = (1280, 720)  # the screen `talk --check` fits every caption to


def pt_to_px(pt: float, dpi: float) -> int:
    return round(pt * dpi / 72)


class CaptionBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("talk_caption")
        self.text = plain_label()  # a caption holds the recording's text: never markup
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.number = plain_label()
        self.number.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        layout = self.row = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 6)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.number, 0, Qt.AlignmentFlag.AlignTop)
        # measures a caption as the label lays it out (the window's style sheet and all):
        # the font's own metrics came out a pixel shorter, which cut a caption that just fit
        self.probe = plain_label(parent=self)
        self.probe.setWordWrap(True)
        self.probe.hide()
        self.fits = True  # the caption fits its band at the size shown
        self.shown_px = MIN_CAPTION_PX
        self.apply_theme(NORMAL)

    def show_scene(self, caption: str, index: int, count: int) -> None:
        """Scene ``index`` (0-based) of ``count``, with its caption."""
        self.text.setText(caption)
        self.number.setText(f"{index + 1} / {count}")
        self._fit()

    def show_note(self, text: str) -> None:
        """A line that is no scene's caption (the recording is being read)."""
        self.text.setText(text)
        self.number.setText("")
        self._fit()

    def caption_px(self) -> int:
        """The caption's type size when it fits (see :meth:`_fit`)."""
        return max(MIN_CAPTION_PX, round(pt_to_px(self.font_pt, self.logicalDpiY())
                                         * CAPTION_SCALE))

    @property
    def shown_pt(self) -> float:
        """The size shown, in points (the theme's unit)."""
        return self.shown_px * 72 / self.logicalDpiY()

    def band_px(self, window_height: int | None = None) -> int:
        """The most the caption's text may take: MAX_HEIGHT of the window."""
        window = self.window()
        height = window_height if window_height is not None else (
            window.height() if window is not self else 10_000)
        margins = self.row.contentsMargins()
        return int(MAX_HEIGHT * height) - margins.top() - margins.bottom()

    def text_width(self) -> int:
        """The width the caption wraps to: the bar's, less its margins and the number."""
        margins = self.row.contentsMargins()
        spacing = self.row.spacing()
        width = self.width() - margins.left() - margins.right() - spacing \
            - self.number.sizeHint().width()
        return max(width, 200)

    def fit_size(self, text: str, width: int, budget: int) -> tuple[int, int, bool]:
        """(pixel size, height, fits) of ``text`` wrapped to ``width``: the largest size
        from caption_px down to MIN_CAPTION_PX whose height fits ``budget``."""
        self.probe.setText(text)
        height = 0
        for px in range(self.caption_px(), MIN_CAPTION_PX - 1, -1):
            self.probe.setStyleSheet(f"font-size: {px}px;")
            self.probe.ensurePolished()
            height = self.probe.heightForWidth(width)
            if height <= budget:
                return px, height, True
        return MIN_CAPTION_PX, height, False

    def _fit(self) -> None:
        """As tall as the wrapped caption at the present width, at most the band: a long
        caption is set smaller (down to MIN_CAPTION_PX) rather than cut or let grow the
        window. A dock does not ask its widget's height for a width, so the caption says
        it as a minimum."""
        # the scene's number never narrower than its text (in the type it has now): a
        # long caption squeezed "11 / 20" to "1 / 20"
        self.number.ensurePolished()
        self.number.setMinimumWidth(self.number.sizeHint().width())
        margins = self.row.contentsMargins()
        budget = self.band_px()
        px, height, self.fits = self.fit_size(self.text.text(), self.text_width(), budget)
        self.shown_px = px
        self.text.setStyleSheet(f"font-size: {px}px;")
        least = max(min(height, budget), self.number.sizeHint().height()) \
            + margins.top() + margins.bottom()
        if (least, least) != (self.minimumHeight(), self.maximumHeight()):
            # exactly that tall: a dock given more room by a layout that happened before
            # (a toolbar hidden, the window shown later) kept it, so one scene drew two ways
            self.setFixedHeight(least)
            dock = self.parentWidget()
            if dock is not None:  # the dock's own, now (else a pixel short)
                dock.setFixedHeight(least)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()

    def apply_theme(self, theme: Theme) -> None:
        """Colours of the theme; type larger than the theme's (its own style sheet wins
        over the window's, which sets every widget's size)."""
        self.font_pt = theme.font_pt
        self.setStyleSheet(
            f"QWidget#talk_caption {{ background: {theme.background}; }} "
            f"QLabel {{ color: {theme.foreground}; background: {theme.background}; "
            f"font-size: {self.caption_px()}px; }}")
        self._fit()

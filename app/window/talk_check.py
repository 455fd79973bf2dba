"""`gemmscope talk FILE --check`: every caption, filled from the whole recording, against
its band at CHECK_SIZE in presentation mode at the smallest caption size."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QApplication, QStatusBar

from ...kernels.protocol import terminal_text
from ...kernels.results import counted
from ..core.talk import Talk, lines_not_found
from ..sources.replay import ReplaySource
from ..theme import Theme
from ..widgets.caption_bar import CHECK_SIZE, CaptionBar


class CheckStage(Protocol):
    """What the check uses of the main window (the window is one)."""

    @property
    def theme(self) -> Theme: ...
    @property
    def replay(self) -> ReplaySource | None: ...
    def set_presentation(self, on: bool, full_screen: bool = True) -> None: ...
    def resize(self, w: int, h: int, /) -> None: ...
    def show(self) -> None: ...
    def open_recording(self, path: str | Path, note: str = "", background: bool = False
                       ) -> bool: ...
    def statusBar(self) -> QStatusBar: ...
    def close(self) -> bool: ...


class CheckedTalk(Protocol):
    """What the check uses of the talk (talk.TalkController is one)."""

    @property
    def talk(self) -> Talk: ...
    @property
    def caption(self) -> CaptionBar: ...
    def caption_of(self, index: int) -> str: ...
    def load(self, events: Sequence[object]) -> None: ...
    def stop(self) -> None: ...


def misfits(app: QApplication, window: CheckStage, controller: CheckedTalk
            ) -> list[tuple[int, str]]:
    """(scene number, why) of every scene whose caption does not fit its band at
    CHECK_SIZE in presentation mode at the smallest caption size."""
    width, height = CHECK_SIZE
    window.set_presentation(True, full_screen=False)
    window.resize(width, height)
    window.show()
    for _ in range(5):
        app.processEvents()
    bar = controller.caption
    bar.apply_theme(window.theme)
    budget = bar.band_px(height)
    out = []
    count = len(controller.talk.scenes)
    for i in range(count):
        # the text's width in a window of CHECK_SIZE: the bar's own margins and this
        # scene's number aside ("15 / 22" takes more than "1 / 22": one width for every
        # scene passed a caption that scene 15 cut by a pixel; the window itself may not
        # yet be made that narrow)
        bar.number.setText(f"{i + 1} / {count}")
        text_w = width - max(0, bar.width() - bar.text_width())
        px, needed, fits = bar.fit_size(controller.caption_of(i), text_w, budget)
        if not fits:
            out.append((i + 1, f"needs {needed} px at {px} px text; its band at "
                               f"{width}×{height} has {budget} px"))
    return out


def check_talk(app: QApplication, window: CheckStage, controller: CheckedTalk,
               recording: Path) -> int:
    """`gemmscope talk FILE --check`: 0 when every caption fits, else 1 (and the scenes)."""
    if not window.open_recording(recording, background=False):
        print(terminal_text(window.statusBar().currentMessage()), file=sys.stderr)
        controller.stop()
        window.close()
        return 2
    assert window.replay is not None  # (just opened)
    window.replay.pause()  # the captions need the recording, not its replay
    controller.load(window.replay.recording.events)
    bad = misfits(app, window, controller)
    lost = lines_not_found(controller.talk, window.replay.recording.events)
    controller.stop()
    window.close()
    name = controller.talk.path.name
    for scene, why in bad:
        print(terminal_text(f"{name}: scene {scene}: the caption does not fit: {why}"))
    for scene, why in lost:
        print(terminal_text(f"{name}: scene {scene}: {why}"))
    if lost:
        return 1
    if not bad:
        print(f"{name}: every caption of {counted(len(controller.talk.scenes), 'scene')} fits its "
              f"band at "
              f"{CHECK_SIZE[0]}×{CHECK_SIZE[1]}")
    return 1 if bad else 0

"""One export by name and file suffix, for the File menu and the command line:

    gemmscope replay FILE --export out.svg --chart bars
    gemmscope replay FILE --export slide.png --chart sweep --scale 2
    gemmscope replay FILE --export tiling.gif --chart tiling --frames 24 --fps 3
    gemmscope replay FILE --export results.csv        (or ladder.md, with chart PNGs)

The target's tab is shown while it is drawn (a tab never shown has no size of its own),
then the tab that was shown comes back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

from ..views.base import View
from ..views.playback import ViewPanel
from .exports import (
    ANIMATION_SUFFIXES,
    ANIMATION_TARGETS,
    SUFFIXES,
    TARGETS,
    ExportError,
    animation_frames,
    export_picture,
    suffix_of,
    target_widget,
    write_animation,
)

DEFAULT_CHART = "bars"
DEFAULT_ANIMATION = "tiling"
DEFAULT_FPS = 2.0


class Exporting(Protocol):
    """What an export needs of the main window."""

    views: dict[str, View]
    tabs: QTabWidget

    def flush_views(self) -> None: ...
    def export_csv(self, path: str | Path, every: bool = False) -> Path: ...
    def export_report(self, path: str | Path) -> Path: ...


def check_request(path: str | Path, chart: str | None) -> str:
    """The chart a request exports ("" for CSV and Markdown); ExportError when the pair
    cannot be made, before anything is loaded or drawn."""
    kind = suffix_of(path)
    if kind not in SUFFIXES:
        raise ExportError(f"cannot tell the format of {Path(path).name!r}: give a file "
                          f"ending in {', '.join('.' + s for s in SUFFIXES)}")
    if kind in ("csv", "md"):
        return ""
    animations = [t.name for t in ANIMATION_TARGETS]
    if kind in ANIMATION_SUFFIXES:
        name = chart or DEFAULT_ANIMATION
        if name not in animations:
            raise ExportError(f".{kind} exports an animation view: --chart "
                              f"{{{','.join(animations)}}}, not {name!r}")
        return name
    name = chart or DEFAULT_CHART
    if name not in TARGETS:
        raise ExportError(f"no chart called {name!r}; charts: {', '.join(TARGETS)}")
    return name


def export_named(window: Exporting, path: str | Path, chart: str | None = None,
                 scale: float = 1.0, frames: int | None = None,
                 fps: float = DEFAULT_FPS, every: bool = False) -> Path:
    """Write ``path`` (format by its suffix) of the chart or view called ``chart``; a CSV
    of the ladder shown, or with ``every`` of every result."""
    name = check_request(path, chart)
    window.flush_views()
    kind = suffix_of(path)
    if kind == "csv":
        return window.export_csv(path, every=every)
    if kind == "md":
        return window.export_report(path)
    view = window.views[TARGETS[name].view]
    assert isinstance(view, QWidget)
    shown = window.tabs.currentWidget()
    window.tabs.setCurrentWidget(view)
    app = QApplication.instance()
    try:
        if app is not None:
            app.processEvents()  # lay the tab out at its size
        window.flush_views()
        if kind in ANIMATION_SUFFIXES:
            assert isinstance(view, ViewPanel)
            return write_animation(animation_frames(view, frames, scale), path, fps)
        return export_picture(target_widget(window.views, name), path, scale)
    finally:
        window.tabs.setCurrentWidget(shown)

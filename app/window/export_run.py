"""One export by name and file suffix, for the File menu and the command line:

    gemmscope replay FILE --export out.svg --chart bars
    gemmscope replay FILE --export slide.png --chart sweep --size 1600x600 --scale 2
    gemmscope replay FILE --export tiling.gif --chart tiling --frames 24 --fps 3
    gemmscope replay FILE --export results.csv        (or ladder.md, with chart PNGs)

A picture is drawn at the size asked (else its target's default, a complete picture),
off screen (:mod:`.exporters` in :mod:`.exports`): the window, its tabs and its layout
stay as they were.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QTabWidget

from ...kernels.protocol import shown
from ..views.base import View
from .exports import (
    ANIMATION_SUFFIXES,
    ANIMATION_TARGETS,
    DEFAULT_FPS,
    EXPORTERS,
    SUFFIXES,
    TARGETS,
    AnimationExporter,
    ExportError,
    suffix_of,
    target_widget,
)

DEFAULT_CHART = "bars"
DEFAULT_ANIMATION = "tiling"


class Exporting(Protocol):
    """What an export needs of the main window."""

    @property
    def views(self) -> Mapping[str, View]: ...
    @property
    def tabs(self) -> QTabWidget: ...

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
        raise ExportError(f"no chart called {shown(name, 40)}; charts: {', '.join(TARGETS)}")
    return name


def export_named(window: Exporting, path: str | Path, chart: str | None = None,
                 scale: float = 1.0, frames: int | None = None,
                 fps: float = DEFAULT_FPS, every: bool = False,
                 size: tuple[int, int] | None = None) -> Path:
    """Write ``path`` (format by its suffix) of the chart or view called ``chart``, at
    ``size`` pixels (None: the target's default) times ``scale``; a CSV of the ladder
    shown, or with ``every`` of every result."""
    name = check_request(path, chart)
    kind = suffix_of(path)
    if kind not in ("csv", "md"):
        target = TARGETS[name]
        size = size or target.size
        exporter = (AnimationExporter(size, scale, window.flush_views, frames, fps)
                    if kind in ANIMATION_SUFFIXES else
                    EXPORTERS[kind](size, scale, window.flush_views))
    window.flush_views()
    if kind == "csv":
        return window.export_csv(path, every=every)
    if kind == "md":
        return window.export_report(path)
    view = window.views[target.view]  # (made now, where it was not yet)
    ensure = getattr(view, "ensure_built", None)
    if callable(ensure):
        ensure()  # a view that makes its plots when first shown
    widget = target_widget(window.views, name)
    return exporter.export(widget, path, str(getattr(widget, "base_title", target.title)))

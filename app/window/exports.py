"""Exports: a chart or view to PNG or SVG, an animation to GIF, WebP or MP4, drawn at
the size asked (not the window's), results to CSV, the ladder to a Markdown report.

As in pyqtgraph's exporters, one class per format on one base (:class:`Exporter`):
the base lends the widget to a window off screen sized to the output
(:func:`.offscreen.drawn_at`), where the chart lays out its legend, names, ticks and
value labels for that size, and the subclass draws it into its file: ``size`` pixels,
times ``scale`` for HiDPI slides. The widget renders itself into the file's paint device
(never the hover box: it is hidden first). The SVG device takes the screen's resolution
(at QSvgGenerator's default 72 dpi, items that pyqtgraph records as QPictures, the bars,
replay at 72/96 of the axes' scale), and its groups' transforms are baked into the
shapes (:mod:`..core.svg_flatten`), so librsvg and browsers draw what QtSvg draws. Every
file is written whole or not at all (kernels/protocol/atomic_file.py: PNG and SVG are
made in memory, then written, checked and renamed by the one writer; a symlink followed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import ClassVar

import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QIODevice, QPoint, QRect, QRectF, QSize
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsView, QWidget

from ...kernels.protocol import shown, write_bytes
from ..core import export
from ..core.store import SessionStore
from ..core.svg_flatten import flatten_svg
from ..plots.hover_readout import HoverReadout
from ..views.animated_canvas import AnimatedCanvas
from ..views.base import View
from ..views.playback import ViewPanel
from .export_targets import (  # noqa: F401  (the table, read through this module too)
    ANIMATION_SUFFIXES,
    ANIMATION_TARGETS,
    CHART_TARGETS,
    IMAGE_SUFFIXES,
    MAX_FRAMES,
    MAX_SCALE,
    SUFFIXES,
    TARGETS,
    TEXT_SUFFIXES,
    ExportError,
    Target,
    check_size,
)
from .offscreen import drawn_at, without_chrome

DEFAULT_FPS = 2.0
REPORT_CHART_SIZE = (1280, 720)  # each chart PNG beside a Markdown report


def suffix_of(path: str | Path) -> str:
    return Path(path).suffix.lower().lstrip(".")


def target_widget(views: Mapping[str, View], name: str) -> QWidget:
    """The widget that ``name`` exports: a chart, a whole view, or an animation's canvas."""
    target = TARGETS.get(name)
    if target is None or target.view not in views:
        raise ExportError(f"no chart called {shown(name, 40)}; charts: {', '.join(TARGETS)}")
    view = views[target.view]
    if isinstance(view, ViewPanel):
        return view.canvas  # the picture, without the playback buttons
    widget = view.charts()[target.chart] if target.chart else view
    assert isinstance(widget, QWidget)
    return widget


def render_image(widget: QWidget, scale: float = 1.0) -> QImage:
    """The widget as it is laid out now, ``scale`` times as many pixels (2 for slides)."""
    if not 0 < scale <= MAX_SCALE:
        raise ExportError(f"scale must be above 0 and at most {MAX_SCALE:g}, not {scale:g}")
    HoverReadout.hide_all()
    size = widget.size()
    image = QImage(QSize(round(size.width() * scale), round(size.height() * scale)),
                   QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(scale)
    image.fill(widget.palette().window().color())
    painter = QPainter(image)
    try:
        _render(widget, painter)
    finally:
        painter.end()
    return image


def _render(widget: QWidget, painter: QPainter) -> None:
    if isinstance(widget, QGraphicsView):  # a plot: its scene, as the view shows it
        # (in the widget's own coordinates: the default target is the device's pixels,
        # which a scale of 2 would double again)
        size = widget.viewport().size()
        widget.render(painter, QRectF(0, 0, size.width(), size.height()),
                      widget.viewport().rect())
    else:  # a widget and its children, each as it paints itself
        widget.render(painter, QPoint(0, 0))


def svg_bytes(widget: QWidget, title: str = "gemmscope chart", scale: float = 1.0) -> bytes:
    """``widget`` as laid out now, as SVG: a canvas of its size times ``scale`` pixels,
    every shape in canvas coordinates (see the module's docstring). In memory:
    QSvgGenerator says nothing when a file write fails, so the bytes are written, and
    checked, by the one writer."""
    HoverReadout.hide_all()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    size = widget.size()
    generator.setSize(size)
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    # the screen's resolution: QPicture items (bars) replay scaled by the ratio otherwise
    generator.setResolution(widget.logicalDpiX())
    generator.setTitle(title)
    painter = QPainter(generator)
    try:
        _render(widget, painter)
    finally:
        painter.end()
    buffer.close()
    text = bytes(buffer.data().data()).decode("utf-8")
    return flatten_svg(text, size.width() * scale, size.height() * scale).encode("utf-8")


def png_bytes(image: QImage | QPixmap) -> bytes:
    """``image`` as PNG, in memory; ExportError if Qt cannot encode it."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # (PySide6's stub asks bytes for the format; Qt takes the str, and refuses bytes)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
        raise ExportError("the picture could not be encoded as PNG")
    buffer.close()
    return bytes(buffer.data().data())


def save_png(image: QImage | QPixmap, path: str | Path) -> Path:
    """A screenshot or a chart's PNG, whole or not at all (kernels/protocol/atomic_file.py:
    a temporary file beside it, checked, renamed; a symlink followed)."""
    return write_bytes(path, png_bytes(image))


class Exporter:
    """One format: draws a widget at ``size`` (device-independent pixels; None: as it is
    on screen) times ``scale`` into a file, written whole or not at all. ``settle``
    brings the widget's content up to date once it is laid out at that size."""

    suffixes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, size: tuple[int, int] | None = None, scale: float = 1.0,
                 settle: Callable[[], None] | None = None) -> None:
        check_size(size or (1, 1), scale)  # (before anything is drawn or written)
        self.size, self.scale, self.settle = size, scale, settle

    def export(self, widget: QWidget, path: str | Path, title: str = "gemmscope chart"
               ) -> Path:
        path = Path(path)
        kind = suffix_of(path)
        if kind not in self.suffixes:
            raise ExportError(f"{type(self).__name__} writes "
                              f"{', '.join('.' + s for s in self.suffixes)}, not .{kind}")
        with without_chrome(widget, self.settle if self.size is None else None):
            if self.size is None:
                return self.write(widget, path, title)
            with drawn_at(widget, QSize(*self.size), self.settle):
                return self.write(widget, path, title)

    def write(self, widget: QWidget, path: Path, title: str) -> Path:
        raise NotImplementedError


class PngExporter(Exporter):
    suffixes = ("png",)

    def write(self, widget: QWidget, path: Path, title: str) -> Path:
        return save_png(render_image(widget, self.scale), path)


class SvgExporter(Exporter):
    suffixes = ("svg",)

    def write(self, widget: QWidget, path: Path, title: str) -> Path:
        return write_bytes(path, svg_bytes(widget, title, self.scale))


class AnimationExporter(Exporter):
    """Every step of a canvas's animation (``frames`` of them), one frame each."""

    suffixes = ANIMATION_SUFFIXES

    def __init__(self, size: tuple[int, int] | None = None, scale: float = 1.0,
                 settle: Callable[[], None] | None = None, frames: int | None = None,
                 fps: float = DEFAULT_FPS) -> None:
        super().__init__(size, scale, settle)
        if frames is not None and not 1 <= int(frames) <= MAX_FRAMES:
            raise ExportError(f"frames must be 1 to {MAX_FRAMES}, not {frames}")
        if not 0.1 <= fps <= 60:
            raise ExportError(f"fps must be 0.1 to 60, not {fps:g}")
        self.frames, self.fps = frames, fps

    def write(self, widget: QWidget, path: Path, title: str) -> Path:
        assert isinstance(widget, AnimatedCanvas)
        return write_animation(canvas_frames(widget, self.frames, self.scale), path, self.fps)


EXPORTERS: dict[str, type[Exporter]] = {s: cls for cls in (PngExporter, SvgExporter,
                                                           AnimationExporter)
                                        for s in cls.suffixes}


def export_picture(widget: QWidget, path: str | Path, scale: float = 1.0,
                   size: tuple[int, int] | None = None,
                   settle: Callable[[], None] | None = None) -> Path:
    """PNG or SVG by the file's suffix, at ``size`` (None: the widget's own) x ``scale``."""
    kind = suffix_of(path)
    if kind not in IMAGE_SUFFIXES:
        raise ExportError(f"a picture is .png or .svg, not .{kind}")
    return EXPORTERS[kind](size, scale, settle).export(
        widget, path, str(getattr(widget, "base_title", "gemmscope chart")))


def export_chart(chart: pg.PlotWidget, path: str | Path, scale: float = 1.0,
                 size: tuple[int, int] | None = REPORT_CHART_SIZE) -> Path:
    """A chart to PNG or SVG by the file's suffix, at ``size`` x ``scale``."""
    return export_picture(chart, path, scale, size)


def canvas_frames(canvas: AnimatedCanvas, frames: int | None = None,
                  scale: float = 1.0) -> list[QImage]:
    """One image per step of the canvas's animation from the first (``frames`` of them,
    wrapping round; default: every step, at most MAX_FRAMES), whole steps, as it draws
    them at its size now."""
    # (every step, up to the bound: a long sequence exports its first MAX_FRAMES steps)
    count = min(canvas.n_steps(), MAX_FRAMES) if frames is None else int(frames)
    if not 1 <= count <= MAX_FRAMES:
        raise ExportError(f"frames must be 1 to {MAX_FRAMES}, not {count}")
    was_animated, was_step, playing = canvas.animated, canvas.step, canvas.is_playing()
    canvas.pause()
    canvas.set_animated(False)
    try:
        images = []
        for i in range(count):
            canvas.set_step(i % max(1, canvas.n_steps()))
            images.append(render_image(canvas, scale))
        return images
    finally:
        canvas.set_step(was_step)
        canvas.set_animated(was_animated)
        if playing:
            canvas.play()


def _pil_frames(images: Iterable[QImage]) -> list:
    try:
        from PIL import Image
    except ImportError as exc:  # an optional part of the app: say so, never crash
        raise ExportError("animated export needs Pillow: pip install Pillow") from exc
    out = []
    for image in images:
        rgb = image.convertToFormat(QImage.Format.Format_RGB888)
        out.append(Image.frombytes("RGB", (rgb.width(), rgb.height()), bytes(rgb.constBits()),
                                   "raw", "RGB", rgb.bytesPerLine()))
    return out


def write_animation(images: list[QImage], path: str | Path, fps: float = 2.0) -> Path:
    """GIF or WebP (Pillow), or MP4 (imageio-ffmpeg, where installed), by the suffix."""
    path = Path(path)
    kind = suffix_of(path)
    if kind not in ANIMATION_SUFFIXES:
        raise ExportError(f"an animation is .gif, .webp or .mp4, not .{kind}")
    if not 0.1 <= fps <= 60:
        raise ExportError(f"fps must be 0.1 to 60, not {fps:g}")
    if kind == "mp4":
        return _write_mp4(images, path, fps)
    frames = _pil_frames(images)
    duration_ms = round(1000 / fps)
    with export.replacing(path) as temp:
        options = {"lossless": True} if kind == "webp" else {"optimize": False}
        frames[0].save(temp, format="GIF" if kind == "gif" else "WEBP", save_all=True,
                       append_images=frames[1:], duration=duration_ms, loop=0, **options)
    return path


def _write_mp4(images: list[QImage], path: Path, fps: float) -> Path:
    try:
        import imageio_ffmpeg
    except ImportError as exc:
        raise ExportError("MP4 needs an encoder: pip install imageio-ffmpeg "
                          "(GIF and WebP need only Pillow)") from exc
    first = images[0]
    # H.264 wants even sides: a column or row of the background is added where odd
    width, height = first.width() + first.width() % 2, first.height() + first.height() % 2
    with export.replacing(path) as temp:
        writer = imageio_ffmpeg.write_frames(str(temp), (width, height), fps=fps,
                                             macro_block_size=1, output_params=["-f", "mp4"])
        writer.send(None)
        try:
            for image in images:
                padded = QImage(width, height, QImage.Format.Format_RGB888)
                padded.fill(QColor(image.pixel(0, 0)))
                painter = QPainter(padded)
                painter.drawImage(0, 0, image)
                painter.end()
                rows = bytes(padded.constBits())
                stride = padded.bytesPerLine()
                writer.send(b"".join(rows[y * stride:y * stride + width * 3]
                                     for y in range(height)))
        finally:
            writer.close()
    return path


def export_csv(store: SessionStore, path: str | Path, every: bool = False) -> Path:
    """The ladder shown (``every``: every result of the session) as CSV."""
    text = export.results_csv(store) if every else export.ladder_csv(store)
    return export.write_export(path, text)


def export_report(store: SessionStore, path: str | Path, charts: dict[str, pg.PlotWidget],
                  source: str) -> Path:
    """``path``.md with the ladder table, and one PNG per chart beside it."""
    path = Path(path)
    images = []
    for name, chart in charts.items():
        image = path.with_name(f"{path.stem}-{name}.png")
        export_chart(chart, image)
        images.append((chart.base_title if hasattr(chart, "base_title") else name, image.name))
    return export.write_export(path, export.ladder_markdown(store, source, images))

"""Exports: a chart to PNG or SVG, results to CSV, the ladder to a Markdown report.

Every file is written whole or not at all: under a temporary name beside it, renamed when
complete (``core.export.replacing``), so a failed export never leaves half a file."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from PySide6.QtCore import QRect
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator

from ..core import export
from ..core.store import SessionStore


def export_chart(chart: pg.PlotWidget, path: str | Path) -> Path:
    """PNG or SVG by the file's suffix."""
    path = Path(path)
    item = chart.getPlotItem()
    with export.replacing(path) as temp:
        if path.suffix.lower() == ".svg":
            # pyqtgraph 0.14's SVGExporter fails on the path syntax of Qt 6.12's SVG
            # output; Qt's own generator draws the same scene.
            _export_svg(chart, temp)
        else:
            exporter = pg_exporters.ImageExporter(item)
            exporter.parameters()["width"] = max(800, int(chart.width()))
            exporter.export(str(temp))
    return path


def _export_svg(chart: pg.PlotWidget, path: Path) -> None:
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    size = chart.size()
    generator.setSize(size)
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    generator.setTitle(getattr(chart, "base_title", "gemmscope chart"))
    painter = QPainter(generator)
    try:
        chart.render(painter)
    finally:
        painter.end()


def export_csv(store: SessionStore, path: str | Path) -> Path:
    return export.write_export(path, export.results_csv(store))


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

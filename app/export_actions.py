"""Exports: a chart to PNG or SVG, results to CSV, the ladder to a Markdown report."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from gemmscope.app.core import export
from gemmscope.app.core.store import SessionStore


def export_chart(chart: pg.PlotWidget, path: str | Path) -> Path:
    """PNG or SVG by the file's suffix."""
    path = Path(path)
    item = chart.getPlotItem()
    if path.suffix.lower() == ".svg":
        exporter = pg_exporters.SVGExporter(item)
    else:
        exporter = pg_exporters.ImageExporter(item)
        exporter.parameters()["width"] = max(800, int(chart.width()))
    exporter.export(str(path))
    return path


def export_csv(store: SessionStore, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(export.results_csv(store), encoding="utf-8")
    return path


def export_report(store: SessionStore, path: str | Path, charts: dict[str, pg.PlotWidget],
                  source: str) -> Path:
    """``path``.md with the ladder table, and one PNG per chart beside it."""
    path = Path(path)
    images = []
    for name, chart in charts.items():
        image = path.with_name(f"{path.stem}-{name}.png")
        export_chart(chart, image)
        images.append((chart.base_title if hasattr(chart, "base_title") else name, image.name))
    path.write_text(export.ladder_markdown(store, source, images), encoding="utf-8")
    return path

"""The main window's views, charts and results as files: a chart or view by name as PNG
or SVG, the ladder as CSV, a report; mixed into :class:`~.main_window.MainWindow`, whose
parts it names below. The exports' code is imported at first use (exports.py,
export_run.py), not at start-up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtWidgets import QTabWidget

from ..core.store import SessionStore
from ..widgets.ladder_panel import LadderPanel
from .sources import WindowSources
from .view_tabs import ViewTabs


class WindowExports:
    """Mixed into MainWindow (which makes the parts annotated here); not a widget
    itself: a second Qt base beside QMainWindow crashes the bindings."""

    store: SessionStore
    views: ViewTabs
    tabs: QTabWidget
    ladder: LadderPanel
    sources: WindowSources
    flush_views: Callable[[], None]

    # ------------------------------------------------------------- views by name
    def view_names(self) -> list[str]:
        return ["window", "ladder", *self.views.names()]

    def charts(self) -> dict[str, pg.PlotWidget]:
        """The exportable charts of the Charts tab, by name."""
        view = self.views.get("charts")
        return view.charts() if view is not None else {}

    # ------------------------------------------------------------- exports
    def export_chart(self, chart: pg.PlotWidget, path: str | Path,
                     size: tuple[int, int] | None = None, scale: float = 1.0) -> Path:
        """A chart as PNG or SVG at ``size`` (default: the report's chart size)."""
        from . import exports

        self.flush_views()
        return exports.export_picture(chart, path, scale, size or exports.REPORT_CHART_SIZE,
                                      self.flush_views)

    def export_named(self, path: str | Path, chart: str | None = None, scale: float = 1.0,
                     frames: int | None = None, size: tuple[int, int] | None = None) -> Path:
        """A chart, view or animation by name, or CSV / Markdown, by the path's suffix; a
        picture at ``size`` pixels (default: the chart's own complete size) x ``scale``."""
        from . import export_run

        return export_run.export_named(self, path, chart, scale=scale, frames=frames,
                                       size=size)

    def export_csv(self, path: str | Path, every: bool = False) -> Path:
        """The results the ladder shows (the view state's shape, mode and GPU) as CSV;
        ``every``: every result of the session."""
        from . import exports

        return exports.export_csv(self.store, path, every=every)

    def export_report(self, path: str | Path) -> Path:
        """The ladder at the shape and in the mode shown, with a PNG of each chart that
        applies (the GPUs side by side only for a session of several)."""
        from . import exports

        self.flush_views()
        charts = {name: chart for name, chart in self.charts().items()
                  if name != "devices" or self.store.multi_device}
        return exports.export_report(self.store, path, charts, self.sources.path)

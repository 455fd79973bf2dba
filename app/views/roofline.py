"""The Roofline tab: every level and reference at the shape shown as a point on the
GPU's roofs (app/plots/roofline_chart.py), with what the chart cannot show said below it.
Re-plots from any recording: the store's results, header and ceilings are all it reads."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ..core.roofline_data import roofline_data
from ..core.store import Change, SessionStore
from ..plots.roofline_chart import RooflineChart
from ..theme import Theme
from .base import View

CHANGES = frozenset({Change.LADDER, Change.HEADER, Change.COUNTERS})


class RooflineView(QWidget, View):
    level_clicked = Signal(str)  # a point was clicked: the window selects its level

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.chart = RooflineChart()
        self.chart.level_clicked.connect(self.level_clicked)
        self.notes = QLabel("")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.addWidget(self.chart, 1)
        layout.addWidget(self.notes)
        self.store: SessionStore | None = None

    def bind(self, store: SessionStore) -> None:
        self.store = store  # the view reads the store; its chart takes the data

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & CHANGES:
            return
        data = roofline_data(self.store)
        self.chart.set_data(data)
        # the warning on a line of its own, before the notes (QLabel as plain text: a
        # recording's text is never markup)
        said = [f"⚠ {data.baseline}: {data.warning}"] if data.warning else []
        self.notes.setText("\n".join([*said, "; ".join(data.notes)]).strip())

    def bind_selection(self, select_level: Callable[[str], object]) -> None:
        self.level_clicked.connect(select_level)

    def set_level(self, level_id: str) -> bool:
        self.chart.set_selected(level_id)
        return True

    def apply_theme(self, theme: Theme) -> None:
        self.chart.apply_theme(theme)
        # on stage the theme's colour and size; back in the normal theme, the label's own
        # style again (what leaving presentation mode must restore)
        self.notes.setStyleSheet("" if theme.name == "normal" else
                                 f"color: {theme.foreground}; font-size: {theme.font_pt}pt")
        if self.store is not None:
            self.refresh(set(Change))

    def charts(self) -> dict[str, pg.PlotWidget]:
        return {"roofline": self.chart}

"""How the Telemetry tab fits its height: the strips sized for the theme's type, and the
plots of FIT_ORDER shown while each has room for its rotated axis title."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QSize
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QPushButton, QWidget

from ..plots.plot_style import plot_font, title_font
from ..plots.telemetry_strips import ReasonStrip
from ..theme import Theme
from .telemetry_spec import FIT_ORDER, MIN_PLOT_PX, PLOTS


class TelemetryFitting(QWidget):
    """Mixed into TelemetryView (which makes the plots, the strips and the button)."""

    plots: dict[str, pg.PlotWidget]
    theme: Theme
    follow_button: QPushButton
    reasons: ReasonStrip

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_plots()

    def minimumSizeHint(self) -> QSize:
        """Room for the strips and the first plot of FIT_ORDER: the others hide when the
        tab is short (:meth:`_fit_plots`), so they never make the window taller, even
        while another tab is shown."""
        hint = super().minimumSizeHint()
        if not self.plots:  # not built yet (first shown later): the strips' hint alone
            return hint
        fixed = sum(self.plots[n].minimumHeight() for n in ("runs", "reasons"))
        height = (fixed + self.plot_min_height(FIT_ORDER[0])
                  + self.follow_button.sizeHint().height() + 24)
        return QSize(hint.width(), min(hint.height(), height))

    def axis_title(self, name: str) -> str:
        return PLOTS[name]

    def plot_min_height(self, name: str) -> int:
        """The height a plot needs for its rotated axis title (in the theme's type), its
        legend row and two lines of ticks."""
        font = title_font(self.theme)
        width = QFontMetrics(font).horizontalAdvance(self.axis_title(name))
        legend = self.plots[name].getPlotItem().layout.rowMinimumHeight(0) if self.plots \
            else 0.0
        ticks = 3 * QFontMetrics(plot_font(self.theme) or font).height()
        return int(max(MIN_PLOT_PX, width + 24, legend + ticks))

    def _fit_plots(self) -> None:
        """Show the plots of FIT_ORDER that fit the tab's height (the first always); the
        rest hide until the tab is taller, so no axis title is cut or overlaps another."""
        if not self.isVisible():
            return  # fitted when shown, at its real size
        lay = self.layout()
        fixed = sum(self.plots[n].height() for n in ("runs", "reasons"))
        room = self.height() - fixed - self.follow_button.sizeHint().height()
        if lay is not None:
            m = lay.contentsMargins()
            room -= m.top() + m.bottom() + 8
        changed = False
        for i, name in enumerate(FIT_ORDER):
            need = self.plot_min_height(name)
            plot = self.plots[name]
            plot.setMinimumHeight(need)
            show = i == 0 or room >= need
            if show:
                room -= need
            if plot.isHidden() == show:
                plot.setVisible(show)
                changed = True
        # the layout's own sum (rows, spacing, the status row) has the last word: while
        # it needs more than the tab has, the last plot shown hides (the window must not
        # grow: a 1280x720 projector cannot)
        shown = [n for n in FIT_ORDER[1:] if not self.plots[n].isHidden()]
        while lay is not None and shown and lay.minimumSize().height() > self.height():
            self.plots[shown.pop()].hide()
            changed = True
        if changed and lay is not None:
            lay.activate()  # laid out now: the shared time axis holds for what is shown

    def _fit_strips(self) -> None:
        """Heights of the runs strip (two lines of labels) and the reason strip (a row
        per reason, plus the time axis) for the theme's font size."""
        line_px = max(int(1.8 * self.theme.font_pt) + 2 if self.theme.name == "normal" else 0,
                      QFontMetrics(plot_font(self.theme) or title_font(self.theme)).height() + 6)
        self.plots["runs"].setFixedHeight(2 * line_px + 14)
        rows = max(len(self.reasons.rows), 1)
        self.plots["reasons"].setFixedHeight(rows * max(16, line_px) + 3 * line_px + 10)


"""The base plot the charts share: the theme, the title elided to the chart's width, the
empty state (a sentence in place of axes), a legend beside the data, and the number rules
of an axis (finite values, a finite top). The hover readout is in :mod:`.hover_readout`,
the axes in :mod:`.chart_axes`, the legend in :mod:`.side_legend`.

A chart draws its legend in a column right of the plot area (:class:`SideLegend`), so no
legend covers data; with more entries than fit the height it uses more columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF, QTextOption
from PySide6.QtWidgets import QGraphicsItem, QWidget

from ..core.plain_text import html_text, plain_tooltip
from ..theme import NORMAL, Theme, min_text_pt
from .chart_axes import plain_axes, quiet_axes
from .plot_style import plot_font
from .side_legend import SideLegend

# the largest axis value drawn: a recording's absurd number (1e308) must not overflow the
# range arithmetic (pyqtgraph refuses a range of inf or nan)
MAX_AXIS = 1e15


def finite_or_zero(values: Sequence[float | None]) -> np.ndarray:
    """Values as floats; None, NaN, infinities and |v| > MAX_AXIS become 0."""
    out = np.array([v if isinstance(v, int | float) else 0.0 for v in values], dtype=float)
    out[~np.isfinite(out) | (np.abs(out) > MAX_AXIS)] = 0.0
    return out


def finite_top(values: np.ndarray, headroom: float = 1.0) -> float:
    """The top of an axis over ``values``: their finite maximum times ``headroom``,
    at least 1e-9 and at most MAX_AXIS."""
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 0.0
    return float(min(max(top, 1e-9) * headroom, MAX_AXIS))


class Chart(pg.PlotWidget):
    """A themed plot with a side legend and an empty state (a sentence in place of axes)."""

    styles_axes = True  # apply_theme sizes the axes (plot_style.style_plots leaves them)
    LEGEND_SHARE = 0.45  # of the chart's width, at most, for a legend beside the plot
    SIDE_SHARE = 0.3  # a legend that needs more than this beside the plot goes below it
    STAGE_SIDE_SHARE = 0.2  # on stage (the level names in large type need the width)
    BELOW_SHARE = 0.2  # of the chart's height for a legend below the plot (its type shrinks)
    BELOW_MOST = 0.3  # and never more: the first entries, "… N more: hover a curve"

    def __init__(self, title: str, parent: QWidget | None = None,
                 axes: dict[str, pg.AxisItem] | None = None):
        axis_items = plain_axes()
        axis_items.update(axes or {})
        super().__init__(parent=parent, axisItems=axis_items)
        quiet_axes(self.getPlotItem())
        self.base_title = title
        self.theme = NORMAL
        self.selected: str | None = None  # the level chosen in the ladder panel
        self.setMinimumSize(240, 160)
        item = self.getPlotItem()
        item.hideButtons()  # the "A" auto-range button is no part of a picture
        item.setMenuEnabled(False)
        self._placing = False  # place_legend is laying the legend out
        self.side_legend = SideLegend()
        self.side_legend.width_changed = self._legend_changed
        item.layout.addItem(self.side_legend, 2, 3)  # (2, 2): the right axis
        self._legend_cell = (2, 3)
        self.empty_text = pg.TextItem("", anchor=(0.5, 0.5))
        # wrapped to the view's width, each line centred (a long one was cut at both ends)
        self.empty_text.textItem.document().setDefaultTextOption(
            QTextOption(Qt.AlignmentFlag.AlignHCenter))
        item.addItem(self.empty_text, ignoreBounds=True)
        self.empty_text.hide()
        self.empty_text.styled_by_owner = True  # apply_theme sets its type, in each theme
        item.vb.sigResized.connect(self._wrap_empty_text)
        self.empty = False
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            # an axis repaints from a pixmap unless its range, ticks or font changed (the
            # font is set through setTickFont, which invalidates it), and draws major ticks
            # and grid lines only: the minor grid costs ~5 ms per redraw here
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            axis.setStyle(maxTickLevel=0, maxTextLevel=0)
        # the title's room is the chart's width less the left axis's: an axis widened by
        # new tick labels (no resize of the chart) left a title wider than its room, which
        # widened the plot past the widget and cut its right side off
        self._title_axis_px = 0.0
        item.getAxis("left").geometryChanged.connect(self._axis_resized)
        self._make_fields()  # the subclass's own fields, then the first theme styles all
        self.apply_theme(NORMAL)

    def _make_fields(self) -> None:
        """Make the subclass's own fields and items (called once, at the end of
        ``Chart.__init__``, before the first theme is applied, so ``apply_theme`` finds
        every field it styles)."""

    def _axis_resized(self) -> None:
        width = self.getPlotItem().getAxis("left").width()
        if width != self._title_axis_px:
            self._title_axis_px = width
            self._show_title()
            # and the plot back to the widget's size (a title that was too wide left it
            # wider; the view fits its item only on a resize of its own)
            if self.centralWidget is not None and not self.closed:
                self.centralWidget.setGeometry(self.range)

    def set_title_text(self, title: str) -> None:
        if title != self.base_title or not self.getPlotItem().titleLabel.text:
            self.base_title = title
            self._show_title()

    def _show_title(self) -> None:
        """The title, elided to the chart's width (a title wider than the chart would
        widen the plot past the widget and cut its right side off); full in the tooltip."""
        font = QFont()
        font.setPointSize(self.theme.font_pt + 2)
        item = self.getPlotItem()
        legend = self.side_legend.preferredWidth() if self.side_legend.entries and \
            not self.side_legend.below else 0.0
        room = max(40.0, self.width() - item.getAxis("left").width() - legend - 30)
        shown = QFontMetricsF(font).elidedText(self.base_title, Qt.TextElideMode.ElideRight,
                                               room)
        # (LabelItem takes HTML: the title's text is escaped)
        self.setTitle(html_text(shown), color=self.theme.foreground,
                      size=f"{self.theme.font_pt + 2}pt")
        item.layout.setRowFixedHeight(0, item.titleLabel.itemRect().height() + 4)
        self.setToolTip(plain_tooltip(self.base_title) if shown != self.base_title else "")

    def resizeEvent(self, event: Any) -> None:
        # (pyqtgraph resizes during its __init__, and once its plot is gone on close)
        if hasattr(self, "side_legend") and self.getPlotItem() is not None:
            self.place_legend()
            # and its type fitted to the new room even where the legend keeps its size (a
            # chart hidden on stage for want of room, shown again after it, had its legend
            # fitted while hidden, and no resize of the legend itself followed)
            self.side_legend.relayout()
            self._show_title()  # first: the title's width bounds the plot's
        super().resizeEvent(event)

    def _legend_changed(self) -> None:
        self.place_legend()
        self._show_title()

    def place_legend(self) -> None:
        """Beside the plot where the legend's column takes at most SIDE_SHARE of the
        chart's width, else in rows below the x axis (a narrow chart, large type)."""
        legend = self.side_legend
        if self._placing:
            return
        self._placing = True
        try:
            plot_h = self.getPlotItem().vb.height() or self.height() * 0.7
            share = self.SIDE_SHARE if self.theme.name == "normal" else self.STAGE_SIDE_SHARE
            below = bool(legend.entries) and \
                legend.side_width(plot_h) > share * max(self.width(), 1)
            cell = (4, 1) if below else (2, 3)
            if cell != self._legend_cell:
                layout = self.getPlotItem().layout
                layout.removeItem(legend)
                layout.addItem(legend, *cell)
                self._legend_cell = cell
            legend.set_max_width(self.width() * self.LEGEND_SHARE)
            left = self.getPlotItem().getAxis("left").width()
            legend.set_below(below, self.height() * self.BELOW_SHARE,
                             max(self.width() - left - 10, 1.0),
                             self.height() * self.BELOW_MOST)
        finally:
            self._placing = False
        # the plot as large as the view again: a legend that was taller for a moment (a
        # first layout before the width was known) grew it past the view, and a graphics
        # layout never shrinks its top widget back
        if getattr(self, "range", None) is not None:
            self.getPlotItem().setGeometry(self.range)

    def set_selected(self, level_id: str | None) -> None:
        """Highlight this level (subclasses draw it)."""
        self.selected = level_id

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.setBackground(theme.background)
        item = self.getPlotItem()
        item.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        font = QFont()
        font.setPointSize(theme.font_pt)
        ticks = plot_font(theme) or font  # on stage the tick type every plot has
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(theme.foreground)
            axis.setTextPen(theme.foreground)
            axis.setTickFont(ticks)
            axis.label.setFont(font)
            axis.setLabel(axis.labelText, units=None,
                          **{"color": theme.foreground, "font-size": f"{theme.font_pt}pt"})
        self.side_legend.set_style(theme.foreground, theme.font_pt - 1, min_text_pt(theme))
        self.place_legend()
        self.empty_text.setColor(theme.foreground)
        self.empty_text.setFont(font)
        self._show_title()

    def set_label(self, axis: str, text: str) -> None:
        self.getPlotItem().getAxis(axis).setLabel(  # (LabelItem takes HTML: escaped)
            html_text(text),
            **{"color": self.theme.foreground, "font-size": f"{self.theme.font_pt}pt"})

    def _wrap_empty_text(self, *_: object) -> None:
        width = max(self.getPlotItem().vb.width() - 16, 80.0)
        if self.empty_text.textItem.textWidth() != width:
            self.empty_text.setTextWidth(width)

    def show_empty(self, text: str | None) -> bool:
        """Show ``text`` in place of axes and data (None: the data). True when empty."""
        empty = text is not None
        item = self.getPlotItem()
        if empty:
            if self.empty_text.toPlainText() != text:
                self.empty_text.setText(text)
            self._wrap_empty_text()
            item.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            self.empty_text.setPos(0.5, 0.5)
        if empty != self.empty:
            self.empty = empty
            self.empty_text.setVisible(empty)
            for name in ("left", "bottom"):
                item.showAxis(name, not empty)
            item.showGrid(x=not empty, y=not empty, alpha=self.theme.grid_alpha)
            self.side_legend.setVisible(not empty and bool(self.side_legend.entries))
        return empty

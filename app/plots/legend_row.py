"""A legend in a row of its own above a plot's data area, so it never covers a curve
(issue #12: legends drawn inside the Telemetry plots hid the newest samples).

The row is the plot's title row (row 0 of pyqtgraph's PlotItem layout), kept as tall as
the legend; the legend starts where the data area starts (right of the left axis).
"""

from __future__ import annotations

import pyqtgraph as pg

from ..theme import Theme, min_text_pt

ROW_GAP_PX = 2  # between the legend row and the data area


def legend_above(plot: pg.PlotWidget, left_px: float, theme: Theme) -> pg.LegendItem:
    """Make ``plot``'s legend (``plot.plot(..., name=...)`` adds entries to it) in a row
    above the data area, ``left_px`` from the plot's left edge (the left axis' width)."""
    item = plot.getPlotItem()
    legend = pg.LegendItem(offset=None, colCount=8, labelTextSize=text_size(theme),
                           verSpacing=-6, horSpacing=12, pen=None, brush=None)
    legend.layout.setContentsMargins(0, 0, 0, 0)  # a row as tall as its text
    legend.styled_by_owner = True  # restyle_legend sizes it (plot_style leaves it)
    legend.setParentItem(item)
    item.legend = legend  # PlotItem.addItem adds named curves to it
    place_legend(plot, left_px)
    return legend


def text_size(theme: Theme) -> str:
    """Large enough to read; on stage the theme's floor (each row it takes is a plot's)."""
    if theme.min_text_px:
        return f"{min_text_pt(theme):g}pt"
    return f"{max(8, theme.font_pt - 2)}pt"


def place_legend(plot: pg.PlotWidget, left_px: float) -> None:
    """After the entries, the theme or the axis width changed: the row fits the legend."""
    item = plot.getPlotItem()
    legend = item.legend
    legend.updateSize()
    height = legend.boundingRect().height() if legend.items else 0.0
    item.layout.setRowFixedHeight(0, height + ROW_GAP_PX if height else 0.0)
    item.layout.activate()  # now: a paint before the next layout pass would overlap
    legend.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(left_px + ROW_GAP_PX, 0))


def restyle_legend(plot: pg.PlotWidget, left_px: float, theme: Theme) -> None:
    """The theme's colour and size on every entry: the entries made again (set in place,
    the columns kept the width of the type they had, and leaving the stage kept them)."""
    legend = plot.getPlotItem().legend
    entries = [(sample.item, label.text) for sample, label in legend.items]
    legend.opts["labelTextSize"] = text_size(theme)
    legend.opts["labelTextColor"] = pg.mkColor(theme.foreground)
    legend.clear()
    for item, text in entries:
        legend.addItem(item, text)
    place_legend(plot, left_px)

"""Type and line sizes of every pyqtgraph plot under a widget, for a theme.

A chart sets its own colours and data; what grows on stage is the same everywhere: tick
labels, axis titles, legends and value labels take the theme's font size, and lines and
reference lines are at least ``theme.line_px`` wide (back to the width a plot chose when
the normal theme returns). The window applies it to every view after the view's own
``apply_theme``.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QFont, QPen
from PySide6.QtWidgets import QWidget

from ..theme import Theme, min_text_pt

NORMAL_WIDTH = "_gemmscope_normal_width"  # the pen width a plot item chose itself
SET_WIDTH = "_gemmscope_set_width"  # the width _widened gave it last
OWN_FONT = "_gemmscope_own_font"  # a text item's font before the stage


TICK_SHARE = 0.8  # tick labels, legends and value labels: this share of the body type


COMPACT = "gemmscope_compact_ticks"  # a plot with this True: tick labels at the floor


def plot_font(theme: Theme, compact: bool = False) -> QFont | None:
    """The font of tick labels, legends and value labels; None: pyqtgraph's own (normal).
    ``compact``: the theme's smallest type (short strips, the stage's telemetry: a label
    more per axis)."""
    if theme.name == "normal":
        return None
    font = QFont()
    if compact and theme.min_text_px:
        font.setPointSizeF(min_text_pt(theme))
    else:
        font.setPointSize(round(theme.font_pt * TICK_SHARE))
    return font


def title_font(theme: Theme) -> QFont:
    """The font of axis titles (the body type)."""
    font = QFont()
    if theme.name != "normal":
        font.setPointSize(theme.font_pt)
    return font


def style_plots(root: QWidget, theme: Theme) -> None:
    """Apply the theme's sizes to every plot in ``root`` (``root`` included)."""
    plots = root.findChildren(pg.PlotWidget)
    if isinstance(root, pg.PlotWidget):
        plots.append(root)
    for plot in plots:
        # a chart that sizes its own axes for the theme (chart_base.Chart) keeps them
        style_plot(plot.getPlotItem(), theme, axes=not getattr(plot, "styles_axes", False),
                   compact=bool(plot.property(COMPACT)))


def style_plot(item: pg.PlotItem, theme: Theme, axes: bool = True,
               compact: bool = False) -> None:
    font = plot_font(theme, compact)
    size = f"{font.pointSizeF():g}pt" if font is not None else "9pt"  # 9pt: pyqtgraph's
    for name in ("left", "bottom", "right", "top") if axes else ():
        axis = item.getAxis(name)
        axis.setTickFont(font)
        if axis.labelText or axis.labelUnits:  # the title takes the size, keeps its text
            style = {k: v for k, v in axis.labelStyle.items() if k != "font-size"}
            if font is not None:
                style["font-size"] = f"{theme.font_pt}pt"
            axis.labelStyle = style
            # the item's own font too: one made on stage resolved the stage's type from the
            # application font and kept it after the stage (the Code tab's mix chart)
            axis.label.setFont(font if font is not None else QFont())
            axis.setLabel(axis.labelText, axis.labelUnits, axis.labelUnitPrefix, **style)
    legend = item.legend
    if legend is not None and not getattr(legend, "styled_by_owner", False):
        remake_legend(legend, size)
    for child in item.items:
        if isinstance(child, pg.TextItem):  # its own font back in the normal theme
            if getattr(child, "styled_by_owner", False):
                continue  # its chart sets its type (chart_base.Chart.apply_theme)
            if not hasattr(child, OWN_FONT):
                setattr(child, OWN_FONT, QFont(child.textItem.font()))
            child.setFont(font if font is not None else getattr(child, OWN_FONT))
        elif isinstance(child, pg.PlotDataItem):
            pen = child.opts.get("pen")
            if pen is not None:
                child.setPen(_widened(child, pg.mkPen(pen), theme))
        elif isinstance(child, pg.InfiniteLine):  # reference lines: max clock, power limit
            child.setPen(_widened(child, QPen(child.pen), theme))
            if child.label is not None:
                child.label.setFont(font if font is not None else QFont())


def remake_legend(legend: pg.LegendItem, size: str) -> None:
    """Every entry of a pyqtgraph legend made again in type ``size`` (set in place, its
    columns kept the width of the type they had: leaving the stage kept them wide)."""
    entries = [(sample.item, label.text) for sample, label in legend.items]
    legend.opts["labelTextSize"] = size
    legend.clear()
    for plotted, text in entries:
        legend.addItem(plotted, text)


def _widened(item: object, pen: QPen, theme: Theme) -> QPen:
    """``pen`` at least ``theme.line_px`` wide on stage; its own width in the normal theme.

    Its own width is what the chart last set itself: the width found now, unless it is the
    width this function set last time (then the chart has not touched it since). A chart
    that draws its pens for the theme (its ``apply_theme`` runs first) keeps them, and
    leaving the stage never keeps the stage's width."""
    found = pen.widthF()
    last = getattr(item, SET_WIDTH, None)
    own = getattr(item, NORMAL_WIDTH, found) if last is not None and found == last else found
    setattr(item, NORMAL_WIDTH, own)
    pen.setWidthF(own if theme.name == "normal" else max(own, float(theme.line_px)))
    setattr(item, SET_WIDTH, pen.widthF())
    return pen

"""What the layout tests look for in a shown window: widgets that stick out of the window
or out of the parent that clips them, and texts that are cut without a tooltip (labels,
buttons, table cells and headers, and the texts the animated canvases paint).

Each finding is one line naming the widget, so a failure says what to fix.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontInfo, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QGraphicsTextItem,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenuBar,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QStyle,
    QStyleOptionButton,
    QTabBar,
    QTableView,
    QTextEdit,
    QWidget,
)

from gemmscope.app.plots.side_legend import SideLegend


def _name(w: QWidget) -> str:
    text = ""
    if isinstance(w, (QLabel, QAbstractButton)):
        text = f" {w.text()[:40]!r}"
    parents = []
    p = w.parentWidget()
    while p is not None and len(parents) < 3:
        parents.append(p.objectName() or type(p).__name__)
        p = p.parentWidget()
    return f"{type(w).__name__} {w.objectName()!r}{text} in {'/'.join(parents)}"


def _scrolled(w: QWidget, window: QWidget) -> bool:
    """Inside a scroll area's viewport: its content may be larger than the window."""
    p = w.parentWidget()
    while p is not None and p is not window:
        parent = p.parentWidget()
        if isinstance(parent, QAbstractScrollArea) and p is parent.viewport():
            return True
        p = parent
    return False


def shown_widgets(window: QWidget) -> list[QWidget]:
    """The window's widgets a person sees now (not in other windows, not hidden)."""
    return [w for w in window.findChildren(QWidget)
            if w.isVisible() and w.window() is window and w.width() > 0 and w.height() > 0]


def sticking_out(window: QWidget) -> list[str]:
    """Widgets that extend past the window, or past the parent that clips them."""
    out = []
    bounds = window.rect()
    for w in shown_widgets(window):
        parent = w.parentWidget()
        if _scrolled(w, window):
            # past the window is scrolled to; past its parent is cut all the same, but
            # for the content of the scroll area itself (the viewport's child)
            area = parent.parentWidget() if parent is not None else None
            if isinstance(area, QAbstractScrollArea) and parent is area.viewport():
                continue
        else:
            rect = QRect(w.mapTo(window, QPoint(0, 0)), w.size())
            if not bounds.contains(rect):
                out.append(f"past the window: {_name(w)} at {rect.getRect()} in "
                           f"{bounds.size()}")
                continue
        if parent is not None and parent is not window and not w.isWindow():
            if not parent.rect().contains(w.geometry()):
                out.append(f"cut by its parent: {_name(w)} {w.geometry().getRect()} in "
                           f"{parent.size().toTuple()}")
    return out


def unreachable_scrolled(window: QWidget) -> list[str]:
    """Scroll areas whose content is larger than their viewport on a side whose scroll
    bar is off: that part of the content is cut, not scrolled to (the check above lets
    scrolled content be larger than the window)."""
    out = []
    for area in window.findChildren(QAbstractScrollArea):
        inner = area.widget() if hasattr(area, "widget") else None
        if not isinstance(inner, QWidget) or not area.isVisible() or area.window() is not window:
            continue
        view = area.viewport().size()
        for side, need, room, policy in (
                ("wide", inner.width(), view.width(), area.horizontalScrollBarPolicy()),
                ("tall", inner.height(), view.height(), area.verticalScrollBarPolicy())):
            if need > room and policy == Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
                out.append(f"cut, its scroll bar off: {_name(inner)} is {need} px {side} in "
                           f"{room}")
    return out


def _button_room(b: QAbstractButton) -> int:
    """The width the style gives a button's text (and icon)."""
    opt = QStyleOptionButton()
    opt.initFrom(b)
    opt.text = b.text()
    element = (QStyle.SubElement.SE_CheckBoxContents if isinstance(b, QCheckBox) else
               QStyle.SubElement.SE_RadioButtonContents if isinstance(b, QRadioButton) else
               QStyle.SubElement.SE_PushButtonContents)
    room = b.style().subElementRect(element, opt, b).width()
    if isinstance(b, QPushButton):
        room -= 2 * b.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, opt, b) // 2
    return room


def cut_texts(window: QWidget) -> list[str]:
    """Texts wider (or, wrapped, taller) than the room they have, with no tooltip."""
    out = []
    for w in shown_widgets(window):
        if w.toolTip():
            continue
        if isinstance(w, QLabel) and w.text() and w.pixmap().isNull():
            if w.wordWrap():
                need = w.heightForWidth(w.width())
                if need > w.height():
                    out.append(f"wrapped text cut: {_name(w)} needs {need} px of height, "
                               f"has {w.height()}")
            elif w.minimumSizeHint().width() > w.width():
                out.append(f"text cut: {_name(w)} needs {w.minimumSizeHint().width()} px, "
                           f"has {w.width()}")
        elif isinstance(w, QAbstractButton) and w.text():
            need = max(w.fontMetrics().horizontalAdvance(line)
                       for line in w.text().replace("&", "").split("\n"))
            if need > _button_room(w):
                out.append(f"button text cut: {_name(w)} needs {need} px, "
                           f"has {_button_room(w)}")
        elif isinstance(w, QTableView):
            out += _cut_cells(w)
        painted = getattr(w, "cut_texts", None)
        if isinstance(painted, list) and painted:
            out.append(f"painted text cut: {_name(w)}: {painted[:3]}")
    return out


def _cut_cells(table: QTableView) -> list[str]:
    """Cells and headers cut: wider than their column (allowed where the table cuts them
    with "…" and shows the whole text as a tooltip), or past the table's edge."""
    out = []
    header = table.horizontalHeader()
    model = table.model()
    elides = bool(table.property("tooltips_cut_cells")) and \
        table.textElideMode() != Qt.TextElideMode.ElideNone
    shown = [c for c in range(model.columnCount()) if not table.isColumnHidden(c)]
    right = sum(table.columnWidth(c) for c in shown)
    scrolls = table.horizontalScrollBar().isVisible()
    if right > table.viewport().width() + 1 and not scrolls:
        out.append(f"columns past the edge of {_name(table)}: {right} px in "
                   f"{table.viewport().width()}")
    if right > table.viewport().width() + 1 and scrolls:
        out.append(f"columns cut by the edge of {_name(table)} (scrolled sideways): "
                   f"{right} px in {table.viewport().width()}")
    for col in shown:
        width = table.columnWidth(col)
        if table.sizeHintForColumn(col) > width and not elides:
            out.append(f"cells cut: column {col} of {_name(table)}: need "
                       f"{table.sizeHintForColumn(col)} px, have {width}")
        if header.isVisible() and header.sectionSizeFromContents(col).width() > width:
            text = model.headerData(col, header.orientation())
            out.append(f"header cut: {text!r} of {_name(table)}")
    return out


def layout_problems(window: QWidget) -> list[str]:
    return sticking_out(window) + unreachable_scrolled(window) + cut_texts(window)


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""

    def luminance(c: QColor) -> float:
        def channel(v: int) -> float:
            s = v / 255
            return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(
            c.blue())

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def low_contrast(window: QWidget, least: float = 4.5) -> list[str]:
    """Shown labels and buttons whose text colour is too close to their background's."""
    out = []
    for w in shown_widgets(window):
        if isinstance(w, (QLabel, QAbstractButton)) and w.text():
            pal = w.palette()
            fg, bg = pal.color(w.foregroundRole()), pal.color(w.backgroundRole())
            if contrast(fg, bg) < least:
                out.append(f"low contrast {contrast(fg, bg):.1f}: {_name(w)} "
                           f"{fg.name()} on {bg.name()}")
    return out


# ------------------------------------------------------------------ the stage's rules
def view_share(window: QWidget) -> float:
    """The share of the window's area that the view on screen (the current tab) gets."""
    view = window.tabs.currentWidget()
    area = window.width() * window.height()
    return view.width() * view.height() / area if area and view is not None else 0.0


def _px(font: QFont) -> float:
    """A font's em in pixels, as it renders (points at the screen's resolution)."""
    if font.pixelSize() > 0:
        return float(font.pixelSize())
    screen = QGuiApplication.primaryScreen()
    dpi = screen.logicalDotsPerInchY() if screen is not None else 96.0
    return font.pointSizeF() * dpi / 72.0 if font.pointSizeF() > 0 else \
        float(QFontInfo(font).pixelSize())


def _document_px(item: QGraphicsTextItem) -> float | None:
    """The smallest type of a text item's text (its HTML may set sizes of its own)."""
    if not item.toPlainText().strip():
        return None
    doc = item.document()
    smallest = None
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.text().strip():
                fmt = frag.charFormat()
                font = QFont(item.font())
                if fmt.fontPointSize() > 0:
                    font.setPointSizeF(fmt.fontPointSize())
                elif fmt.font().pixelSize() > 0:
                    font.setPixelSize(fmt.font().pixelSize())
                px = _px(font)
                smallest = px if smallest is None else min(smallest, px)
            it += 1
        block = block.next()
    return smallest


def _plot_texts(plot: pg.PlotWidget) -> list[tuple[float, str]]:
    out = []
    for item in plot.scene().items():
        if not item.isVisible() or not all(p.isVisible() for p in _ancestors(item)):
            continue
        if isinstance(item, QGraphicsTextItem):
            px = _document_px(item)
            if px is not None:
                out.append((px, f"text {item.toPlainText()[:30]!r}"))
        elif isinstance(item, pg.AxisItem) and item.style.get("showValues", True):
            font = item.style.get("tickFont") or item.font()
            if _axis_has_text(item):
                out.append((_px(font), f"{item.orientation} axis ticks"))
        elif isinstance(item, SideLegend) and item.entries:
            out.append((_px(item.font_), "legend"))
    return [(px, f"{type(plot).__name__} {getattr(plot, 'base_title', '')!r}: {what}")
            for px, what in out]


def _ancestors(item):
    p = item.parentItem()
    while p is not None:
        yield p
        p = p.parentItem()


def _axis_has_text(axis: pg.AxisItem) -> bool:
    ticks = axis._tickLevels
    if ticks is not None:
        return any(text for level in ticks for _, text in level)
    return axis.height() > 1 and axis.width() > 1


def text_sizes(window: QWidget) -> list[tuple[float, str]]:
    """(em in px, what) of every text shown in the window: widgets' own text, item views'
    rows, the texts of every plot, and what the custom-painted canvases painted last."""
    out: list[tuple[float, str]] = []
    for w in shown_widgets(window):
        text = ""
        if isinstance(w, QLabel) and w.pixmap().isNull():
            text = w.text()
        elif isinstance(w, QAbstractButton):
            text = w.text()
        elif isinstance(w, QComboBox):
            text = w.currentText()
        elif isinstance(w, (QLineEdit, QAbstractSpinBox)):
            text = w.text()
        elif isinstance(w, QTabBar):
            text = "".join(w.tabText(i) for i in range(w.count()))
        elif isinstance(w, (QMenuBar, QHeaderView)):
            text = "menu" if isinstance(w, QMenuBar) else "header"
        elif isinstance(w, QAbstractItemView) and w.model() is not None \
                and w.model().rowCount():
            text = "rows"
        elif isinstance(w, (QPlainTextEdit, QTextEdit)):
            text = w.toPlainText()[:1]
        if text.strip():
            out.append((_px(w.font()), _name(w)))
        if isinstance(w, pg.PlotWidget):
            out += _plot_texts(w)
        smallest = getattr(w, "smallest_pt", None)
        if isinstance(smallest, float) and smallest > 0:
            font = QFont(w.font())
            font.setPointSizeF(smallest)
            out.append((_px(font), f"painted in {_name(w)}"))
    return out


def small_texts(window: QWidget, least_px: float) -> list[str]:
    """Texts shown smaller than ``least_px`` pixels (em)."""
    return [f"{px:.1f} px: {what}" for px, what in text_sizes(window) if px < least_px - 0.25]

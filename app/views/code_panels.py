"""The Code view's text panels: CUDA source with highlighting, a side-by-side diff and the
main loop's SASS coloured by instruction class.

All of them are read-only QPlainTextEdits: a recording's text is data, never markup. Each
remembers what it drew (the diff rows, the SASS lines, the selected ones) for tests.
"""

from __future__ import annotations

import re

from PySide6.QtCore import Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QResizeEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QTextEdit, QWidget

from ...kernels.toolchain import SassLine
from ..core.builds import DiffRow
from ..theme import DIFF_COLORS, SASS_CLASS_COLORS, SASS_SELECTION, SYNTAX_COLORS

KEYWORDS = (
    "auto bool break case char const constexpr continue default do double else enum "
    "extern float for goto if inline int long namespace return short signed sizeof "
    "static static_assert struct switch template typename typedef union unsigned using "
    "void volatile while __global__ __device__ __host__ __shared__ __constant__ "
    "__restrict__ __forceinline__ __launch_bounds__ __syncthreads __nv_bfloat16 half "
    "float4 float2 int4 uint32_t uint64_t int32_t size_t asm true false nullptr"
).split()


def _format(color: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    return fmt


class CudaHighlighter(QSyntaxHighlighter):
    """Keywords, numbers, strings, preprocessor lines and comments (// and /* */)."""

    RULES = (
        (re.compile(r"\b(?:" + "|".join(map(re.escape, KEYWORDS)) + r")\b"), "keyword"),
        (re.compile(r"\b(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?)[uUlLfF]*\b"),
         "number"),
        (re.compile(r"^\s*#\s*\w+"), "preprocessor"),
        (re.compile(r'"(?:[^"\\]|\\.)*"'), "string"),
        (re.compile(r"//.*$"), "comment"),
    )

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.formats = {name: _format(c, bold=name == "keyword", italic=name == "comment")
                        for name, c in SYNTAX_COLORS.items()}

    def highlightBlock(self, text: str) -> None:
        for pattern, name in self.RULES:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), self.formats[name])
        # block comments, carried over lines by the block state (1: inside one)
        inside = self.previousBlockState() == 1
        start = 0 if inside else text.find("/*")
        search = 0 if inside else start + 2
        self.setCurrentBlockState(0)
        while start >= 0:
            end = text.find("*/", search)
            if end < 0:
                self.setCurrentBlockState(1)
                self.setFormat(start, len(text) - start, self.formats["comment"])
                break
            self.setFormat(start, end + 2 - start, self.formats["comment"])
            start = text.find("/*", end + 2)
            search = start + 2


def mono() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


# monospaced families of compact line height that many systems have; on stage the code's
# lines are what the room reads, and more of them fit in one of these than in a system
# default such as Noto Sans Mono (26 px a line at 14 pt against DejaVu Sans Mono's 22:
# 17 lines of SASS at 1280x720 on stage where the rule is 20)
COMPACT_MONO = ("DejaVu Sans Mono", "Liberation Mono", "Menlo", "Consolas", "Cascadia Mono")


def stage_mono_family(pt: float) -> str:
    """The monospaced family that fits the most lines at ``pt`` points: the system's
    fixed font unless an installed one of COMPACT_MONO has a smaller line height."""
    own = mono().family()
    best, best_h = own, _line_height(own, pt)
    for family in COMPACT_MONO:
        if family != own and QFontDatabase.hasFamily(family):
            h = _line_height(family, pt)
            if h < best_h:
                best, best_h = family, h
    return best


def _line_height(family: str, pt: float) -> float:
    font = QFont(family)
    font.setPointSizeF(pt)
    return QFontMetricsF(font).lineSpacing()


LINES_ABOVE = 3  # shown above a line gone to: what leads to it


class TextPanel(QPlainTextEdit):
    """A read-only, unwrapped, monospaced text panel."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(mono())
        self._text = ""  # what set_text last put in the document
        self._colors: dict[int, str] = {}  # block number -> background (paint_lines)
        self._shown_range: tuple[int, int] | None = None  # the blocks given selections

    def set_text(self, text: str) -> bool:
        """The document's text, set only when it changed (a document made again, laid
        out and highlighted, cost up to ~10 ms); whether it changed."""
        if text == self._text and self.document().characterCount() == len(text) + 1:
            return False
        self._text = text
        self.setPlainText(text)
        return True

    def paint_lines(self, colors: dict[int, str]) -> None:
        """Background colours of whole lines (block number -> colour). Only the lines in
        view are handed to Qt as extra selections, again when the view scrolls or
        resizes: QPlainTextEdit walks every extra selection on every repaint, so a
        SASS listing of 2,800 coloured lines cost ~100 ms to set and ~5 ms a repaint."""
        self._colors = dict(colors)
        self._shown_range = None
        self._select_visible()

    def line_color(self, block_no: int) -> QColor | None:
        """The background colour painted on a line (None: none)."""
        color = self._colors.get(block_no)
        return None if color is None else QColor(color)

    def _select_visible(self) -> None:
        colors = self._colors
        first = self.firstVisibleBlock().blockNumber()
        rows = self.viewport().height() // max(1, self.fontMetrics().lineSpacing()) + 2
        span = (first, first + rows)
        if span == self._shown_range:
            return
        self._shown_range = span
        selections = []
        doc = self.document()
        for block_no in range(max(0, first), first + rows):
            color = colors.get(block_no)
            if color is None:
                continue
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(QColor(color))
            sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            sel.cursor = QTextCursor(doc.findBlockByNumber(block_no))
            selections.append(sel)
        self.setExtraSelections(selections)

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self._select_visible()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._select_visible()


class SourcePanel(TextPanel):
    """The level's source; clicking a line says which (1-based). Its lines may carry a
    heat colour (per-line counters summed per source line)."""

    line_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.highlighter = CudaHighlighter(self.document())
        self.heat: dict[int, str] = {}  # block number -> heat colour
        self.cursorPositionChanged.connect(
            lambda: self.line_clicked.emit(self.textCursor().blockNumber() + 1))

    def show_text(self, text: str) -> None:
        self.blockSignals(True)
        self.set_text(text)
        self.blockSignals(False)
        self.set_heat({})

    def set_heat(self, colors: dict[int, str]) -> None:
        self.heat = colors
        self.paint_lines(colors)

    def go_to_line(self, line_no: int) -> None:
        """The cursor on ``line_no`` (1-based), the line a few lines below the top: it
        stays in view when the panel is resized after (a talk's scene, a screenshot),
        with its context above it."""
        cursor = QTextCursor(self.document().findBlockByNumber(line_no - 1))
        self.setTextCursor(cursor)  # emits line_clicked
        # (a plain text edit scrolls by lines: the first line shown)
        self.verticalScrollBar().setValue(max(0, line_no - 1 - LINES_ABOVE))


class DiffPanel(QWidget):
    """Two aligned text panels: the previous level left, this one right."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.left, self.right = SourcePanel(), SourcePanel()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.left)
        layout.addWidget(self.right)
        self.rows: list[DiffRow] = []
        self.left.verticalScrollBar().valueChanged.connect(
            self.right.verticalScrollBar().setValue)
        self.right.verticalScrollBar().valueChanged.connect(
            self.left.verticalScrollBar().setValue)

    def show_rows(self, rows: list[DiffRow]) -> None:
        self.rows = rows
        self.left.show_text("\n".join(r.left for r in rows))
        self.right.show_text("\n".join(r.right for r in rows))
        left = {i: DIFF_COLORS["delete" if r.tag == "delete" else "replace"]
                for i, r in enumerate(rows) if r.tag in ("delete", "replace")}
        right = {i: DIFF_COLORS["insert" if r.tag == "insert" else "replace"]
                 for i, r in enumerate(rows) if r.tag in ("insert", "replace")}
        self.left.paint_lines(left)
        self.right.paint_lines(right)

    def show_message(self, text: str) -> None:
        self.rows = []
        self.left.show_text(text)
        self.right.show_text("")
        self.left.paint_lines({})
        self.right.paint_lines({})


class SassHighlighter(QSyntaxHighlighter):
    """Colours each instruction's mnemonic by its class (one class per line, given)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.classes: list[str] = []
        self.formats = {c: _format(color, bold=True) for c, color in SASS_CLASS_COLORS.items()}

    def highlightBlock(self, text: str) -> None:
        n = self.currentBlock().blockNumber()
        if n >= len(self.classes):
            return
        start = text.find("*/") + 3  # after the offset (and the value column, if any)
        m = re.compile(r"(@!?U?P\w+\s+)?(\S+)").match(text, start)
        if m is not None:
            self.setFormat(m.start(2), m.end(2) - m.start(2), self.formats[self.classes[n]])


class SassPanel(TextPanel):
    """The main loop's instructions, one a line: offset, instruction, innermost source,
    and, with per-line counters, the chosen metric's value (its line in a heat colour)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.highlighter = SassHighlighter(self.document())
        self.lines: list[SassLine] = []
        self.selected: list[int] = []  # indexes into lines
        self.values: list[float | None] | None = None  # the metric per line, or none shown
        self.heat: dict[int, str] = {}  # line index -> heat colour

    def show_lines(self, lines: list[SassLine], values: list[float | None] | None = None,
                   heat: dict[int, str] | None = None) -> None:
        self.lines = lines
        self.selected = []
        self.values = values
        self.heat = heat or {}
        classes = [ln.op_class for ln in lines]
        width = max((len(ln.text) for ln in lines), default=0)
        rows = [f"/*{ln.offset:05x}*/ {ln.text:<{width}}  // " + (
                    f"{ln.source[0].rsplit('/', 1)[-1]}:{ln.source[1]}" if ln.source else "")
                for ln in lines]
        if values is not None:  # the value first, where the eye finds it beside the heat
            cells = ["n/a" if v is None else f"{v:,.0f}" for v in values]
            v_width = max((len(c) for c in cells), default=0)
            rows = [f"{c:>{v_width}} │ {r}" for c, r in zip(cells, rows, strict=True)]
        text = "\n".join(rows)
        if classes != self.highlighter.classes or text != self._text:
            self.highlighter.classes = classes  # (before the text: it colours the lines)
            self._text = ""
            self.set_text(text)
        self.paint_lines(self.heat)

    def set_heat(self, values: list[float | None] | None, heat: dict[int, str]) -> None:
        """Show the metric's values and heat colours on the lines shown (None: none)."""
        if self.lines:
            chosen = self.selected
            self.show_lines(self.lines, values, heat)
            if chosen:
                self.select(chosen)

    def show_message(self, text: str) -> None:
        self.lines, self.selected, self.values, self.heat = [], [], None, {}
        self.highlighter.classes = []
        self.set_text(text)
        self.paint_lines({})

    def select(self, indexes: list[int]) -> None:
        self.selected = indexes
        self.paint_lines(self.heat | {i: SASS_SELECTION for i in indexes})
        if indexes:
            self.setTextCursor(QTextCursor(self.document().findBlockByNumber(indexes[0])))
            self.centerCursor()

    def mnemonic_color(self, index: int) -> QColor | None:
        """The colour the highlighter drew the line's mnemonic in (read back)."""
        block = self.document().findBlockByNumber(index)
        formats = block.layout().formats()
        return formats[0].format.foreground().color() if formats else None

"""Where the warp-specialized picture (tiling_pipeline.py) puts each of its parts, measured
from the texts it has to draw rather than from fixed fractions of the canvas.

Two arrangements share one header band (the level's configuration, then the selected SM's
walk over tiles) and differ below it:

- ``stacked``: the tile map on the left; on the right the pipeline row (producer, stage
  ring, consumers one above the other) over the zoom of the block tile. It needs height.
- ``columns``: map | pipeline (producer and ring over the consumers side by side) | zoom,
  for short, wide canvases (a talk's caption below the view, a 1280x720 stage).

:func:`arrange` tries the canvas font's sizes from the largest down to the floor
(painted_text.TEXT_SCALES, never under the theme's smallest text), and at each size both
arrangements; the first size at which one of them gives every text its measured room and
leaves the map and the zoom a useful size wins (the larger zoom where both do). So no
label and no aside has to be left out where the picture can be drawn at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from .painted_text import TEXT_SCALES

GAP = 12.0  # between the parts
PAD = 4.0  # inside a box, around its text
ARROW = 22.0  # room for an arrow between two boxes
MIN_BOX_PX = 28.0  # the stage boxes' smallest height
MIN_LINES_OF_PICTURE = 4  # the map and the zoom at least this many text lines high
WRAP = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap)
SPLITS = 24  # widths tried for the map column against the zoom column


@dataclass(frozen=True, slots=True)
class PipelineTexts:
    """What the picture writes, each in its longest form (so the layout does not move
    while the animation steps)."""

    header: tuple[str, ...]
    map_caption: str
    map_notes: tuple[str, ...]
    producer_heads: tuple[str, ...]  # "WG 0: producer\n<what it does now>"
    producer_details: str
    ring_caption: str
    stage_heads: tuple[str, ...]  # "s0 T1K1", ...
    lamps: tuple[str, ...]  # "F● E0/2", ...
    legend: str
    consumer_heads: tuple[str, ...]  # a consumer's name and what it does
    consumer_lines: tuple[str, ...]  # every line a consumer's box may hold
    consumer_rows: int  # lines in a consumer's box
    thread: tuple[str, ...]  # the selected thread's line, its forms
    operands: str  # "A 128x64\nBt 256x64\n(K across)"


@dataclass(frozen=True, slots=True)
class PipelineLayout:
    arrangement: str  # "stacked" or "columns"
    point_size: float  # the size every text was measured at
    spacing: float  # one line of wrapped text at that size
    line: float  # one row of a single-line label (spacing and a little air)
    header: QRectF
    map_caption: QRectF
    map: QRectF
    map_notes: QRectF
    producer: QRectF
    producer_head_px: float  # the producer's head text height inside its box
    consumer_head_px: float  # a consumer's head text height inside its box
    ring_caption: QRectF
    stages: tuple[QRectF, ...]
    legend: QRectF
    consumers: tuple[QRectF, ...]
    thread: QRectF
    a: QRectF
    b: QRectF
    c: QRectF
    operands: QRectF
    arrows: tuple[tuple[float, float, float, float], ...]  # x0, y0, x1, y1


class _Measure:
    """Texts measured in one font."""

    def __init__(self, font: QFont) -> None:
        self.fm = QFontMetricsF(font)
        self.spacing = self.fm.lineSpacing()
        self.line = self.fm.height() + PAD

    def width(self, *texts: str) -> float:
        return max((self.fm.horizontalAdvance(part) for t in texts for part in t.split("\n")),
                   default=0.0) + 1.0

    def height(self, text: str, width: float) -> float:
        """Height of ``text`` wrapped in ``width`` (as painted_text draws it)."""
        if width <= 1:
            return math.inf
        need = self.fm.boundingRect(QRectF(0, 0, width, 1e6), WRAP, text)
        if need.width() > width + 0.5:  # a word longer than the line
            return math.inf
        return need.height() + 1.0

    def tallest(self, texts: tuple[str, ...], width: float) -> float:
        return max((self.height(t, width) for t in texts), default=0.0)


def _sizes(base_pt: float, floor_pt: float) -> list[float]:
    sizes = [base_pt * s for s in TEXT_SCALES if base_pt * s >= floor_pt]
    return sizes or [max(base_pt, floor_pt)]


def arrange(width: float, height: float, font: QFont, floor_pt: float, texts: PipelineTexts,
           n_stages: int, n_consumers: int, tile_aspect: float) -> PipelineLayout:
    """The picture's parts in a ``width`` x ``height`` canvas; ``tile_aspect`` is the block
    tile's rows over its columns (the zoom keeps it)."""
    best: PipelineLayout | None = None
    sizes = _sizes(font.pointSizeF(), max(floor_pt, 1.0))
    for pt in sizes:
        f = QFont(font)
        f.setPointSizeF(pt)
        m = _Measure(f)
        found = [lay for lay in (_stacked(width, height, m, pt, texts, n_stages, n_consumers,
                                          tile_aspect),
                                 _columns(width, height, m, pt, texts, n_stages, n_consumers,
                                          tile_aspect)) if lay is not None]
        if found:
            return max(found, key=lambda lay: lay.c.width() * lay.c.height())
        if pt == sizes[-1]:  # nothing fits even at the floor: the roomier of the two
            best = _stacked(width, height, m, pt, texts, n_stages, n_consumers, tile_aspect,
                            strict=False)
    assert best is not None
    return best


def _header(width: float, m: _Measure, texts: PipelineTexts) -> QRectF:
    h = m.tallest(texts.header, width - 20)
    return QRectF(10, 4, width - 20, min(h, 4 * m.spacing + 1) if math.isfinite(h) else
                  2 * m.spacing)


def _map_column(left: float, top: float, w: float, h: float, m: _Measure,
                texts: PipelineTexts) -> tuple[QRectF, QRectF, QRectF, float]:
    """(caption, map, notes, the map's side) in a column; side < 0: no room."""
    cap = m.height(texts.map_caption, w)
    notes = m.tallest(texts.map_notes, w)
    side = min(w, h - cap - notes - 2 * PAD)
    caption = QRectF(left, top, w, cap)
    square = QRectF(left, top + cap + PAD, max(side, 0.0), max(side, 0.0))
    note = QRectF(left, square.bottom() + PAD, w, notes)
    return caption, square, note, side if math.isfinite(side) else -1.0


def _zoom(left: float, top: float, w: float, h: float, m: _Measure, texts: PipelineTexts,
          aspect: float) -> tuple[QRectF, QRectF, QRectF, QRectF, QRectF] | None:
    """(thread line, A strip, B strip, C, operands label) in a ``w`` x ``h`` area: the
    thread's line on top, B above C, A left of C, the label in the corner between."""
    thread_h = m.tallest(texts.thread, w)
    op_w = m.width(texts.operands) + 2 * PAD
    op_h = m.height(texts.operands, op_w)
    a_w = max(op_w, 0.14 * w)
    if not math.isfinite(thread_h + op_h):
        return None
    avail_w = w - a_w - PAD
    avail_h = h - thread_h - PAD - op_h - PAD
    if avail_w <= 0 or avail_h <= 0:
        return None
    cw = min(avail_w, avail_h / aspect)
    ch = cw * aspect
    thread = QRectF(left, top, w, thread_h)
    b = QRectF(left + a_w + PAD, thread.bottom() + PAD, cw, op_h)
    c = QRectF(b.left(), b.bottom() + PAD, cw, ch)
    a = QRectF(left, c.top(), a_w, ch)
    return thread, a, b, c, QRectF(left, b.top(), a_w, op_h)


def _ring(m: _Measure, texts: PipelineTexts, n_stages: int) -> tuple[float, float]:
    """The stage ring's least width (its legend's lines whole under it) and the height of
    its texts (caption, heads, lamps)."""
    per = m.width(*texts.stage_heads, *texts.lamps) + 6
    return max(n_stages * per, m.width(texts.ring_caption, texts.legend)), 3 * m.line


def _producer_width(m: _Measure, texts: PipelineTexts) -> float:
    # its name whole; what it does and its details wrap under it
    return m.width(*(h.split("\n")[0] for h in texts.producer_heads)) + 2 * PAD + 6


def _producer_height(m: _Measure, texts: PipelineTexts, w: float) -> tuple[float, float]:
    head = m.tallest(texts.producer_heads, w - 2 * PAD)
    return head, head + PAD + m.height(texts.producer_details, w - 2 * PAD) + 2 * PAD


def _consumer_box(m: _Measure, texts: PipelineTexts) -> tuple[float, float, float]:
    """(width, height, the head's height) of a consumer's box: every line whole."""
    w = m.width(*texts.consumer_lines) + 2 * PAD
    block = m.height("\n".join(["Xg"] * texts.consumer_rows), 1e6)
    return w, block + 2 * PAD + 2, m.tallest(texts.consumer_heads, w)


def _stage_rects(x0: float, x1: float, top: float, h: float, n: int) -> tuple[QRectF, ...]:
    w = (x1 - x0) / n
    return tuple(QRectF(x0 + s * w + 3, top, w - 6, h) for s in range(n))


def _stacked(width: float, height: float, m: _Measure, pt: float, texts: PipelineTexts,
             n_stages: int, n_consumers: int, aspect: float, strict: bool = True
             ) -> PipelineLayout | None:
    header = _header(width, m, texts)
    r = QRectF(10, header.bottom() + PAD + 4, width - 20, height - header.bottom() - 18)
    ring_w, ring_text_h = _ring(m, texts, n_stages)
    prod_w = _producer_width(m, texts)
    cons_w, cons_h, cons_head = _consumer_box(m, texts)
    row_w = prod_w + ring_w + cons_w + 2 * ARROW
    left_w = max(r.width() - row_w - GAP, 0.2 * r.width()) if strict else 0.34 * r.width()
    left_w = min(left_w, 0.4 * r.width())
    right = QRectF(r.left() + left_w + GAP, r.top(), r.width() - left_w - GAP, r.height())
    extra = max(right.width() - row_w, 0.0)
    prod_w += 0.2 * extra
    ring_w += 0.5 * extra
    cons_w += 0.3 * extra
    head_h, prod_h = _producer_height(m, texts, prod_w)
    x_ring = right.left() + prod_w + ARROW
    legend_h = m.height(texts.legend, ring_w + ARROW + cons_w)
    cons_stack = n_consumers * cons_h + (n_consumers - 1) * PAD
    pipe_h = max(prod_h, ring_text_h + MIN_BOX_PX, cons_stack) + m.line
    box_h = pipe_h - m.line - ring_text_h
    zoom = _zoom(right.left(), right.top() + pipe_h + legend_h + GAP, right.width(),
                 right.bottom() - right.top() - pipe_h - legend_h - GAP, m, texts, aspect)
    caption, square, notes, side = _map_column(r.left(), r.top(), left_w, r.height(), m, texts)
    if strict and (zoom is None or side < MIN_LINES_OF_PICTURE * m.line
                   or zoom[3].height() < MIN_LINES_OF_PICTURE * m.line
                   or right.width() < row_w - 0.5):
        return None
    if zoom is None:
        zoom = (QRectF(), QRectF(), QRectF(), QRectF(), QRectF())
    top = right.top() + m.line  # the ring's caption above
    stages = _stage_rects(x_ring, x_ring + ring_w, top + m.line, box_h, n_stages)
    producer = QRectF(right.left(), top, prod_w, max(prod_h, box_h + 2 * m.line))
    cons_x = x_ring + ring_w + ARROW
    consumers = tuple(QRectF(cons_x, top + i * (cons_h + PAD), right.right() - cons_x, cons_h)
                      for i in range(n_consumers))
    y = producer.center().y()
    return PipelineLayout(
        "stacked", pt, m.spacing, m.line, header, caption, square, notes, producer, head_h,
        cons_head,
        QRectF(x_ring, right.top(), right.right() - x_ring, m.line), stages,
        QRectF(x_ring, top + pipe_h - m.line + PAD, ring_w + ARROW + cons_w, legend_h),
        consumers, *zoom,
        arrows=((producer.right() + 2, y, x_ring - 2, y),
                (x_ring + ring_w + 2, y, cons_x - 2, y)))


def _columns(width: float, height: float, m: _Measure, pt: float, texts: PipelineTexts,
             n_stages: int, n_consumers: int, aspect: float) -> PipelineLayout | None:
    header = _header(width, m, texts)
    r = QRectF(10, header.bottom() + PAD + 4, width - 20, height - header.bottom() - 18)
    ring_w, ring_text_h = _ring(m, texts, n_stages)
    prod_w = _producer_width(m, texts)
    cons_w, cons_h, cons_head = _consumer_box(m, texts)
    per_row = min(n_consumers, 2)
    cons_rows = math.ceil(n_consumers / per_row)
    cons_row_w = per_row * cons_w + (per_row - 1) * GAP
    cons_block = cons_rows * cons_h + (cons_rows - 1) * PAD
    top_h = r.height() - cons_block - GAP / 2  # the producer beside the ring and legend
    for widen in range(0, 16):  # a wider producer wraps its texts into fewer lines
        prod_w_try = prod_w + 24 * widen
        mid_w = max(prod_w_try + ARROW + ring_w, cons_row_w)
        head_h, prod_h = _producer_height(m, texts, prod_w_try)
        legend_h = m.height(texts.legend, mid_w - prod_w_try - ARROW)
        box_h = top_h - ring_text_h - PAD - legend_h
        if prod_h <= top_h and box_h >= MIN_BOX_PX:
            break
    else:
        return None
    prod_w = prod_w_try
    ring_w = mid_w - prod_w - ARROW
    box_h = min(box_h, max(MIN_BOX_PX, 4 * m.line))
    rest = r.width() - mid_w - 2 * GAP
    if rest <= 0:
        return None
    best = None
    for i in range(1, SPLITS):
        map_w = rest * (0.15 + 0.55 * i / SPLITS)
        caption, square, notes, side = _map_column(r.left(), r.top(), map_w, r.height(), m,
                                                   texts)
        zoom = _zoom(r.right() - (rest - map_w), r.top(), rest - map_w, r.height(), m, texts,
                     aspect)
        if zoom is None or side < MIN_LINES_OF_PICTURE * m.line \
                or zoom[3].height() < MIN_LINES_OF_PICTURE * m.line:
            continue
        score = min(side, 0.75 * zoom[3].width())  # the zoom a little the larger
        if best is None or score > best[0]:
            best = (score, map_w, caption, square, notes, zoom)
    if best is None:
        return None
    _, map_w, caption, square, notes, zoom = best
    x = r.left() + map_w + GAP
    x_ring = x + prod_w + ARROW
    stages = _stage_rects(x_ring, x_ring + ring_w, r.top() + 2 * m.line, box_h, n_stages)
    legend = QRectF(x_ring, stages[0].bottom() + m.line + PAD, ring_w, legend_h)
    producer = QRectF(x, r.top(), prod_w, max(prod_h, legend.bottom() - r.top()))
    cons_top = producer.bottom() + GAP / 2
    each = (mid_w - (per_row - 1) * GAP) / per_row
    consumers = tuple(QRectF(x + (i % per_row) * (each + GAP),
                             cons_top + (i // per_row) * (cons_h + PAD), each, cons_h)
                      for i in range(n_consumers))
    y = producer.top() + producer.height() / 2
    return PipelineLayout(
        "columns", pt, m.spacing, m.line, header, caption, square, notes, producer, head_h,
        cons_head,
        QRectF(x_ring, r.top(), ring_w, m.line), stages, legend, consumers, *zoom,
        arrows=((producer.right() + 2, y, x_ring - 2, y),))


def least_height(width: float, font: QFont, floor_pt: float, texts: PipelineTexts,
                 n_stages: int, n_consumers: int, tile_aspect: float) -> int:
    """The least canvas height at which the picture has a layout with every text at the
    floor size (what a view gives it before its optional panels); 0: none up to 4000."""
    f = QFont(font)
    f.setPointSizeF(_sizes(font.pointSizeF(), max(floor_pt, 1.0))[-1])
    m = _Measure(f)
    pt = f.pointSizeF()

    def fits(h: float) -> bool:
        return any(build(width, h, m, pt, texts, n_stages, n_consumers, tile_aspect)
                   is not None for build in (_stacked, _columns))

    lo, hi = 100.0, 4000.0
    if not fits(hi):
        return 0
    while hi - lo > 2:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return math.ceil(hi)

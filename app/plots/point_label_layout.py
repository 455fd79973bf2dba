"""Where the names of a chart's points go, in plot pixels (y down): each label takes the
first place, nearest first, around its point that stays inside the plot and clears every
label placed before it, every point and every fixed text (a greedy placement over
candidate offsets with a bounding-box check, in numpy). Beside the point (right, left,
above, below) first; then slid up or down beside it, a half label at a time, and out
sideways where the rows beside it are taken, with a leader line back to the point; the
labels stacked beside one column of points then take their
points' order, so that leaders do not cross. A label with no free place is left out (the
hover still names it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, QSizeF

GAP_PX = 3.0  # between a point's edge and its label
CLEAR_PX = 1.0  # kept between two labels, and between a label and a point
COLUMNS_OUT = 12  # columns, each two label heights wide, a label may move out sideways
OUT_COST = 1.5  # a pixel sideways costs this many pixels up or down


@dataclass(frozen=True, slots=True)
class PlacedLabel:
    """A label's rectangle in plot pixels, and whether it sits away from its point (a
    leader line then joins them)."""

    rect: QRectF
    leader: bool


def candidates(point: QPointF, size: QSizeF, radius: float, bounds: QRectF
               ) -> tuple[np.ndarray, np.ndarray]:
    """The places a label of ``size`` may take around a point of ``radius`` inside
    ``bounds``, nearest first: (n, 4) rectangles as left, top, right, bottom, and
    whether each needs a leader line. Beside the point, above, below; then slid up or
    down a half label at a time, down first at equal distance (labels given from the top
    of the plot down then stack in their points' order), and moved out sideways in
    columns two label heights wide where the rows beside the point are taken."""
    w, h = size.width(), size.height()
    x, y = point.x(), point.y()
    off = radius + GAP_PX
    near = np.array([[x + off, y - h / 2], [x - off - w, y - h / 2],
                     [x - w / 2, y - off - h], [x - w / 2, y + off]])
    slides = int(bounds.height() / (h / 2)) + 2
    k = np.arange(1, slides + 1)
    dy = np.stack([k * h / 2, -k * h / 2], axis=1).ravel()  # down, up, down, up ...
    out = np.arange(COLUMNS_OUT + 1) * 2 * h
    # (column, shift, side) -> left, top, cost
    col, shift, side = np.meshgrid(out, dy, (1.0, -1.0), indexing="ij")
    lefts = np.where(side > 0, x + off + col, x - off - w - col)
    tops = y - h / 2 + shift
    cost = np.abs(shift) + OUT_COST * col
    order = np.argsort(cost.ravel(), kind="stable")
    moved = np.stack([lefts.ravel()[order], tops.ravel()[order]], axis=1)
    leader = (np.abs(shift) >= h / 2 + radius) | (col > 0)
    corners = np.concatenate([near, moved])
    rects = np.concatenate([corners, corners + np.array([w, h])], axis=1)
    leaders = np.concatenate([np.zeros(len(near), bool), leader.ravel()[order]])
    inside = (rects[:, 0] >= bounds.left()) & (rects[:, 1] >= bounds.top()) & \
        (rects[:, 2] <= bounds.right()) & (rects[:, 3] <= bounds.bottom())
    return rects[inside], leaders[inside]


def _box(r: QRectF) -> tuple[float, float, float, float]:
    return (r.left() - CLEAR_PX, r.top() - CLEAR_PX, r.right() + CLEAR_PX,
            r.bottom() + CLEAR_PX)


def place_labels(points: Sequence[QPointF], sizes: Sequence[QSizeF], radius: float,
                 bounds: QRectF, fixed: Sequence[QRectF] = ()) -> list[PlacedLabel | None]:
    """A place for each point's label (None: no free place), in the order given: the
    first labels get the nearest places. ``radius``: the points' half size in pixels;
    ``bounds``: the plot's rectangle; ``fixed``: texts already on the plot. Then the
    labels stacked beside one column of points are put in their points' order (see
    ``in_order``), so that their leaders do not cross."""
    dots = [QRectF(p.x() - radius, p.y() - radius, 2 * radius, 2 * radius) for p in points]
    obstacles = [r.adjusted(-CLEAR_PX, -CLEAR_PX, CLEAR_PX, CLEAR_PX) for r in (*dots, *fixed)]
    taken = [_box(r) for r in (*dots, *fixed)]
    placed: list[PlacedLabel | None] = []
    for point, size in zip(points, sizes, strict=True):
        rects, leaders = candidates(point, size, radius, bounds)
        where = None
        if len(rects):
            t = np.array(taken, float).reshape(-1, 4)
            # (strictly overlapping: boxes that only touch do not intersect)
            hit = (rects[:, None, 0] < t[None, :, 2]) & (rects[:, None, 2] > t[None, :, 0]) \
                & (rects[:, None, 1] < t[None, :, 3]) & (rects[:, None, 3] > t[None, :, 1])
            free = np.flatnonzero(~hit.any(axis=1))
            if len(free):
                left, top, right, bottom = (float(v) for v in rects[free[0]])
                where = PlacedLabel(QRectF(left, top, right - left, bottom - top),
                                    bool(leaders[free[0]]))
        placed.append(where)
        if where is not None:
            taken.append(_box(where.rect))
    return in_order(points, placed, radius, bounds, obstacles)


def in_order(points: Sequence[QPointF], placed: list[PlacedLabel | None], radius: float,
             bounds: QRectF, obstacles: list[QRectF]) -> list[PlacedLabel | None]:
    """The labels on one side of one column of points (points at one x, labels right of
    them or left) given the column's places top to bottom in their points' order, where
    the labels so moved still clear everything (else they stay where they were)."""
    groups: dict[tuple[int, bool], list[int]] = {}
    for i, where in enumerate(placed):
        if where is not None:
            right = where.rect.left() > points[i].x()
            groups.setdefault((round(points[i].x()), right), []).append(i)
    out = list(placed)
    for (_x, right), members in groups.items():
        if len(members) < 2:
            continue
        tops = sorted(out_rect(out, i).top() for i in members)
        by_point = sorted(members, key=lambda i: points[i].y())
        moved: dict[int, PlacedLabel] = {}
        for i, top in zip(by_point, tops, strict=True):
            old = out_rect(out, i)
            rect = QRectF(old.left(), top, old.width(), old.height())
            if not right:  # (a label left of its points keeps its right edge)
                rect.moveRight(old.right())
            near = abs(rect.center().y() - points[i].y()) < rect.height() / 2 + radius
            moved[i] = PlacedLabel(rect, not near)
        others = [out_rect(out, j).adjusted(-CLEAR_PX, -CLEAR_PX, CLEAR_PX, CLEAR_PX)
                  for j in range(len(out)) if out[j] is not None and j not in moved]
        rects = [m.rect for m in moved.values()]
        clear = all(bounds.contains(r) and not any(r.intersects(o) for o in
                                                    (*obstacles, *others)) for r in rects) \
            and not any(a.intersects(b) for n, a in enumerate(rects) for b in rects[n + 1:])
        if clear:
            for i, m in moved.items():
                out[i] = m
    return out


def out_rect(placed: list[PlacedLabel | None], i: int) -> QRectF:
    where = placed[i]
    assert where is not None
    return where.rect


def crosses(line: QLineF, rect: QRectF) -> bool:
    """Whether a segment runs through a rectangle (an end inside, or across an edge)."""
    if rect.contains(line.p1()) or rect.contains(line.p2()):
        return True
    corners = (rect.topLeft(), rect.topRight(), rect.bottomRight(), rect.bottomLeft())
    return any(lines_cross(line, QLineF(a, b))
               for a, b in zip(corners, (*corners[1:], corners[0]), strict=True))


def lines_cross(a: QLineF, b: QLineF) -> bool:
    """Whether two segments cross (sharing an end does not count)."""
    if a.p1() == b.p1():
        return False  # (two leaders of one point would both start there)
    kind, _ = a.intersects(b)
    return kind == QLineF.IntersectionType.BoundedIntersection


def leader_end(point: QPointF, rect: QRectF) -> QPointF:
    """Where a leader line from ``point`` meets its label: the middle of the label's
    nearer side."""
    x = rect.left() if rect.left() >= point.x() else rect.right()
    return QPointF(x, rect.center().y())

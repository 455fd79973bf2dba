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
            free = np.flatnonzero(~_overlaps(rects, np.array(taken, float).reshape(-1, 4)))
            if len(free):
                left, top, right, bottom = (float(v) for v in rects[free[0]])
                where = PlacedLabel(QRectF(left, top, right - left, bottom - top),
                                    bool(leaders[free[0]]))
        placed.append(where)
        if where is not None:
            taken.append(_box(where.rect))
    return untangle(points, in_order(points, placed, radius, bounds, obstacles), radius,
                    bounds, obstacles)


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


UNTANGLE_PASSES = 4  # rounds of trades and moves at most (each only removes faults)
RELOCATE_TRIES = 48  # free places, nearest first, a tangled label is tried at


def untangle(points: Sequence[QPointF], placed: list[PlacedLabel | None], radius: float,
             bounds: QRectF, obstacles: list[QRectF]) -> list[PlacedLabel | None]:
    """The greedy placement fills places nearest first, which leaves leaders crossing, and
    leaders running through other names, where points lie close. Here, a few rounds:
    two labels whose leaders tangle trade places where both fit there, then each label
    still tangled moves to the nearest free place of its own (``candidates``) where it
    takes part in fewer faults. Each step lowers the count of faults (``faults_of``), so
    no name is lost and none gets worse placed than a fault."""
    t = _Tangle(points, placed)
    blocks = np.array([(o.left(), o.top(), o.right(), o.bottom()) for o in obstacles],
                      float).reshape(-1, 4)
    for _ in range(UNTANGLE_PASSES):
        changed = False
        for i, j in t.tangled_pairs():
            changed |= t.trade(i, j, radius, bounds, blocks)
        for k in dict.fromkeys(k for pair in t.tangled_pairs() for k in pair):
            changed |= t.relocate(k, radius, bounds, blocks)
        if not changed:
            break
    return t.placed()


class _Tangle:
    """Labels as arrays: rectangles (n, 4: left, top, right, bottom), whether each has a
    leader and whether each is placed; the leaders and the fault matrices made from them."""

    def __init__(self, points: Sequence[QPointF], placed: Sequence[PlacedLabel | None]):
        n = len(placed)
        self.xy = np.array([(p.x(), p.y()) for p in points], float).reshape(n, 2)
        self.rects = np.zeros((n, 4))
        self.lead = np.zeros(n, bool)
        self.has = np.zeros(n, bool)
        for k, w in enumerate(placed):
            if w is not None:
                q = w.rect
                self.rects[k] = (q.left(), q.top(), q.right(), q.bottom())
                self.lead[k], self.has[k] = w.leader, True
        self._faults: np.ndarray | None = None

    def placed(self) -> list[PlacedLabel | None]:
        return [PlacedLabel(QRectF(x0, y0, x1 - x0, y1 - y0), bool(lead)) if has else None
                for (x0, y0, x1, y1), lead, has in zip(self.rects.tolist(), self.lead,
                                                       self.has, strict=True)]

    def segments(self, rects: np.ndarray | None = None, lead: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Each leader, point to the middle of the name's nearer side (``leader_end``),
        and whether there is one."""
        rects = self.rects if rects is None else rects
        lead = self.lead if lead is None else lead
        return _leaders(self.xy, rects), lead & self.has

    def fault_matrix(self, rects: np.ndarray | None = None, lead: np.ndarray | None = None
                     ) -> np.ndarray:
        """(n, n): 1 for leaders i and j crossing (i < j), 1 more for leader i through
        name j; of the labels as they are (kept until one moves), or of ``rects`` and
        ``lead``."""
        if rects is None and lead is None:
            if self._faults is None:
                self._faults = self.fault_matrix(self.rects, self.lead)
            return self._faults
        rects = self.rects if rects is None else rects
        segs, seg = self.segments(rects, lead)
        crossing = np.triu(_cross_matrix(segs, segs) & seg[:, None] & seg[None, :], 1)
        through = _through_matrix(segs, rects) & seg[:, None] & self.has[None, :]
        np.fill_diagonal(through, False)
        return crossing.astype(int) + through

    def tangled_pairs(self) -> list[tuple[int, int]]:
        f = self.fault_matrix() > 0
        f = np.triu(f | f.T, 1)
        return [(int(i), int(j)) for i, j in zip(*np.nonzero(f), strict=True)]

    def faults(self, among: Sequence[int], rects: np.ndarray | None = None,
               lead: np.ndarray | None = None) -> int:
        """The faults in which a label of ``among`` takes part (its rows and columns of
        the fault matrix, each fault once), worked out for those labels alone."""
        rects = self.rects if rects is None else rects
        segs, seg = self.segments(rects, lead)
        a = np.asarray(among)
        inside = np.zeros(len(seg), bool)
        inside[a] = True
        cross = _cross_matrix(segs[a], segs) & seg[a, None] & seg[None, :]
        through_row = _through_matrix(segs[a], rects) & seg[a, None] & self.has[None, :]
        through_col = _through_matrix(segs, rects[a]) & seg[:, None] & self.has[None, a]
        through_row[np.arange(len(a)), a] = False  # (a leader and its own name)
        through_col[a, np.arange(len(a))] = False
        # a fault between two of ``among`` is in both its row and its column: once
        return int(cross.sum() - cross[:, inside].sum() / 2 + through_row.sum()
                   + through_col[~inside].sum())

    def _fits(self, rect: np.ndarray, bounds: QRectF, blocks: np.ndarray,
              others: np.ndarray) -> bool:
        x0, y0, x1, y1 = rect
        if (x0 < bounds.left() or y0 < bounds.top() or x1 > bounds.right()
                or y1 > bounds.bottom()):
            return False
        return not bool(_overlaps(rect[None], _with_clearance(blocks, others))[0])

    def trade(self, i: int, j: int, radius: float, bounds: QRectF, blocks: np.ndarray
              ) -> bool:
        """Labels i and j swap places where both fit and their faults fall."""
        if not (self.has[i] and self.has[j]):
            return False
        to_j = _in_place_of(self.xy[i], self.rects[i], self.xy[j], self.rects[j], radius)
        to_i = _in_place_of(self.xy[j], self.rects[j], self.xy[i], self.rects[i], radius)
        if to_j is None or to_i is None:
            return False
        (ri, li), (rj, lj) = to_j, to_i
        keep = self.has.copy()
        keep[[i, j]] = False
        rest = self.rects[keep]
        if not (self._fits(ri, bounds, blocks, np.concatenate([rest, rj[None]]))
                and self._fits(rj, bounds, blocks, rest)):
            return False
        rects, lead = self.rects.copy(), self.lead.copy()
        rects[i], rects[j], lead[i], lead[j] = ri, rj, li, lj
        if self.faults((i, j), rects, lead) >= self.faults((i, j)):
            return False
        self.rects, self.lead, self._faults = rects, lead, None
        return True

    def relocate(self, k: int, radius: float, bounds: QRectF, blocks: np.ndarray) -> bool:
        """Label k to the nearest free place of its own where it takes part in fewer
        faults (among the first RELOCATE_TRIES free ones)."""
        if not self.has[k]:
            return False
        x0, y0, x1, y1 = self.rects[k]
        cands, leads = candidates(QPointF(*self.xy[k]), QSizeF(x1 - x0, y1 - y0), radius,
                                  bounds)
        keep = self.has.copy()
        keep[k] = False
        others = self.rects[keep]
        free = np.flatnonzero(~_overlaps(cands, _with_clearance(blocks, others)))
        free = free[:RELOCATE_TRIES]
        if not len(free):
            return False
        now = self.faults((k,))
        segs, seg = self.segments()
        seg = seg.copy()
        seg[k] = False
        has = self.has.copy()
        has[k] = False
        cand, lead = cands[free], leads[free]
        mine = _leaders(np.broadcast_to(self.xy[k], (len(cand), 2)), cand)
        count = ((_cross_matrix(mine, segs) & seg[None, :]).sum(axis=1)
                 + (_through_matrix(mine, self.rects) & has[None, :]).sum(axis=1)) * lead
        count += (_through_matrix(segs, cand) & seg[:, None]).sum(axis=0)
        better = np.flatnonzero(count < now)
        if not len(better):
            return False
        self.rects[k], self.lead[k] = cand[better[0]], bool(lead[better[0]])
        self._faults = None
        return True


def _overlaps(rects: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """(len(rects),): whether each rectangle overlaps any of ``boxes`` (both (n, 4) as
    left, top, right, bottom) strictly: boxes that only touch do not."""
    hit = ((rects[:, None, 0] < boxes[None, :, 2]) & (rects[:, None, 2] > boxes[None, :, 0])
           & (rects[:, None, 1] < boxes[None, :, 3]) & (rects[:, None, 3] > boxes[None, :, 1]))
    return np.asarray(hit.any(axis=1), bool)


def _with_clearance(blocks: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The boxes a label must not overlap: ``blocks`` (points and fixed texts, already
    grown by CLEAR_PX) and the other ``labels``, grown by CLEAR_PX here."""
    return np.concatenate([blocks, labels + np.array([-CLEAR_PX, -CLEAR_PX, CLEAR_PX,
                                                      CLEAR_PX])])


def _leaders(xy: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """(n, 4) segments from each point to ``leader_end`` of its rectangle."""
    ends_x = np.where(rects[:, 0] >= xy[:, 0], rects[:, 0], rects[:, 2])
    return np.stack([xy[:, 0], xy[:, 1], ends_x, (rects[:, 1] + rects[:, 3]) / 2], axis=1)


def _cross_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)): whether segment a_i and segment b_j cross at a point inside both
    (touching, sharing an end or lying along each other does not count)."""
    def orient(px, py, qx, qy, rx, ry):  # the sign of (q - p) x (r - p)
        return (qx - px) * (ry - py) - (qy - py) * (rx - px)

    ax1, ay1, ax2, ay2 = (a[:, None, c] for c in range(4))
    bx1, by1, bx2, by2 = (b[None, :, c] for c in range(4))
    d1 = orient(bx1, by1, bx2, by2, ax1, ay1)
    d2 = orient(bx1, by1, bx2, by2, ax2, ay2)
    d3 = orient(ax1, ay1, ax2, ay2, bx1, by1)
    d4 = orient(ax1, ay1, ax2, ay2, bx2, by2)
    return (d1 * d2 < 0) & (d3 * d4 < 0)


def _through_matrix(segs: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """(len(segs), len(rects)): whether a segment runs through a rectangle's inside
    (Liang-Barsky clipping: a stretch of positive length within it)."""
    x1, y1 = segs[:, 0:1], segs[:, 1:2]
    dx, dy = segs[:, 2:3] - x1, segs[:, 3:4] - y1
    left, top, right, bottom = (rects[None, :, c] for c in range(4))
    shape = (len(segs), len(rects))
    t0, t1 = np.zeros(shape), np.ones(shape)
    outside = np.zeros(shape, bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x1 - left), (dx, right - x1), (-dy, y1 - top), (dy, bottom - y1)):
            t = q / p  # (p is a column, q a matrix: both broadcast to the shape)
            outside |= (p == 0) & (q < 0)
            t0 = np.where(p < 0, np.maximum(t0, t), t0)
            t1 = np.where(p > 0, np.minimum(t1, t), t1)
    return ~outside & (t1 - t0 > 1e-9)


def faults_of(points: Sequence[QPointF], placed: Sequence[PlacedLabel | None]) -> int:
    """Leaders that cross each other, and leaders that run through another point's name."""
    return int(_Tangle(points, placed).fault_matrix().sum())


def _in_place_of(xy: np.ndarray, rect: np.ndarray, other_xy: np.ndarray,
                 other_rect: np.ndarray, radius: float) -> tuple[np.ndarray, bool] | None:
    """A label of ``rect``'s size moved to ``other_rect``'s place: at its height, its edge
    toward its point where the other's was; and whether it then needs a leader. None
    where it would lie across its own point's column."""
    w, h = rect[2] - rect[0], rect[3] - rect[1]
    top = (other_rect[1] + other_rect[3]) / 2 - h / 2
    left = other_rect[0] if other_rect[0] >= other_xy[0] else other_rect[2] - w
    if left < xy[0] < left + w:
        return None
    beside = (abs(top + h / 2 - xy[1]) < h / 2 + radius
              and min(abs(left - xy[0]), abs(xy[0] - left - w)) <= radius + GAP_PX + CLEAR_PX)
    return np.array([left, top, left + w, top + h]), not beside


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

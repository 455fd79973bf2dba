"""SVG that every renderer draws alike: the transforms QSvgGenerator puts on its groups
baked into the shapes' coordinates.

Qt writes a chart's bars and curves in the plot's data coordinates inside
``<g transform="matrix(32.6,0,0,-73.6,77.8,319.4)">`` with ``vector-effect=
"non-scaling-stroke"`` on each shape, so its 1 px outline stays 1 px. QtSvg honours that;
librsvg (rsvg-convert) and ImageMagick do not, and stroke the outline 30-70 px wide in
the scaled space: the bars become huge overlapping polygons. Here each group whose
children are all shapes (path, rect, polyline, polygon, line) gets its matrix applied to
their points and loses the transform (and the vector effect: the stroke is in pixels
now). Groups holding text or images keep their transform: those scale as they should.
The canvas is sized in pixels (Qt writes millimetres).

Qt-free, and only for files Qt wrote here: the path data it writes is absolute M, L, C,
Q and Z; a group with anything else is left as it was.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
SHAPES = frozenset({"path", "rect", "polyline", "polygon", "line"})
_MATRIX = re.compile(r"^\s*matrix\(([^)]*)\)\s*$")
_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_PAIRS = {"M": 1, "L": 1, "C": 3, "Q": 2, "Z": 0}  # coordinate pairs per command
Matrix = tuple[float, float, float, float, float, float]


class NotFlat(ValueError):
    """A shape this module does not bake (its group keeps its transform)."""


def _tag(element: ET.Element) -> str:
    return element.tag.rsplit("}", 1)[-1]


def _number(value: float) -> str:
    return f"{value:.6g}"


def parse_matrix(text: str) -> Matrix | None:
    m = _MATRIX.match(text)
    if m is None:
        return None
    parts = [float(p) for p in re.split(r"[\s,]+", m.group(1).strip()) if p]
    return tuple(parts) if len(parts) == 6 else None  # type: ignore[return-value]


def apply(matrix: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = matrix
    return a * x + c * y + e, b * x + d * y + f


def bake_path(d: str, matrix: Matrix) -> str:
    """Path data ``d`` with ``matrix`` applied to every point (absolute commands only)."""
    tokens = _TOKEN.findall(d)
    segments: list[str] = []
    i, command = 0, ""
    while i < len(tokens):
        if tokens[i].isalpha():
            command = tokens[i]
            if command not in _PAIRS:
                raise NotFlat(f"path command {command!r}")
            i += 1
            if command == "Z":
                segments.append("Z")
                continue
        elif not command or command == "Z":
            raise NotFlat("coordinates without a command")
        pairs = []
        for _ in range(_PAIRS[command]):
            if i + 1 >= len(tokens) or tokens[i].isalpha() or tokens[i + 1].isalpha():
                raise NotFlat("a coordinate pair cut short")
            bx, by = apply(matrix, float(tokens[i]), float(tokens[i + 1]))
            i += 2
            pairs.append(f"{_number(bx)},{_number(by)}")
        segments.append(command + " ".join(pairs))
    return " ".join(segments)


def _points(text: str, matrix: Matrix) -> str:
    values = [float(v) for v in re.split(r"[\s,]+", text.strip()) if v]
    if len(values) % 2:
        raise NotFlat("odd number of point coordinates")
    return " ".join(f"{_number(x)},{_number(y)}" for x, y in
                    (apply(matrix, values[k], values[k + 1]) for k in range(0, len(values), 2)))


def _bake_shape(shape: ET.Element, matrix: Matrix) -> None:
    tag = _tag(shape)
    if tag == "path":
        shape.set("d", bake_path(shape.get("d", ""), matrix))
    elif tag == "rect":  # a rectangle under a scale (maybe negative): a path of 4 corners
        x, y = float(shape.get("x", 0)), float(shape.get("y", 0))
        w, h = float(shape.get("width", 0)), float(shape.get("height", 0))
        corners = [apply(matrix, px, py) for px, py in ((x, y), (x + w, y), (x + w, y + h),
                                                        (x, y + h))]
        for name in ("x", "y", "width", "height", "rx", "ry"):
            shape.attrib.pop(name, None)
        shape.tag = f"{{{SVG_NS}}}path"
        shape.set("d", "M" + " L".join(f"{_number(px)},{_number(py)}" for px, py in corners)
                  + " Z")
    elif tag in ("polyline", "polygon"):
        shape.set("points", _points(shape.get("points", ""), matrix))
    elif tag == "line":
        x1, y1 = apply(matrix, float(shape.get("x1", 0)), float(shape.get("y1", 0)))
        x2, y2 = apply(matrix, float(shape.get("x2", 0)), float(shape.get("y2", 0)))
        shape.set("x1", _number(x1))
        shape.set("y1", _number(y1))
        shape.set("x2", _number(x2))
        shape.set("y2", _number(y2))
    shape.attrib.pop("vector-effect", None)


def flatten_group(group: ET.Element) -> bool:
    """Bake ``group``'s matrix into its shapes; False (the group unchanged) where it has
    no matrix, holds anything but shapes, or a shape this module does not read."""
    matrix = parse_matrix(group.get("transform", ""))
    children = list(group)
    if matrix is None or not children or any(_tag(c) not in SHAPES for c in children):
        return False
    originals = [dict(c.attrib) for c in children]
    tags = [c.tag for c in children]
    try:
        for child in children:
            _bake_shape(child, matrix)
    except (NotFlat, ValueError):
        for child, attrib, tag in zip(children, originals, tags, strict=True):
            child.attrib.clear()
            child.attrib.update(attrib)
            child.tag = tag
        return False
    del group.attrib["transform"]
    return True


def flatten_svg(text: str, width_px: float | None = None, height_px: float | None = None
                ) -> str:
    """The SVG ``text`` with its shape groups' transforms baked in, and its canvas
    ``width_px`` x ``height_px`` pixels (the viewBox stays: it is the picture's)."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(text)
    for group in root.iter(f"{{{SVG_NS}}}g"):
        flatten_group(group)
    if width_px is not None and height_px is not None:
        root.set("width", _number(width_px))
        root.set("height", _number(height_px))
    return ET.tostring(root, encoding="unicode", xml_declaration=True)



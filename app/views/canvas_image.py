"""numpy RGB arrays to QImage, for views that paint a whole tile at once."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QImage


def rgb(color: QColor) -> int:
    return 0xFF000000 | (color.red() << 16) | (color.green() << 8) | color.blue()


def image_from_codes(codes: np.ndarray, palette: list[QColor]) -> QImage:
    """A (rows, cols) array of palette indices as an RGB32 image (one pixel per cell)."""
    lut = np.array([rgb(c) for c in palette], dtype=np.uint32)
    pixels = np.ascontiguousarray(lut[codes])
    h, w = pixels.shape
    return QImage(pixels.data, w, h, 4 * w, QImage.Format.Format_RGB32).copy()

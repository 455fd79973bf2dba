"""What can be exported, and as what: the one table of exportable pictures (the CLI's
``--chart`` choices and the File menu) and the suffixes that pick a format.

No Qt here: the command line checks a request and lists the choices without importing
the exporters (:mod:`.exports`), which need pyqtgraph and the views.
"""

from __future__ import annotations

from dataclasses import dataclass

IMAGE_SUFFIXES = ("png", "svg")
ANIMATION_SUFFIXES = ("gif", "webp", "mp4")
TEXT_SUFFIXES = ("csv", "md")
SUFFIXES = (*IMAGE_SUFFIXES, *ANIMATION_SUFFIXES, *TEXT_SUFFIXES)
MAX_FRAMES = 400  # an animated export's bound (a GIF of 400 frames is already large)
MAX_SCALE = 8.0
MAX_SIDE_PX = 8192  # an export's side, before --scale (a picture, not a poster)
MAX_PIXELS = 64 << 20  # width x height x scale², at most (a 64-megapixel PNG)


class ExportError(ValueError):
    """An export that cannot be made as asked; the message says why and what would do."""


@dataclass(frozen=True, slots=True)
class Target:
    """What ``--chart NAME`` exports: a view, or one chart of it."""

    name: str
    view: str
    chart: str | None
    title: str
    # the picture's size when none is asked for (device-independent pixels): one that
    # shows every label of the recording's ladder, for a 16:9 slide or half of one
    size: tuple[int, int] = (1600, 900)


# the one table of exportable pictures (the CLI's --chart choices and the File menu)
CHART_TARGETS = (
    Target("bars", "charts", "bars", "Ladder bars", (1600, 900)),
    Target("repeats", "charts", "stream", "Per-repeat TFLOPS", (1280, 720)),
    Target("sweep", "charts", "sweep", "Size sweep", (1600, 900)),
    Target("charts", "charts", None, "Charts tab (all three)", (1920, 1080)),
    Target("telemetry", "telemetry", None, "Telemetry", (1920, 1080)),
    Target("instruction_mix", "code", "instruction_mix", "Instruction mix", (1600, 800)),
    Target("roofline", "roofline", "roofline", "Roofline", (1600, 900)),
)
ANIMATION_TARGETS = (
    Target("tiling", "tiling", None, "Tiling", (1280, 720)),
    Target("banks", "banks", None, "Shared-memory banks", (1280, 720)),
    Target("swizzle", "swizzle", None, "Swizzle explorer", (1280, 720)),
    Target("coalescing", "coalescing", None, "Global coalescing", (1280, 720)),
)


def check_size(size: tuple[int, int], scale: float) -> None:
    """ExportError unless ``size`` (before ``scale``) and the pixels it makes are bounded."""
    w, h = size
    if not (1 <= w <= MAX_SIDE_PX and 1 <= h <= MAX_SIDE_PX):
        raise ExportError(f"size must be 1 to {MAX_SIDE_PX} pixels a side, not {w}x{h}")
    if not 0 < scale <= MAX_SCALE:
        raise ExportError(f"scale must be above 0 and at most {MAX_SCALE:g}, not {scale:g}")
    if w * h * scale * scale > MAX_PIXELS:
        raise ExportError(f"{w}x{h} at scale {scale:g} is more than "
                          f"{MAX_PIXELS >> 20} megapixels")
TARGETS = {t.name: t for t in (*CHART_TARGETS, *ANIMATION_TARGETS)}

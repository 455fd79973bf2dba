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


class ExportError(ValueError):
    """An export that cannot be made as asked; the message says why and what would do."""


@dataclass(frozen=True, slots=True)
class Target:
    """What ``--chart NAME`` exports: a view, or one chart of it."""

    name: str
    view: str
    chart: str | None
    title: str


# the one table of exportable pictures (the CLI's --chart choices and the File menu)
CHART_TARGETS = (
    Target("bars", "charts", "bars", "Ladder bars"),
    Target("repeats", "charts", "stream", "Per-repeat TFLOPS"),
    Target("sweep", "charts", "sweep", "Size sweep"),
    Target("charts", "charts", None, "Charts tab (all three)"),
    Target("telemetry", "telemetry", None, "Telemetry"),
    Target("instruction_mix", "code", "instruction_mix", "Instruction mix"),
)
ANIMATION_TARGETS = (
    Target("tiling", "tiling", None, "Tiling"),
    Target("banks", "banks", None, "Shared-memory banks"),
    Target("swizzle", "swizzle", None, "Swizzle explorer"),
    Target("coalescing", "coalescing", None, "Global coalescing"),
)
TARGETS = {t.name: t for t in (*CHART_TARGETS, *ANIMATION_TARGETS)}

"""The main window's views, one static table: name, tab title, and how to make one.

``gemmscope replay FILE --screenshot PATH --view NAME`` renders the view called NAME.
A view's module is imported when the first view of it is made: the window makes the
views of tabs not on screen after its first paint (window/view_tabs.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from .base import View


@dataclass(frozen=True, slots=True)
class ViewSpec:
    name: str
    title: str  # short: every tab's title fits a 1280-pixel window in presentation mode
    where: str  # the view's class, as "module:Class" in this package
    tip: str = ""  # the tab's tooltip: what the view shows

    @property
    def factory(self) -> type[View]:
        """The view's class (its module imported now, where it was not yet)."""
        module, _, cls = self.where.partition(":")
        found = getattr(import_module(f"{__package__}.{module}"), cls)
        assert isinstance(found, type) and issubclass(found, View)
        return found


VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("charts", "Charts", "charts:ChartsView",
             "the ladder's bars, the per-repeat stream and the size sweep"),
    ViewSpec("telemetry", "Telemetry", "telemetry:TelemetryView",
             "NVML clocks, power, temperature and throttle reasons over the session"),
    ViewSpec("tiling", "Tiling", "tiling:TilingView",
             "block, warp and thread tiles; shared-memory stages along K"),
    ViewSpec("banks", "Banks", "banks:BanksView", "shared-memory banks: the words one "
             "warp instruction touches, conflicts and wavefronts"),
    ViewSpec("swizzle", "Swizzle", "swizzle:SwizzleView",
             "swizzle explorer: banks before and after an XOR swizzle or padding"),
    ViewSpec("coalescing", "Coalescing", "coalescing:CoalescingView",
             "global-memory coalescing: the sectors one warp instruction touches"),
    ViewSpec("code", "Code", "code:CodeView", "CUDA source, SASS and the instruction mix"),
    ViewSpec("roofline", "Roofline", "roofline:RooflineView",
             "TFLOPS against arithmetic intensity, on the GPU's roofs per precision"),
    ViewSpec("timeline", "Timeline", "timeline:TimelineView",
             "measured per SM, block and warpgroup: a trace build's timeline beside the "
             "model"),
)

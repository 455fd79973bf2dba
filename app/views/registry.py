"""The main window's views, one static table: name, tab title, and how to make one.

``gemmscope replay FILE --screenshot PATH --view NAME`` renders the view called NAME.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .banks import BanksView
from .base import View
from .charts import ChartsView
from .coalescing import CoalescingView
from .code import CodeView
from .swizzle import SwizzleView
from .telemetry import TelemetryView
from .tiling import TilingView


@dataclass(frozen=True, slots=True)
class ViewSpec:
    name: str
    title: str  # short: every tab's title fits a 1280-pixel window in presentation mode
    factory: Callable[[], View]
    tip: str = ""  # the tab's tooltip: what the view shows


VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("charts", "Charts", ChartsView, "the ladder's bars, the per-repeat stream and "
             "the size sweep"),
    ViewSpec("telemetry", "Telemetry", TelemetryView, "NVML clocks, power, temperature and "
             "throttle reasons over the session"),
    ViewSpec("tiling", "Tiling", TilingView, "block, warp and thread tiles; shared-memory "
             "stages along K"),
    ViewSpec("banks", "Banks", BanksView, "shared-memory banks: the words one warp "
             "instruction touches, conflicts and wavefronts"),
    ViewSpec("swizzle", "Swizzle", SwizzleView, "swizzle explorer: banks before and after an "
             "XOR swizzle or padding"),
    ViewSpec("coalescing", "Coalescing", CoalescingView, "global-memory coalescing: the "
             "sectors one warp instruction touches"),
    ViewSpec("code", "Code", CodeView, "CUDA source, SASS and the instruction mix"),
)

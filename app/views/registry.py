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
    title: str
    factory: Callable[[], View]


VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("charts", "Charts", ChartsView),
    ViewSpec("telemetry", "Telemetry", TelemetryView),
    ViewSpec("tiling", "Tiling", TilingView),
    ViewSpec("banks", "Shared-memory banks", BanksView),
    ViewSpec("swizzle", "Swizzle explorer", SwizzleView),
    ViewSpec("coalescing", "Global coalescing", CoalescingView),
    ViewSpec("code", "Code", CodeView),
)

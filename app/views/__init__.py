"""Animated views of the access models: tiling, banks, swizzle explorer, coalescing.

``VIEWS`` maps a view id to (title, factory); a factory takes the initial level id (or
nothing) and returns a panel widget with ``set_level(level_id)`` (and
``set_animated(on)``), so the main window can register them without knowing their
classes. Importing this package also registers them with the main window's
``gemmscope.app.view_registry`` where that module exists. Qt is imported only when a
factory is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _tiling(level_id: str = "register_2d") -> Any:
    from gemmscope.app.views.tiling import TilingView

    return TilingView(level_id)


def _banks(level_id: str = "register_2d") -> Any:
    from gemmscope.app.views.banks import BanksView

    return BanksView(level_id)


def _swizzle(level_id: str = "wmma") -> Any:
    from gemmscope.app.views.swizzle import SwizzleView

    return SwizzleView(level_id)


def _coalescing(level_id: str = "naive") -> Any:
    from gemmscope.app.views.coalescing import CoalescingView

    return CoalescingView(level_id)


VIEWS: dict[str, tuple[str, Callable[..., Any]]] = {
    "tiling": ("Tiling", _tiling),
    "banks": ("Shared-memory banks", _banks),
    "swizzle": ("Swizzle explorer", _swizzle),
    "coalescing": ("Global coalescing", _coalescing),
}


def register_all() -> bool:
    """Register every view with the main window's view registry; False where there is
    none (the registry lives in the app, which may be absent or older)."""
    try:
        from gemmscope.app.view_registry import register_view
    except ImportError:
        return False
    for name, (title, factory) in VIEWS.items():
        register_view(name, title, factory)
    return True


register_all()

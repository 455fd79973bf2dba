"""Named views of the main window's central tab area.

A view is any QWidget made by a zero-argument factory::

    from gemmscope.app.view_registry import register_view
    register_view("tiling", "Tiling", TilingView)

The main window makes one of each registered view, in registration order, as a tab.
Optional methods a view may have, all called on the GUI thread:

- ``set_level(level_id: str)``: the selected level changed;
- ``bind(store)``: receives the :class:`~gemmscope.app.core.store.SessionStore`;
- ``refresh(changes: set[Change])``: the store changed (called at most ~50 times a
  second, with everything that changed since the last call).

``gemmscope replay FILE --screenshot PATH --view NAME`` renders the view called NAME.
Views of other modules (the animation views in ``gemmscope.app.views``) register when
that package is imported; :func:`load_views` imports it where it exists.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ViewFactory = Callable[[], Any]  # returns a QWidget


@dataclass(frozen=True, slots=True)
class ViewSpec:
    name: str
    title: str
    factory: ViewFactory


_VIEWS: dict[str, ViewSpec] = {}
EXTRA_VIEW_PACKAGES = ("gemmscope.app.views",)


def register_view(name: str, title: str, factory: ViewFactory) -> None:
    """Add (or replace) the view called ``name``; shown as a tab titled ``title``."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"a view name is letters, digits, - and _, not {name!r}")
    _VIEWS[name] = ViewSpec(name, title, factory)


def unregister_view(name: str) -> None:
    _VIEWS.pop(name, None)


def registered_views() -> list[ViewSpec]:
    return list(_VIEWS.values())


def view_names() -> list[str]:
    return list(_VIEWS)


def load_views() -> list[str]:
    """Register the built-in views and import packages that register more.

    Returns readable notes on packages that failed to import (shown in the app).
    Built-in views: ``charts`` (bars, stream, sweep) and ``telemetry``.
    """
    from gemmscope.app.charts import ChartsView  # Qt; imported only by the GUI
    from gemmscope.app.telemetry_view import TelemetryView

    if "charts" not in _VIEWS:
        register_view("charts", "Charts", ChartsView)
    if "telemetry" not in _VIEWS:
        register_view("telemetry", "Telemetry", TelemetryView)
    problems = []
    for package in EXTRA_VIEW_PACKAGES:
        try:
            if importlib.util.find_spec(package) is None:
                continue
            importlib.import_module(package)
        except Exception as exc:  # a broken plug-in view must not stop the app
            problems.append(f"views from {package} not loaded: {exc}")
    return problems

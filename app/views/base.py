"""What the main window asks of a view (a tab), with a no-op default for each.

The window calls every method on every view; a view overrides what it uses. All calls
come on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyqtgraph as pg

    from ...kernels.ladder import Shape
    from ..core.store import Change, SessionStore
    from ..theme import Theme
    from .animated_canvas import AnimatedCanvas


class View:
    """Mixed into a QWidget subclass: ``class TilingView(QWidget, View)``."""

    def bind(self, store: SessionStore) -> None:
        """Receive the session store the view reads (once, after construction)."""

    def refresh(self, changes: set[Change]) -> None:
        """The store changed; called at most ~30 times a second with what changed since
        the last call, while the view's tab is shown (a hidden view is called when it is
        shown, or when the window brings every view up to date for a picture)."""

    def parts_left(self) -> bool:
        """Whether :meth:`refresh` left parts of its redraw for later frames (a view that
        spreads a costly redraw over frames, so no frame pays for all of it)."""
        return False

    def step(self) -> None:
        """Draw the next part that :meth:`refresh` left; the window calls it once a frame,
        right after a paint, while :meth:`parts_left` says so."""

    def settle(self) -> None:
        """Finish now what :meth:`refresh` left for later frames; the window calls it
        before a picture, so a picture equals a redraw done in one go."""

    def set_level(self, level_id: str) -> bool:
        """The selected level changed; False when the view cannot show it (it says why
        and keeps what it showed)."""
        return True

    def set_form(self, level_id: str, params: dict[str, int] | None,
                 shape: Shape | None = None) -> None:
        """The template parameters ``level_id`` ran with at ``shape``, the shape shown (its
        shape rule's where it has no result there; None: the registry's). Told before
        :meth:`set_level` when both change; a view that draws a level's model keeps it."""

    def set_animated(self, on: bool) -> None:
        """Animations on, or off (whole steps only: screenshots, exports, tests)."""

    def apply_theme(self, theme: Theme) -> None:
        """Normal or presentation colours and sizes."""

    def bind_navigation(self, show_code_line: Callable[[str, str, int], bool]) -> None:
        """Receive the window's link to the Code view: ``show_code_line(level id,
        repository path, line)`` selects the level and shows that source line (once, after
        construction). A view with links to code keeps it."""

    def bind_selection(self, select_level: Callable[[str], object]) -> None:
        """Receive the window's way to select a level (a click on a point of the view
        selects it); once, after construction. A view whose items are levels keeps it."""

    def charts(self) -> dict[str, pg.PlotWidget]:
        """The exportable charts on this view, by name."""
        return {}

    def animation(self) -> AnimatedCanvas | None:
        """The animated canvas this view steps (the animation keys and the view state's
        step act on it), or None for a view without animation steps."""
        return None


class DrawnInParts(View):
    """A view whose redraw is a queue of named parts (``_parts``), drawn one a frame by
    :meth:`_draw_part`, all at once by :meth:`settle`. Mixed in before the QWidget's
    other bases: ``class CodeView(QWidget, DrawnInParts)``."""

    _parts: list[str]

    def parts_left(self) -> bool:
        return bool(self._parts)

    def step(self) -> None:
        if self._parts:
            self._draw_part(self._parts.pop(0))

    def settle(self) -> None:
        while self._parts:
            self.step()

    def _draw_part(self, name: str) -> None:
        raise NotImplementedError

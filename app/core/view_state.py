"""What the person chose to look at: one explicit state that every table, chart, caption
and export derives from. Free of Qt.

    shape   the GEMM shape the ladder table, the bars, the per-repeat chart, the report
            and the CSV show (None until a session offers one)
    level   the selected level (the band behind its bar, the views' level)
    mode    burst or sustained results
    device  the GPU of a session of several (0 with one)
    step    the animation step on screen, 0-based (None: no animated view is shown)
    per_clock  the bars per GHz of SM clock held: TFLOPS/GHz and % of cuBLAS at equal
            clocks, in place of TFLOPS and % of cuBLAS (the C key, View ▸ Bars per clock)

The person sets it (the shape and mode selectors, the level table, a bar, the keys), the
command line sets it (``--shape``, ``--level``, ``--mode``, ``--step``) and a talk's
scene sets it; nothing else does. A source only adds what can be chosen: a replay offers
more shapes as it reaches them, but never changes the one chosen. Listeners hear each
change once (:meth:`ViewStateModel.subscribe`); the window wraps them into its redraws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ...kernels.ladder import Shape
from ...kernels.protocol import Mode

DEFAULT_SHAPE = Shape(4096, 4096, 4096)  # the README's headline table
MAX_STEP = 100_000


@dataclass(frozen=True, slots=True)
class ViewState:
    shape: Shape | None = None
    level: str | None = None
    mode: Mode = Mode.BURST
    device: int = 0
    step: int | None = None
    per_clock: bool = False


Listener = Callable[[ViewState, ViewState], None]  # (before, after)
_FIELDS = tuple(f.name for f in fields(ViewState))


def _checked(name: str, value: Any) -> Any:
    """A field's value as the state keeps it; ValueError for one it cannot hold."""
    if name == "shape":
        if value is not None and not isinstance(value, Shape):
            raise ValueError(f"shape: {value!r} is not a Shape")
    elif name == "level":
        if value is not None and not (isinstance(value, str) and value):
            raise ValueError(f"level: {value!r} is not a level id")
    elif name == "mode":
        return Mode(value)
    elif name == "device":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"device: {value!r} is not a GPU index")
    elif name == "step":
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 0 <= value <= MAX_STEP):
            raise ValueError(f"step: {value!r} is not a step from 0 to {MAX_STEP}")
    elif name == "per_clock":
        if not isinstance(value, bool):
            raise ValueError(f"per_clock: {value!r} is not true or false")
    else:
        raise ValueError(f"{name}: not a field of the view state ({', '.join(_FIELDS)})")
    return value


class ViewStateModel:
    """The one view state of a window, and who listens to it."""

    def __init__(self, state: ViewState | None = None) -> None:
        self._state = state or ViewState()
        self._listeners: list[Listener] = []

    @property
    def state(self) -> ViewState:
        return self._state

    def set(self, **changes: Any) -> bool:
        """Change fields (``shape=``, ``level=``, ``mode=``, ``device=``, ``step=``); the
        listeners hear of it when something changed. True when it did."""
        checked = {name: _checked(name, value) for name, value in changes.items()}
        before = self._state
        after = replace(before, **checked)
        if after == before:
            return False
        self._state = after
        for listener in list(self._listeners):
            listener(before, after)
        return True

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(before, after)`` on every change; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners \
            else None


def changed_fields(before: ViewState, after: ViewState) -> set[str]:
    return {name for name in _FIELDS if getattr(before, name) != getattr(after, name)}


def default_shape(levels_at: Mapping[Shape, int]) -> Shape | None:
    """The shape a session opens on: 4096³ where it has results, else the most complete
    shape (the most ladder levels with a result; on a tie the larger, so the choice does
    not depend on the order results came in); None without results."""
    if not levels_at:
        return None
    if levels_at.get(DEFAULT_SHAPE, 0) > 0:
        return DEFAULT_SHAPE
    return max(levels_at, key=lambda s: (levels_at[s], s.M * s.N * s.K, s.M, s.N, s.K))


def shape_text(shape: Shape | None) -> str:
    """"4096³" for a cube, "1000×999×1001" otherwise; "no shape" for None."""
    if shape is None:
        return "no shape"
    return f"{shape.M}³" if shape.M == shape.N == shape.K else str(shape)


def _size(shape: Shape) -> tuple[int, int, int, int]:
    return shape.M * shape.N * shape.K, shape.M, shape.N, shape.K


def sorted_shapes(shapes: list[Shape]) -> list[Shape]:
    """Smallest first (by M·N·K)."""
    return sorted(set(shapes), key=_size)


def neighbour_shape(shapes: list[Shape], current: Shape | None, offset: int) -> Shape | None:
    """The shape ``offset`` places from ``current`` in ``shapes`` (sorted by size),
    clamped to the ends; the first (or last) where ``current`` is not among them."""
    if not shapes:
        return current
    ordered = sorted_shapes(shapes)
    if current not in ordered:
        return ordered[0] if offset > 0 else ordered[-1]
    i = ordered.index(current) + offset
    return ordered[max(0, min(i, len(ordered) - 1))]

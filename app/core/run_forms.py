"""The form a level ran in at a shape (its template parameters there), which the animations
draw in place of the registry's defaults: fp8_deep at 8192^3 runs four stages, at N = 2112
88-column tiles. Free of Qt; :meth:`store_queries.StoreQueries.run_form` asks it."""

from __future__ import annotations

from collections.abc import Iterable

from ...kernels import ladder
from ...kernels.ladder import Shape
from ...kernels.results import Result

DEFAULT_SM_COUNT = 132  # an H100 or H200 (SXM), where a session names no SM count


def form_at(level_id: str, shape: Shape, results: Iterable[Result | None],
            sm_count: int | None) -> dict[str, int] | None:
    """The parameters of the first of ``results`` (the level's at ``shape``, most wanted
    first) that names them, else what the level's shape rule picks for ``shape`` on
    ``sm_count`` SMs (DEFAULT_SM_COUNT where None), else None (a level this copy lacks,
    or a shape its rule refuses: the registry's form is drawn)."""
    for result in results:
        if result is not None and result.params:
            return dict(result.params)
    level = ladder.BY_ID.get(level_id)
    if level is None:
        return None
    try:
        return dict(level.for_shape(shape.M, shape.N, shape.K,
                                    sm_count or DEFAULT_SM_COUNT).params)
    except ValueError:
        return None

"""Access models of the ladder's levels (pure numpy, no Qt, no CuPy).

``model_for(level_id)`` gives a level's :class:`LevelModel`; ``banks``, ``coalescing``
and ``swizzle`` hold the shared math.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..ladder import registry
from .level_model import LevelModel, SharedTotals, model_class
from .swizzle import IDENTITY

# every module of this package, so each model class is defined (and so registered:
# LevelModel.__init_subclass__); a new model file needs no line here
for _module in pkgutil.iter_modules(__path__):
    if _module.name != "__main__":
        importlib.import_module(f"{__name__}.{_module.name}")

# the ladder's models in the registry's order (the order the app and the tables show)
MODELS: dict[str, type[LevelModel]] = {
    lv.id: cls for lv in registry.ladder() if (cls := model_class(lv.id)) is not None}


def _simt(level_id: str) -> bool:
    try:
        return registry.get(level_id).precision == "fp32"
    except KeyError:
        return False


# the SIMT (FP32) levels, which the ncu comparison covers by default
SIMT_LEVELS = tuple(lid for lid in MODELS if _simt(lid))


def model_for(level_id: str, params: dict[str, int] | None = None) -> LevelModel:
    """The level's model with the registry's template parameters, or ``params`` (merged
    over the registry's parameters) to explore another configuration; parameters that
    break the level's rules (registry: Level.with_params) raise ValueError."""
    cls = model_class(level_id)
    if cls is None:
        raise KeyError(f"no access model for level {level_id!r}; models exist for "
                       f"{', '.join(MODELS)}")
    level = registry.BY_ID.get(level_id)
    if params and level is not None:
        level.with_params(params)  # ValueError "<level>: <which rule>" where one breaks
    return cls(params)


def first_swizzled_level() -> str:
    """The first level, in ladder order, whose model swizzles its first shared array: the
    swizzle explorer opens on it."""
    return next(lid for lid in MODELS
                if (layout := model_for(lid).shared_layout()) is not None
                and layout.swizzle != IDENTITY)


def totals(level_id: str, M: int, N: int, K: int) -> SharedTotals:
    return model_for(level_id).totals(M, N, K)


__all__ = ["MODELS", "SIMT_LEVELS", "LevelModel", "SharedTotals", "first_swizzled_level",
           "model_for", "totals"]

"""Access models of the ladder's levels (pure numpy, no Qt, no CuPy).

``model_for(level_id)`` gives a level's :class:`LevelModel`; ``banks``, ``coalescing``
and ``swizzle`` hold the shared math. The face (``__all__``) is what the app may use: the
models, the bank, sector and swizzle math, the pipeline schedule and the ncu comparison.
Unlike the other faces it loads its modules at once: every model must be defined to be
registered, so importing any model loads them all anyway.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..ladder import registry
from .banks import N_BANKS, BankReport, bank_cells, lanes_per_phase, wavefront_index
from .coalescing import SECTOR_BYTES, SectorReport
from .expression import ColumnExpression, ExpressionError, parse_column_expression
from .hopper import STAGING_COLS, WARPGROUP, PromoteOp, WarpSpecialized, WgmmaOp
from .level_model import (
    NCU_EXTRA_METRICS,
    NCU_METRICS,
    LevelModel,
    Op,
    SharedTotals,
    WarpAccess,
    model_class,
)
from .ncu_compare import ComparisonRow, NcuKernelRow, compare
from .pipeline import ConsumerView, PipelineSchedule, StageState, StageView, Work
from .relayout import RelayoutError
from .relayout import relayout as relayout_access
from .swizzle import (
    IDENTITY,
    Pattern,
    PatternAccess,
    Swizzle,
    SwizzleUnit,
    TileLayout,
    analyze_pattern,
)
from .trace_schedule import schedule, synthetic_trace

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


__all__ = [
    "IDENTITY",
    "MODELS",
    "NCU_EXTRA_METRICS",
    "NCU_METRICS",
    "N_BANKS",
    "SECTOR_BYTES",
    "SIMT_LEVELS",
    "STAGING_COLS",
    "WARPGROUP",
    "BankReport",
    "ColumnExpression",
    "ComparisonRow",
    "ConsumerView",
    "ExpressionError",
    "LevelModel",
    "NcuKernelRow",
    "Op",
    "Pattern",
    "PatternAccess",
    "PipelineSchedule",
    "PromoteOp",
    "RelayoutError",
    "SectorReport",
    "SharedTotals",
    "StageState",
    "StageView",
    "Swizzle",
    "SwizzleUnit",
    "TileLayout",
    "WarpAccess",
    "WarpSpecialized",
    "WgmmaOp",
    "Work",
    "analyze_pattern",
    "bank_cells",
    "compare",
    "first_swizzled_level",
    "lanes_per_phase",
    "model_for",
    "parse_column_expression",
    "relayout_access",
    "schedule",
    "synthetic_trace",
    "totals",
    "wavefront_index",
]

"""Access models of the ladder's levels (pure numpy, no Qt, no CuPy).

``model_for(level_id)`` gives a level's :class:`LevelModel`; ``banks``, ``coalescing``
and ``swizzle`` hold the shared math.
"""

from __future__ import annotations

from ..ladder import registry
from .fp8_deep import Fp8Deep
from .hopper import WgmmaStreamK, WgmmaTma
from .hopper_fp8 import Fp8BlockScaled, Fp8StreamK
from .level_model import LevelModel, SharedTotals
from .mma_sync import MmaPersistent, MmaSync, MmaTma
from .register_blocking import Register2D, Vectorized
from .smem_tiles import DoubleBuffer, SmemPadded, SmemTiled
from .swizzle import IDENTITY
from .thread_per_element import Coalesced, Naive
from .warp_tiling import CpAsync, CpAsyncInterior, WarpTiling
from .wmma import Wmma

MODELS: dict[str, type[LevelModel]] = {
    cls.level_id: cls
    for cls in (Naive, Coalesced, SmemTiled, SmemPadded, DoubleBuffer, Register2D,
                Vectorized, WarpTiling, CpAsync, CpAsyncInterior, Wmma,
                MmaSync, MmaPersistent, MmaTma, WgmmaTma, WgmmaStreamK, Fp8BlockScaled,
                Fp8StreamK, Fp8Deep)
}


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
    if level_id not in MODELS:
        raise KeyError(f"no access model for level {level_id!r}; models exist for "
                       f"{', '.join(MODELS)}")
    level = registry.BY_ID.get(level_id)
    if params and level is not None:
        level.with_params(params)  # ValueError "<level>: <which rule>" where one breaks
    return MODELS[level_id](params)


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

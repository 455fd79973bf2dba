"""The levels a session knows: from the recording's catalog, else from this copy's registry.

A recording carries the registry as its runner saw it (the header's ``catalog``), so a
replay can show a level that this copy of gemmscope no longer has. Live sessions carry it
too; the registry of this copy is only the fallback for headers without one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...kernels.ladder import arch as arch_limits
from ...kernels.ladder import registry


@dataclass(frozen=True, slots=True)
class LevelInfo:
    id: str
    title: str
    adds: str
    precision: str
    kind: str = "level"  # "level" or "reference"
    order: int = 0
    params: dict[str, int] = field(default_factory=dict)
    block: tuple[int, ...] = ()
    tile: tuple[int, ...] = ()
    follows: str = ""
    notes: str = ""
    archs: tuple[str, ...] = ()  # the architectures it claims (kernels/ladder/arch.py)
    arch_need: str = ""  # "sm_80+", "sm_90a only (Hopper)"; "" in older recordings

    @property
    def is_reference(self) -> bool:
        return self.kind == "reference"

    @property
    def name(self) -> str:
        """How pictures, captions and reports name it: a ladder level by its id (the
        short name the bars and the table show), a reference by its title ("cuBLAS FP32
        (no TF32)", never the id ``cublas_fp32``)."""
        return self.title if self.is_reference else self.id

    def params_text(self) -> str:
        parts = [f"{k}={v}" for k, v in self.params.items()]
        if self.block:
            parts.append("block " + "×".join(str(b) for b in self.block))
        if self.tile:
            parts.append("tile " + "×".join(str(b) for b in self.tile))
        return ", ".join(parts) if parts else "no tile parameters"


MAX_TEXT = 4000  # a catalog text longer than this is cut: a recording is data


def _text(value: Any, default: str = "") -> str:
    text = value if isinstance(value, str) else default
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _ints(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or len(value) > 8:
        return ()
    return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))


def level_from_entry(entry: dict[str, Any], order: int) -> LevelInfo:
    """One catalog entry; a field of the wrong type reads as absent (the recording is data:
    what it says is shown, what it garbles is left out, nothing crashes)."""
    params = entry.get("params")
    level_id = _text(entry.get("id"))
    return LevelInfo(
        id=level_id,
        title=_text(entry.get("title"), level_id) or level_id,
        adds=_text(entry.get("adds")),
        precision=_text(entry.get("precision"), "?") or "?",
        kind="reference" if entry.get("kind") == "reference" else "level",
        order=_int(entry.get("order"), order),
        params={str(k)[:64]: v for k, v in params.items()
                if isinstance(v, int) and not isinstance(v, bool)}
        if isinstance(params, dict) else {},
        block=_ints(entry.get("block")),
        tile=_ints(entry.get("tile")),
        follows=_text(entry.get("follows")),
        notes=_text(entry.get("notes")),
        archs=tuple(str(a)[:16] for a in entry.get("archs") or () if isinstance(a, str))
        if isinstance(entry.get("archs"), list) else (),
        arch_need=_text(entry.get("arch_need")),
    )


def catalog_from_header(header: dict[str, Any] | None) -> list[LevelInfo]:
    """Levels in ladder order: the header's catalog when it has one, else the registry.
    Entries without a string id, and later entries repeating an id, are left out."""
    entries = None
    if header is not None and isinstance(header.get("catalog"), list):
        entries = [e for e in header["catalog"]
                   if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"]]
    if not entries:
        entries = registry.catalog()
    levels: dict[str, LevelInfo] = {}
    for i, entry in enumerate(entries):
        level = level_from_entry(entry, i)
        levels.setdefault(level.id, level)
    return sorted(levels.values(), key=lambda lv: lv.order)


def cannot_run_here(level: LevelInfo, cc: str | None) -> str | None:
    """Why a GPU of compute capability ``cc`` cannot run the level (None: it can, or the
    recording does not say what the level needs)."""
    if cc is None or not level.archs or arch_limits.runs_on(level.archs, cc):
        return None
    return (f"needs {level.arch_need or ', '.join(level.archs)}; this GPU is "
            f"{arch_limits.device_arch(cc)}: skipped by ladders and sweeps")

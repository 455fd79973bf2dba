"""The levels a session knows: from the recording's catalog, else from this copy's registry.

A recording carries the registry as its runner saw it (the header's ``catalog``), so a
replay can show a level that this copy of gemmscope no longer has. Live sessions carry it
too; the registry of this copy is only the fallback for headers without one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gemmscope.kernels import registry


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

    @property
    def is_reference(self) -> bool:
        return self.kind == "reference"

    def params_text(self) -> str:
        parts = [f"{k}={v}" for k, v in self.params.items()]
        if self.block:
            parts.append("block " + "×".join(str(b) for b in self.block))
        if self.tile:
            parts.append("tile " + "×".join(str(b) for b in self.tile))
        return ", ".join(parts) if parts else "no tile parameters"


def level_from_entry(entry: dict[str, Any], order: int) -> LevelInfo:
    """A catalog entry as read (protocol.validate_event set fields of a wrong type to
    null); what is missing takes a default."""
    params = entry.get("params")
    given = entry.get("order")
    return LevelInfo(
        id=str(entry["id"]),
        title=str(entry.get("title") or entry["id"]),
        adds=str(entry.get("adds") or ""),
        precision=str(entry.get("precision") or "?"),
        kind=str(entry.get("kind") or "level"),
        order=given if isinstance(given, int) and not isinstance(given, bool) else order,
        params={str(k): v for k, v in params.items()} if isinstance(params, dict) else {},
        block=_ints(entry.get("block")),
        tile=_ints(entry.get("tile")),
        follows=str(entry.get("follows") or ""),
        notes=str(entry.get("notes") or ""),
    )


def _ints(value: Any) -> tuple[int, ...]:
    return tuple(v for v in value if isinstance(v, int)) if isinstance(value, list) else ()


def catalog_from_header(header: dict[str, Any] | None) -> list[LevelInfo]:
    """Levels in ladder order: the header's catalog when it has one, else the registry."""
    entries = None
    if header is not None and isinstance(header.get("catalog"), list):
        entries = [e for e in header["catalog"] if isinstance(e, dict) and "id" in e]
    if not entries:
        entries = registry.catalog()
    levels = [level_from_entry(e, i) for i, e in enumerate(entries)]
    return sorted(levels, key=lambda lv: lv.order)


def reference_id(precision: str) -> str:
    """The cuBLAS reference a percentage of this precision compares against."""
    try:
        return registry.REFERENCE_FOR[registry.Precision(precision)]
    except ValueError:
        return f"cublas_{precision}"

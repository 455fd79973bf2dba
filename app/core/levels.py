"""The levels a session knows: from the recording's catalog, else from this copy's registry.

A recording carries the registry as its runner saw it (the header's ``catalog``), so a
replay can show a level that this copy of gemmscope no longer has. Live sessions carry it
too; the registry of this copy is only the fallback for headers without one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import msgspec

from ...kernels import ladder
from ...kernels.protocol import CatalogEntry, Kernel, Session


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
    user: str | None = None  # a user's kernel: the file it came from (a ``kernel`` event)

    @property
    def is_reference(self) -> bool:
        return self.kind == "reference"

    @property
    def is_user(self) -> bool:
        return self.user is not None

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
MAX_DIMS = 8  # of a block or tile
MAX_ARCHS = 16  # architectures a level claims


def _text(value: str | None, default: str = "") -> str:
    text = value if value is not None else default
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def level_from_entry(entry: CatalogEntry, order: int) -> LevelInfo:
    """One catalog entry (a field the recording garbled reads as absent: the decoder saw
    to that); texts are cut to MAX_TEXT, parameter names to 64 characters."""
    level_id = _text(entry.id)
    return LevelInfo(
        id=level_id,
        title=_text(entry.title, level_id) or level_id,
        adds=_text(entry.adds),
        precision=_text(entry.precision, "?") or "?",
        kind="reference" if entry.kind == "reference" else "level",
        order=entry.order if entry.order is not None else order,
        params={k[:64]: v for k, v in (entry.params or {}).items()},
        block=tuple(entry.block or ())[:MAX_DIMS] if len(entry.block or ()) <= MAX_DIMS
        else (),
        tile=tuple(entry.tile or ())[:MAX_DIMS] if len(entry.tile or ()) <= MAX_DIMS else (),
        follows=_text(entry.follows),
        notes=_text(entry.notes),
        user=_text(entry.user)[:200] or None,
        archs=tuple(a[:16] for a in (entry.archs or ())[:MAX_ARCHS]),
        arch_need=_text(entry.arch_need)[:200],
    )


def join_user_kernel(levels: list[LevelInfo], event: Kernel) -> list[LevelInfo]:
    """The levels with the user's kernel of a ``kernel`` event after the ladder (replacing
    an earlier entry of the same id: an edited source), as a level, never a reference."""
    if event.catalog is None or not event.level:
        return levels
    kept = [lv for lv in levels if lv.id != event.level]
    order = max((lv.order for lv in kept), default=0) + 1
    entry = msgspec.structs.replace(event.catalog, id=event.level, kind="level",
                                    user=event.file or event.level)
    return [*kept, replace(level_from_entry(entry, order), order=order)]


def catalog_from_header(header: Session | None) -> list[LevelInfo]:
    """Levels in ladder order: the header's catalog when it has one, else the registry.
    Entries with an empty id, and later entries repeating an id, are left out."""
    entries = [e for e in header.catalog if e.id] if header is not None and header.catalog \
        else []
    if not entries:
        entries = registry_catalog()
    levels: dict[str, LevelInfo] = {}
    for i, entry in enumerate(entries):
        level = level_from_entry(entry, i)
        levels.setdefault(level.id, level)
    return sorted(levels.values(), key=lambda lv: lv.order)


def join_catalog(levels: list[LevelInfo], header: Session | None) -> list[LevelInfo]:
    """The levels as a later runner's catalog describes them, with the levels it adds.

    Each level the later catalog names takes that entry (its parameters, block, tile and
    notes: a result without parameters ran that runner's own, which ``record --update``
    may have changed since the file's first header) at its place in the ladder. A level
    the later catalog adds (one added to the ladder after the file was first made, then
    appended with ``record --append -l NEW``) joins in that catalog's order; one it lacks
    (a user's kernel) stays after. The same list where nothing changes."""
    if header is None or not header.catalog:
        return levels
    later = catalog_from_header(header)
    by_id = {lv.id: lv for lv in later}
    known = {lv.id: lv for lv in levels}

    def updated(old: LevelInfo) -> LevelInfo:
        new = by_id.get(old.id)
        return old if new is None else replace(new, order=old.order, user=old.user)

    if all(lv.id in known for lv in later):
        same = [updated(lv) for lv in levels]
        return levels if same == levels else same
    ids = set(by_id)
    merged = [updated(known[lv.id]) if lv.id in known else lv for lv in later] + \
        [lv for lv in levels if lv.id not in ids]
    return [replace(lv, order=i) for i, lv in enumerate(merged)]


@functools.cache
def registry_catalog() -> list[CatalogEntry]:
    """This copy's registry as catalog entries (for headers without a catalog)."""
    return msgspec.convert(ladder.catalog(), list[CatalogEntry])


def cannot_run_here(level: LevelInfo, cc: str | None) -> str | None:
    """Why a GPU of compute capability ``cc`` cannot run the level (None: it can, or the
    recording does not say what the level needs)."""
    if cc is None or not level.archs or ladder.runs_on(level.archs, cc):
        return None
    return (f"needs {level.arch_need or ', '.join(level.archs)}; this GPU is "
            f"{ladder.device_arch(cc)}: skipped by ladders and sweeps")

"""Which build the Code tab shows for a level: its latest run's; or, where the person
chose it and the session has it, the one Nsight Compute profiled (a level that picks its
parameters per shape was profiled at one shape and last run at another); or, for a
reference or a report's kernel with no build of its own, its library kernel as ncu saw
it. And the level its diff is against: the one before it in the ladder."""

from __future__ import annotations

import msgspec

from ...kernels import protocol as rec
from . import library_build, source_heat
from .store import SessionStore


def content(event: rec.Build | None) -> rec.Build | None:
    """What the view shows of a build event: all of it but when and by which run it
    was sent (a restart's copy of a build shows the same)."""
    return None if event is None else msgspec.structs.replace(event, t=0.0, id=None)


def library_kernel(store: SessionStore, level_id: str | None) -> rec.LibraryKernel | None:
    """The level's library kernel (a reference's, or a report's), where it has no build
    of its own; None otherwise."""
    if level_id is None or store.build_for(level_id) is not None:
        return None
    return store.library_kernel(level_id)


def build_shown(store: SessionStore, level_id: str, profiled: bool,
                library: rec.LibraryKernel | None) -> rec.Build | None:
    """The build shown for a level: the one ncu profiled where ``profiled`` (the
    person's choice) and the session has it, else its latest run's, else ``library``'s
    kernel as a build."""
    if profiled:
        found = source_heat.profiled_build(store.source_counters.get(level_id),
                                           store.builds_of(level_id))
        if found is not None:
            return found
    found = store.build_for(level_id)
    if found is None and library is not None:  # a reference's kernel, as ncu saw it
        return library_build.as_build(library)
    return found


def showing_profiled(store: SessionStore, level_id: str | None,
                     build: rec.Build | None) -> bool:
    """Whether ``build``, shown for the level, is the one ncu profiled, not the latest
    run's."""
    return (level_id is not None and build is not None
            and library_kernel(store, level_id) is None
            and build is not store.build_for(level_id))


def switch_text(store: SessionStore, level_id: str | None, build: rec.Build | None,
                counters: rec.SourceCounters | None) -> str | None:
    """The heat bar's switch: to the build ncu profiled where the shown one is another
    instantiation and the session has that build, back to the latest run's while the
    profiled one is shown; None: no switch."""
    if level_id is None or counters is None:
        return None
    if showing_profiled(store, level_id, build):
        differ = source_heat.other_instantiation(counters, store.build_for(level_id))
        return "Show the latest run's build" + (f" ({differ[1]})" if differ else "")
    differ = source_heat.other_instantiation(counters, build)
    if differ is None or source_heat.profiled_build(
            counters, store.builds_of(level_id)) is None:
        return None
    return f"Show the profiled build ({differ[0]})"


def previous_level(store: SessionStore, level_id: str | None) -> str | None:
    """The level before this one in the catalog's ladder order."""
    ids = [lv.id for lv in store.ladder_levels()]
    if level_id not in ids:
        return None
    i = ids.index(level_id)
    return ids[i - 1] if i > 0 else None

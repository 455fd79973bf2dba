"""Runs a GPU cannot do, left out of a plan before it is sent: a ladder or sweep on an
L4 skips the Hopper-only levels with a line each, never an error (the archs each level
claims: kernels/ladder/arch.py, as the session header's catalog says them). Used by the
CLI's bench and record and by the app's run controls."""

from __future__ import annotations

from collections.abc import Callable

from ..ladder import arch as arch_limits
from ..ladder import registry
from ..ladder.level import Library
from ..protocol import records as rec
from ..protocol.plan import RunRequest

# libraries a runner may lack, whose references it then leaves out of its catalog
OPTIONAL_LIBRARIES = frozenset({Library.DEEPGEMM})


def runnable_here(header: rec.Session | None, runs: list[RunRequest],
                  say: Callable[[str], object]) -> list[RunRequest]:
    """The runs whose level every GPU of the session can run, by the archs the header's
    catalog claims (kernels/ladder/arch.py); the others are skipped with a line each
    (a ladder or sweep on an L4 skips the Hopper levels: no error, no failed exit)."""
    if header is None:
        return runs
    catalog = header.catalog or []
    skipped: dict[str, str] = {}
    for entry in header.gpus():
        for level_id, why in arch_limits.cannot_run([r.level for r in runs], catalog,
                                                    entry.cc).items():
            skipped.setdefault(level_id, why)
    # a reference the runner left out of its catalog (its library is not importable
    # there: DeepGEMM) is not listed, so not run; a recording older than the catalog
    # (none) leaves every run to the runner
    if catalog:
        listed = {e.id for e in catalog}
        for r in runs:
            if r.level not in listed and r.level in registry.BY_ID \
                    and registry.BY_ID[r.level].library in OPTIONAL_LIBRARIES:
                skipped.setdefault(r.level, f"{r.level}: the runner cannot import its "
                                            f"library ({registry.BY_ID[r.level].library})")
    for why in skipped.values():
        say(f"skipped: {why}\n")
    return [r for r in runs if r.level not in skipped]

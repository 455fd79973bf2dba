"""The ``--levels a,b`` argument the benchmark scripts share (not a benchmark: the
underscore keeps it out of the smoke test's list): comma-separated level ids, each checked
when the arguments are parsed, against the registry or the few levels a script can run,
so that a mistyped id is refused by argparse in one line (exit 2) instead of surfacing as
a traceback from inside a run, or being skipped without a word."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable


def level_ids(choices: Iterable[str] | None = None) -> Callable[[str], list[str]]:
    """An argparse ``type``: the ids in the text, in order, blanks dropped; an id outside
    ``choices`` (every level and reference of the registry where None) is refused."""
    def parse(text: str) -> list[str]:
        if choices is None:
            from gemmscope.kernels.ladder import registry

            known = [lv.id for lv in registry.ladder() + registry.references()]
        else:
            known = list(choices)
        ids = [s.strip() for s in text.split(",") if s.strip()]
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"no level {', '.join(map(repr, unknown))} here; known: {', '.join(known)}")
        return ids

    return parse
